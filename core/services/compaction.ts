/**
 * Compaction: the sliding window (compactIfNeeded, spec §3.1) and the range path (compactRange,
 * §3.2) share one fold-and-commit routine with the commit protocol of the architecture: lease,
 * summarize, one transaction, roll forward. A failed summary writes a FAILED row and nothing else.
 */
import { contextWindowFor } from "../domain/model-windows.js";
import { invalid, notFound } from "../domain/errors.js";
import type { CompactionModeName, CompactionResult, Memory, Message } from "../domain/model.js";
import { modeForRatio, promptTokens, type PromptSize } from "../domain/mode.js";
import { chunkBySourceChars, foldOldestUntil, selectForCompaction, toolGroups } from "../domain/selector.js";
import { effectiveStrength } from "../domain/strength.js";
import { estimateTokens, messageTokens } from "../domain/tokens.js";
import { summarizerInputCap, type Tunables } from "../domain/tunables.js";
import type { CompactionMetricMode } from "../ports/metrics.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import type { SummarizerUsage } from "../ports/summarizer.js";
import type { ServiceDeps } from "./deps.js";

export const MEMORY_SOURCE = "vancetope.memory";

export interface CompactionRequest {
  model: { provider?: string; name?: string; contextWindow?: number };
  prompt?: PromptSize;
  force?: Exclude<CompactionModeName, "NONE">;
  instructions?: string;
}

export interface RangeRequest {
  from: string;
  to: string;
  topicLabel: string;
}

export interface RangeResult {
  memoryId: string | null;
  compactedMessages: number;
  markerMessageId: string | null;
  reason?: string;
}

/** The newest active OK summary: the one the replay shows (two only briefly, after a race). */
export function newestSummary(view: Pick<ActiveView, "summaries">): Memory | null {
  const ok = view.summaries.filter((s) => s.status === "OK");
  return ok.length ? ok.reduce((a, b) => (b.id > a.id ? b : a)) : null;
}

/** Tokens the replay costs: the newest summary plus every active message (estimated at append). */
export function replayTokens(view: Pick<ActiveView, "summaries" | "messages">): number {
  return (newestSummary(view)?.tokens ?? 0) + view.messages.reduce((n, m) => n + m.tokens, 0);
}

export function resolveContextWindow(model: CompactionRequest["model"]): number {
  const window = model.contextWindow ?? (model.name ? contextWindowFor(model.name) : undefined);
  if (!window) {
    throw invalid(
      "model.context_window_required",
      model.name
        ? `model '${model.name}' is not known to the service: send model.contextWindow`
        : "send model.name of a known model or model.contextWindow",
      { fields: ["body.model.contextWindow"] },
    );
  }
  return window;
}

/** Reads the active view, finishing a pending roll-forward first so later steps see settled state. */
export async function settledView(deps: ServiceDeps, key: ProcessKey, view?: ActiveView): Promise<ActiveView> {
  let current = view ?? (await deps.store.activeView(key));
  if (!current) throw notFound("process", key.processId);
  // Loop: another compaction may commit (and leave its own pending archive) while we roll forward.
  for (let rounds = 0; current.state.pendingArchive; rounds++) {
    if (rounds >= 5) throw new Error(`process ${key.processId}: pending archive did not settle`);
    await deps.store.finishPendingArchive(key, current.state.pendingArchive);
    current = await deps.store.activeView(key);
    if (!current) throw notFound("process", key.processId);
  }
  return current;
}

/**
 * Spec §3.1: estimate, pick the mode from the thresholds, select, fold. `options.view` lets the
 * turn path reuse the active view it already read.
 */
