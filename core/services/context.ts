/**
 * composeContext (spec §4): the replay of the newest active summary and, for workers, the parent's
 * identity and (same project only) the parent's summary. The parent lookup never fails a turn.
 */
import { buildSections, renderBlock, type ContextSection, type ParentContext } from "../domain/context-block.js";
import type { ActiveView, ProcessKey, ProcessState } from "../ports/store.js";
import { newestSummary } from "./compaction.js";
import type { CoreDeps } from "./deps.js";
import type { HistorySearch } from "./history-search.js";

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

export const RECALL_HEADING = "Recalled From History";
/** Archived messages recalled for a query, and the characters kept of each. */
const RECALL_LIMIT = 3;
const RECALL_CHARS = 600;

/**
 * Archived originals that match the turn's query (the summary may have lost the detail). Active
 * messages are already in the prompt, so only archived hits count. A dynamic section: it goes
 * after the cache breakpoint. Search trouble skips the section; the turn still succeeds.
 */
export async function recallSection(
  deps: CoreDeps & { history?: HistorySearch },
  key: ProcessKey,
  query: string | undefined,
): Promise<ContextSection | null> {
  if (!query?.trim() || !deps.history) return null;
  try {
    const { items } = await deps.history.search(deps, key, { q: query, limit: RECALL_LIMIT * 4 });
    const archived = items.filter((i) => i.message.archivedInMemoryId !== null).slice(0, RECALL_LIMIT);
    if (archived.length === 0) return null;
    const lines = archived.map(({ message: m }) => {
      const text = m.content.length > RECALL_CHARS ? `${m.content.slice(0, RECALL_CHARS)}…` : m.content;
      return `- [${m.createdAt}] ${m.role}: ${text.replace(/\s+/g, " ")}`;
    });
    return { name: RECALL_HEADING, content: lines.join("\n"), cache: "dynamic" };
  } catch (e) {
    deps.log.warn("history recall skipped", { processId: key.processId, error: String(e) });
    return null;
  }
}

/**
 * The memory block: the newest summary, the parent context (workers), and with a `query` the
 * archived messages that match it.
 */
export async function composeContext(
  deps: CoreDeps & { history?: HistorySearch },
  key: ProcessKey,
  view: ActiveView,
  options: { query?: string | undefined } = {},
): Promise<ComposedContext> {
  const [parent, recall] = await Promise.all([
    parentContext(deps, key.tenantId, view.state),
    recallSection(deps, key, options.query),
  ]);
  const sections = buildSections({ summary: newestSummary(view)?.content ?? null, parent, extra: recall ? [recall] : [] });
  return { ...renderBlock(sections), sections };
}
