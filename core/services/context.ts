/**
 * composeContext (docs/turns.md, "The memory block"): the replay of the newest active summary and, for workers, the parent's
 * identity and (same project only) the parent's summary. The parent lookup never fails a turn.
 */
import { buildSections, renderBlock, type ContextSection, type ParentContext } from "../domain/context-block.js";
import type { ActiveView, ProcessKey, ProcessState } from "../ports/store.js";
import { newestSummary } from "../domain/replay.js";
import type { CoreDeps, HistorySearch, ServiceDeps } from "./deps.js";
import { settledView } from "./compaction/settle.js";
import { recallCandidates, recalledIds, renderRecall, selectRecall, type RecallLine } from "../domain/recall.js";
import { DEFAULT_TUNABLES, type Tunables } from "../domain/tunables.js";
import type { Message } from "../domain/model.js";
import { trimLimit } from "../domain/trim.js";
import type { TunablesResolver } from "./tunables.js";

export interface ComposedContext {
  block: string;
  sections: Array<{ name: string; content: string; cache: "static" | "dynamic" }>;
  /** The prefix of `block` that stays byte-identical until the next compaction. */
  staticBlock: string;
}

/**
 * Parent context (docs/turns.md): identity always; the parent's summary only when the worker's project equals the
 * parent's. A cross-project parent's summary is never read. An orphaned parent or a store error
 * skips the section.
 */
async function parentContext(deps: CoreDeps, tenantId: string, worker: ProcessState): Promise<ParentContext | null> {
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

/**
 * Tokens recall may add to a turn: `recallMaxTokens`, but never so many that the prompt passes
 * the hard threshold (`promptTokens` is the prompt after any compaction of this turn). A trimmed
 * answer is already past it and has a fold on its way: there recall fills the room the trim left
 * below the emergency threshold, so that the messages it left out stay reachable
 * (docs/compaction.md, "What a turn does (background mode)", step 5) and the prompt still stays
 * below that threshold.
 */
export function recallBudget(
  tunables: Pick<Tunables, "recallMaxTokens" | "hardThreshold" | "emergencyThreshold">,
  contextWindow: number,
  promptTokens: number,
  trimmed = false,
): number {
  const ceiling = trimmed ? trimLimit(tunables, contextWindow) : Math.floor(tunables.hardThreshold * contextWindow);
  return Math.max(0, Math.min(tunables.recallMaxTokens, ceiling - promptTokens));
}

/**
 * Archived originals, cleared tool results, and the messages a trimmed answer left out, that
 * match the turn's query (the summary or the placeholder may have lost the detail; the trimmed
 * ones are in no prompt), best first, each cut around its matching passage, within `budgetTokens`
 * (docs/turns.md, "Recall"). Other active messages are already in the prompt, passages the
 * replayed summary already holds are skipped, and so are the messages in `shownIds` (quoted by a
 * recall message still in the prompt). Search trouble recalls nothing; the turn still succeeds.
 */
export async function findRecall(
  deps: CoreDeps & { history?: HistorySearch },
  key: ProcessKey,
  query: string | undefined,
  options: { budgetTokens: number; summary: string | null; outOfPromptIds?: ReadonlySet<string>; shownIds?: ReadonlySet<string> },
): Promise<RecallLine[]> {
  if (!query?.trim() || !deps.history || options.budgetTokens <= 0) return [];
  try {
    const { items } = await deps.history.search(deps, key, { q: query, limit: recallCandidates(options.budgetTokens) });
    // Cleared results and left-out messages are active but out of the prompt too; they are known
    // by the view's ids, since the search index may hold a copy from before the clearing.
    const archived = items
      .filter((i) => i.message.archivedInMemoryId !== null || options.outOfPromptIds?.has(i.message.id))
      .filter((i) => !options.shownIds?.has(i.message.id))
      .map((i) => i.message);
    return selectRecall(archived, { query, budgetTokens: options.budgetTokens, summary: options.summary });
  } catch (e) {
    deps.log.warn("history recall skipped", { processId: key.processId, error: String(e) });
    return [];
  }
}

/** The messages of `view` out of the prompt: cleared results, and those a trimmed `answer` left out. */
export function outOfPromptIds(view: ActiveView, answer?: readonly Pick<Message, "id">[]): Set<string> {
  const inAnswer = answer ? new Set(answer.map((m) => m.id)) : null;
  return new Set(view.messages.filter((m) => m.cleared || (inAnswer !== null && !inAnswer.has(m.id))).map((m) => m.id));
}

/**
 * The memory block: the newest summary, the parent context (workers), and with a `query` the
 * archived messages that match it. `answer`: the messages the turn answers with, when a trim left
 * some of the view's out; recall considers those like archived ones.
 */
export async function composeContext(
  deps: CoreDeps & { history?: HistorySearch; tunables?: TunablesResolver },
  key: ProcessKey,
  view: ActiveView,
  options: { query?: string | undefined; recallTokens?: number; answer?: readonly Pick<Message, "id">[] } = {},
): Promise<ComposedContext> {
  const head = newestSummary(view);
  const summary = head?.content ?? null;
  const budgetTokens = options.query?.trim() ? (options.recallTokens ?? (await recallMaxTokens(deps, key, view))) : 0;
  const [parent, lines] = await Promise.all([
    parentContext(deps, key.tenantId, view.state),
    findRecall(deps, key, options.query, { budgetTokens, summary, outOfPromptIds: outOfPromptIds(view, options.answer), shownIds: recalledIds(view.messages) }),
  ]);
  // A dynamic section: after the cache breakpoint, and it changes what follows it in the prompt.
  const recall: ContextSection[] = lines.length > 0 ? [{ name: RECALL_HEADING, content: renderRecall(lines), cache: "dynamic" }] : [];
  const sections = buildSections({ summary, ledger: head?.metadata.ledger?.text, parent, extra: recall });
  return { ...renderBlock(sections), sections };
}

/** The process's `recallMaxTokens` (the default when settings cannot be read: recall is optional). */
async function recallMaxTokens(deps: CoreDeps & { tunables?: TunablesResolver }, key: ProcessKey, view: ActiveView): Promise<number> {
  if (!deps.tunables) return DEFAULT_TUNABLES.recallMaxTokens;
  try {
    return (await deps.tunables.forProcess(key.tenantId, view.state.process.projectId)).recallMaxTokens;
  } catch (e) {
    deps.log.warn("recall settings unavailable", { processId: key.processId, error: String(e) });
    return DEFAULT_TUNABLES.recallMaxTokens;
  }
}

/**
 * `GET /context`: the memory block of a process as a turn would replay it, after rolling any
 * pending archive forward (docs/api.md). A read: it never compacts.
 */
export async function getContext(deps: ServiceDeps, key: ProcessKey, query?: string): Promise<ComposedContext> {
  return composeContext(deps, key, await settledView(deps, key), { query });
}