export async function compactIfNeeded(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
  options: { view?: ActiveView } = {},
): Promise<CompactionResult & { view: ActiveView }> {
  const contextWindow = resolveContextWindow(request.model);
  const view = await settledView(deps, key, options.view);
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  const own = replayTokens(view);
  const tokensBefore = promptTokens(request.prompt, own).tokens;
  const mode = request.force ?? modeForRatio(tokensBefore / contextWindow, tunables);
  const unchanged = { mode, compacted: false, compactedMessages: 0, tokensBefore, tokensAfter: tokensBefore, view };
  if (mode === "NONE") return unchanged;

  const selection = selectForCompaction(view.messages, mode, tunables);
  if (selection.fold.length === 0) return { ...unchanged, reason: selection.reason ?? "nothing_eligible" };
  // SOFT is optional hygiene: folding a few acknowledgements would cost a summary call and a
  // prompt-cache reset to save nothing, so it waits until the fold outweighs a summary.
  const foldTokens = selection.fold.reduce((n, m) => n + m.tokens, 0);
  if (mode === "SOFT" && !request.force && foldTokens < tunables.summaryMaxTokens) {
    return { ...unchanged, reason: "below_min_saving" };
  }

  const fold =
    tunables.foldTarget > 0 && (mode === "HARD" || mode === "EMERGENCY")
      ? foldOldestUntil(selection.fold, tokensToReachTarget(tunables, contextWindow, own, tokensBefore))
      : selection.fold;

  const outcome = await foldAndCommit(deps, key, view, tunables, {
    fold,
    metricMode: mode.toLowerCase() as CompactionMetricMode,
    eventMode: mode,
    instructions: request.instructions,
    tokensBefore,
  });
  if (!outcome.ok) return { ...unchanged, reason: outcome.reason, ...(outcome.memoryId ? { memoryId: outcome.memoryId } : {}) };
  const tokensAfter = outcome.memory.metadata.tokensAfter ?? tokensBefore;
  return {
    mode,
    compacted: true,
    memoryId: outcome.memory.id,
    compactedMessages: fold.length,
    tokensBefore,
    tokensAfter,
    view: outcome.view,
  };
}

/**
 * Our tokens to fold so that the prompt lands at `foldTarget` of the window, counting the summary
 * that replaces them. The caller's count is converted to our units first.
 */
function tokensToReachTarget(tunables: Tunables, contextWindow: number, own: number, tokensBefore: number): number {
  const toOwn = tokensBefore > 0 ? own / tokensBefore : 1;
  const target = tunables.foldTarget * contextWindow * toOwn;
  return own - target + tunables.summaryMaxTokens;
}

/**
 * Spec §3.2: folds the active messages created in [from, to] (pinned ones stay, and so does a tool
 * group that reaches outside the range), chains the prior summary, and inserts a SYSTEM marker
 * tagged `RECOMPACTION:<topicLabel>` ordered right after the range's last message.
 */
export async function compactRange(deps: ServiceDeps, key: ProcessKey, range: RangeRequest): Promise<RangeResult> {
  if (Date.parse(range.from) > Date.parse(range.to)) {
    throw invalid("range.invalid", "from must not be after to", { fields: ["body.from"] });
  }
  const view = await settledView(deps, key);
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  const fold = selectRange(view.messages, range);
  if (fold.length === 0) return { memoryId: null, compactedMessages: 0, markerMessageId: null, reason: "nothing_in_range" };

  const inRange = view.messages.filter((m) => inWindow(m, range));
  const last = inRange[inRange.length - 1]!;
  const marker: Omit<Message, "tokens"> = {
    // Sorts right after the range's last message and before anything newer (ids are ULID-ordered).
    id: `${last.id}.r`,
    processId: key.processId,
    role: "SYSTEM",
    content: `[compaction] Topic "${range.topicLabel}" was completed; ${fold.length} messages were folded into the conversation summary.`,
    tags: [`${RANGE_MARKER_PREFIX}${range.topicLabel}`, "STRENGTH:strong"],
    createdAt: last.createdAt,
    archivedInMemoryId: null,
  };
  const tokensBefore = replayTokens(view);
  const outcome = await foldAndCommit(deps, key, view, tunables, {
    fold,
    metricMode: "range",
    eventMode: "RANGE",
    topicLabel: range.topicLabel,
    tokensBefore,
    metadata: { recompaction: true, topicLabel: range.topicLabel, rangeFromAt: range.from, rangeToAt: range.to },
    marker: { ...marker, tokens: messageTokens(marker) },
  });
  if (!outcome.ok) {
    return { memoryId: outcome.memoryId ?? null, compactedMessages: 0, markerMessageId: null, reason: outcome.reason };
  }
  return { memoryId: outcome.memory.id, compactedMessages: fold.length, markerMessageId: marker.id };
}

