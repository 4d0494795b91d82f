/**
 * composeContext (spec §4): the replay of the newest active summary and, for workers, the parent's
 * identity and (same project only) the parent's summary. The parent lookup never fails a turn.
 */
import { buildSections, renderBlock, type ContextSection, type ParentContext } from "../domain/context-block.js";
import type { ActiveView, ProcessKey, ProcessState } from "../ports/store.js";
import { newestSummary } from "./compaction.js";
import type { CoreDeps } from "./deps.js";

export interface ComposedContext {
  block: string;
  sections: Array<{ name: string; content: string; cache: "static" | "dynamic" }>;
  /** The prefix of `block` that stays byte-identical until the next compaction. */
  staticBlock: string;
}

/**
 * Spec §4.2: identity always; the parent's summary only when the worker's project equals the
 * parent's. A cross-project parent's summary is never read. An orphaned parent or a store error
 * skips the section.
 */
export async function parentContext(deps: CoreDeps, tenantId: string, worker: ProcessState): Promise<ParentContext | null> {
  const parentId = worker.process.parentProcessId;
  if (!parentId) return null;
  try {
    const parentKey = { tenantId, processId: parentId };
    const parent = await deps.store.getProcess(parentKey);
    if (!parent) return null;
    if (parent.process.projectId !== worker.process.projectId || !parent.activeSummaryId) {
      return { parent: parent.process, summary: null };
    }
    const memory = await deps.store.getMemory(parentKey, parent.activeSummaryId);
    return { parent: parent.process, summary: memory && memory.status === "OK" && !memory.supersededAt ? memory.content : null };
  } catch (e) {
    deps.log.warn("parent context skipped", { parentProcessId: parentId, error: String(e) });
    return null;
  }
}

export async function composeContext(
  deps: CoreDeps,
  key: ProcessKey,
  view: ActiveView,
  extra: ContextSection[] = [],
): Promise<ComposedContext> {
  const parent = await parentContext(deps, key.tenantId, view.state);
  const sections = buildSections({ summary: newestSummary(view)?.content ?? null, parent, extra });
  return { ...renderBlock(sections), sections };
}