const inWindow = (m: Message, range: RangeRequest) => {
  const t = Date.parse(m.createdAt);
  return t >= Date.parse(range.from) && t <= Date.parse(range.to);
};

export const RANGE_MARKER_PREFIX = "RECOMPACTION:";
const isRangeMarker = (m: Message) => m.tags.some((t) => t.startsWith(RANGE_MARKER_PREFIX));

/**
 * Active, unpinned messages in the window; a tool group with a member outside (or pinned) stays,
 * and so do earlier range markers, which keeps a repeated range compaction a no-op.
 */
export function selectRange(messages: Message[], range: RangeRequest): Message[] {
  const group = toolGroups(messages);
  const stays = new Set<number>();
  messages.forEach((m, i) => {
    if (!inWindow(m, range) || effectiveStrength(m) === "pinned" || isRangeMarker(m)) stays.add(group[i]!);
  });
  return messages.filter((_, i) => !stays.has(group[i]!));
}

interface FoldPlan {
  fold: Message[];
  metricMode: CompactionMetricMode;
  eventMode: string;
  instructions?: string | undefined;
  topicLabel?: string;
  tokensBefore: number;
  metadata?: Partial<Memory["metadata"]>;
  marker?: Message;
}

type FoldOutcome =
  | { ok: true; memory: Memory; view: ActiveView }
  | { ok: false; reason: string; memoryId?: string };

/** Steps 3-6 of the commit protocol. */
async function foldAndCommit(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  tunables: Tunables,
  plan: FoldPlan,
): Promise<FoldOutcome> {
  const owner = deps.ids.token();
  const now = deps.clock.now();
  const lease = await deps.store.acquireLease(key, {
    owner,
    now: now.toISOString(),
    until: new Date(now.getTime() + deps.leaseMs).toISOString(),
    expectedVersion: view.state.version,
  });
  // Another compaction holds the process or just finished: back off instead of paying for a summary.
  if (!lease.ok) return { ok: false, reason: lease.reason === "leased" ? "compaction_in_progress" : "concurrent_compaction" };

  const prior = newestSummary(view);
  let committed = false;
  try {
    const summarizer = await deps.summarizer();
    const summary = await summarizeChunks(deps, summarizer, tunables, plan, prior?.content ?? null);
    const at = deps.clock.now();
    const base = {
      processId: key.processId,
      kind: "ARCHIVED_CHAT" as const,
      sourceRefs: plan.fold.map((m) => m.id),
      createdAt: at.toISOString(),
      supersededAt: null,
    };
    const metadata = {
      compactedMessages: plan.fold.length,
      provider: summarizer.provider,
      model: summarizer.model,
      mode: plan.eventMode,
      summarizerCalls: summary.calls,
      ...(summary.usage ? { usage: summary.usage } : {}),
      ...plan.metadata,
    };
    if (!summary.ok) {
      const failed: Memory = {
        ...base,
        id: deps.ids.memory(at),
        status: "FAILED",
        content: "",
        metadata: { ...metadata, error: summary.error },
        tokens: 0,
      };
      await deps.store.putMemory(key, failed);
      deps.log.warn("compaction failed: summarizer", { processId: key.processId, memoryId: failed.id, error: summary.error });
      return { ok: false, reason: `summarizer_failed: ${summary.error}`, memoryId: failed.id };
    }
    const memory: Memory = {
      ...base,
      id: deps.ids.memory(at),
      status: "OK",
      content: summary.text,
      metadata: {
        ...metadata,
        ...(prior ? { supersededMemoryId: prior.id } : {}),
        tokensBefore: plan.tokensBefore,
      },
      tokens: estimateTokens(summary.text),
    };
    memory.metadata.tokensAfter = tokensAfterFold(view, plan, memory.tokens);
    const commit = await deps.store.commitCompaction(key, {
      leaseOwner: owner,
      expectedVersion: view.state.version,
      memory,
      priorSummaryId: prior?.id ?? null,
      archiveIds: memory.sourceRefs,
      ...(plan.marker ? { marker: plan.marker } : {}),
      at: at.toISOString(),
    });
    if (!commit.ok) {
      deps.log.warn("compaction commit conflict", { processId: key.processId });
      return { ok: false, reason: "commit_conflict" };
    }
    committed = true; // the commit cleared the lease
    if (commit.pendingArchive) await deps.store.finishPendingArchive(key, memory.id);

    deps.metrics.compaction(plan.metricMode, plan.fold.length);
    deps.log.info("compaction ok", {
      processId: key.processId,
      mode: plan.metricMode,
      messagesFolded: plan.fold.length,
      summaryChars: memory.content.length,
      memoryId: memory.id,
    });
    await publishSafely(deps, {
      source: MEMORY_SOURCE,
      detailType: "MemoryCompacted",
      detail: { tenantId: key.tenantId, processId: key.processId, memoryId: memory.id, mode: plan.eventMode, compactedMessages: plan.fold.length },
    });
    const after = await deps.store.activeView(key);
    if (!after) throw notFound("process", key.processId);
    return { ok: true, memory, view: after };
  } finally {
    if (!committed) {
      await deps.store.releaseLease(key, owner).catch((e) => deps.log.warn("lease release failed", { error: String(e) }));
    }
  }
}

/**
 * The prompt size after the fold, in the caller's units: their count (or ours) scaled by how much
 * the replay shrank, since the engine's tokenizer and our estimate may differ.
 */
function tokensAfterFold(view: ActiveView, plan: FoldPlan, summaryTokens: number): number {
  const before = replayTokens(view);
  const folded = new Set(plan.fold.map((m) => m.id));
  const kept = view.messages.reduce((n, m) => n + (folded.has(m.id) ? 0 : m.tokens), 0);
  const after = kept + summaryTokens + (plan.marker?.tokens ?? 0);
  return before > 0 ? Math.round((plan.tokensBefore * after) / before) : after;
}

type ChunkedSummary =
  | { ok: true; text: string; calls: number; usage?: SummarizerUsage }
  | { ok: false; error: string; calls: number; usage?: SummarizerUsage };

/** Folds the selection oldest-first in chunks that fit the summarizer, chaining each result. */
async function summarizeChunks(
  deps: ServiceDeps,
  summarizer: Awaited<ReturnType<ServiceDeps["summarizer"]>>,
  tunables: Tunables,
  plan: FoldPlan,
  priorSummary: string | null,
): Promise<ChunkedSummary> {
  const cap = summarizerInputCap(tunables, summarizer.contextWindow, summarizer.maxOutputTokens);
  const chunks = chunkBySourceChars(plan.fold, cap);
  let running = priorSummary;
  let calls = 0;
  let usage: SummarizerUsage | undefined;
  for (const chunk of chunks) {
    calls++;
    let outcome;
    try {
      outcome = await summarizer.summarize({
        priorSummary: running,
        messages: chunk.source.map((m) => ({
          id: m.id,
          role: m.role,
          content: m.content,
          createdAt: m.createdAt,
          ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
          ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
        })),
        ...(plan.instructions ? { instructions: plan.instructions } : {}),
        ...(plan.topicLabel ? { topicLabel: plan.topicLabel } : {}),
      });
    } catch (e) {
      // The port promises not to throw; an adapter bug must still not leave state behind.
      outcome = { ok: false as const, error: e instanceof Error ? e.message : String(e) };
    }
    if (outcome.usage) {
      usage = {
        inputTokens: (usage?.inputTokens ?? 0) + (outcome.usage.inputTokens ?? 0),
        outputTokens: (usage?.outputTokens ?? 0) + (outcome.usage.outputTokens ?? 0),
      };
    }
    if (!outcome.ok) return { ok: false, error: outcome.error, calls, ...(usage ? { usage } : {}) };
    running = outcome.summary;
  }
  if (running === null || running.trim() === "") return { ok: false, error: "empty summary", calls };
  return { ok: true, text: running, calls, ...(usage ? { usage } : {}) };
}

/** Events are notifications: a publish failure is logged, it never undoes a committed compaction. */
export async function publishSafely(deps: ServiceDeps, event: Parameters<ServiceDeps["events"]["publish"]>[0]) {
  try {
    await deps.events.publish(event);
  } catch (e) {
    deps.log.error("event publish failed", { detailType: event.detailType, error: String(e) });
  }
}
