/**
 * Compaction: the sliding window (compactIfNeeded, spec §3.1) and the range path (compactRange,
 * §3.2) share one fold-and-commit routine with the commit protocol of the architecture: lease,
 * summarize, one transaction, roll forward. A failed summary writes a FAILED row and nothing else.
 */
import { contextWindowFor } from "../domain/model-windows.js";
import { AppError, invalid, notFound } from "../domain/errors.js";
import { RANGE_MARKER_PREFIX } from "../domain/fields.js";
import type { CompactionModeName, CompactionResult, Memory, Message } from "../domain/model.js";
import { modeForRatio, promptTokens, type PromptSize } from "../domain/mode.js";
import { replayed } from "../domain/replay.js";
import { chunkBySourceChars, foldOldestUntil, selectForCompaction, toolGroups } from "../domain/selector.js";
import { effectiveStrength } from "../domain/strength.js";
import { estimateTokens, messageTokens } from "../domain/tokens.js";
import { summarizerInputCap, type Tunables } from "../domain/tunables.js";
import type { CompactionMetricMode } from "../ports/metrics.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import { checkSummary, retryInstructions, type QualityVerdict } from "../domain/quality-gate.js";
import { carrierText, carries, importantUnits, lossReport, unitKey } from "../domain/salient-units.js";
import type { SummarizeInput, Summarizer, SummarizerUsage, SummarySourceMessage } from "../ports/summarizer.js";
import { clearIfNeeded } from "./clearing.js";
import type { ServiceDeps } from "./deps.js";
import { takeLease } from "./lease.js";
import { tagBeforeFold } from "./strength-tagging.js";

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
export interface FoldOptions {
  /** The lease owner token to use (a caller that may have to abandon the fold passes its own). */
  leaseOwner?: string;
  /** Commit as this queued fold (same id, only while it is still QUEUED): the worker's manual job. */
  queuedFoldId?: string;
}

export async function compactIfNeeded(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
  options: { view?: ActiveView } & FoldOptions = {},
): Promise<CompactionResult & { view: ActiveView }> {
  const contextWindow = resolveContextWindow(request.model);
  let view = await settledView(deps, key, options.view);
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  const tokensBefore = promptTokens(request.prompt, replayTokens(view)).tokens;
  // The cheap tier first: clearing old tool results needs no model call (a forced fold skips it).
  const clearing = request.force
    ? { view, clearedMessages: 0, tokensAfter: tokensBefore }
    : await clearIfNeeded(deps, key, view, tunables, contextWindow, tokensBefore);
  view = clearing.view;
  const own = replayTokens(view);
  const tokensNow = clearing.tokensAfter;
  const mode = request.force ?? modeForRatio(tokensNow / contextWindow, tunables);
  const unchanged = {
    mode,
    compacted: false,
    compactedMessages: 0,
    tokensBefore,
    tokensAfter: tokensNow,
    ...(clearing.clearedMessages > 0 ? { clearedMessages: clearing.clearedMessages } : {}),
    view,
  };
  if (mode === "NONE") return unchanged;

  const tagging = await tagBeforeFold(deps, key, view, tunables, mode);
  view = tagging.view;
  const selection = selectForCompaction(view.messages, mode, tunables);
  if (selection.fold.length === 0) return { ...unchanged, reason: selection.reason ?? "nothing_eligible" };
  // SOFT is optional hygiene: folding a few acknowledgements would cost a summary call and a
  // prompt-cache reset to save nothing, so it waits until the fold holds `softMinFoldTokens`.
  const foldTokens = selection.fold.reduce((n, m) => n + m.tokens, 0);
  if (mode === "SOFT" && !request.force && foldTokens < tunables.softMinFoldTokens) {
    return { ...unchanged, reason: "below_min_saving" };
  }

  const fold =
    tunables.foldTarget > 0 && (mode === "HARD" || mode === "EMERGENCY")
      ? foldOldestUntil(selection.fold, tokensToReachTarget(tunables, contextWindow, own, tokensNow))
      : selection.fold;

  const outcome = await foldAndCommit(deps, key, view, tunables, {
    fold,
    metricMode: mode.toLowerCase() as CompactionMetricMode,
    eventMode: mode,
    instructions: request.instructions,
    tokensBefore: tokensNow,
    ...(tagging.strengthAnalyzer ? { metadata: { strengthAnalyzer: tagging.strengthAnalyzer } } : {}),
    ...(options.leaseOwner ? { owner: options.leaseOwner } : {}),
    ...(options.queuedFoldId ? { memoryId: options.queuedFoldId, fromFold: "QUEUED" as const, producedBy: "worker" as const } : {}),
    // After an undo the same fold waits until the replay grew by the minimum saving; a manual
    // compaction and EMERGENCY (the prompt must never overflow) do not wait (docs/compaction.md).
    ...(request.force || mode === "EMERGENCY" ? {} : { holdCheckTokens: own }),
  });
  if (!outcome.ok) return { ...unchanged, reason: outcome.reason, ...(outcome.memoryId ? { memoryId: outcome.memoryId } : {}) };
  const tokensAfter = outcome.memory.metadata.tokensAfter ?? tokensNow;
  return {
    ...unchanged,
    compacted: true,
    memoryId: outcome.memory.id,
    compactedMessages: fold.length,
    tokensAfter,
    view: outcome.view,
  };
}

/**
 * Our tokens to fold so that the prompt lands at `foldTarget` of the window, counting the summary
 * that replaces them. The caller's count is converted to our units first.
 */
export function tokensToReachTarget(tunables: Tunables, contextWindow: number, own: number, tokensBefore: number): number {
  const toOwn = tokensBefore > 0 ? own / tokensBefore : 1;
  const target = tunables.foldTarget * contextWindow * toOwn;
  return own - target + tunables.summaryMaxTokens;
}

/**
 * Spec §3.2: folds the active messages created in [from, to] (pinned ones stay, and so does a tool
 * group that reaches outside the range), chains the prior summary, and inserts a SYSTEM marker
 * tagged `RECOMPACTION:<topicLabel>` ordered right after the range's last message.
 */
export async function compactRange(
  deps: ServiceDeps,
  key: ProcessKey,
  range: RangeRequest,
  options: Pick<FoldOptions, "queuedFoldId"> = {},
): Promise<RangeResult> {
  if (Date.parse(range.from) > Date.parse(range.to)) {
    throw invalid("range.invalid", "from must not be after to", { fields: ["body.from"] });
  }
  const view = await settledView(deps, key);
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  const fold = selectRange(view.messages, range);
  if (fold.length === 0) return { memoryId: null, compactedMessages: 0, markerMessageId: null, reason: "nothing_in_range" };

  // The marker follows the range's last message that may fold (the triggering turn never does).
  const inRange = view.messages.slice(0, triggeringTurnStart(view.messages)).filter((m) => inWindow(m, range));
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
    metadata: { recompaction: true, topicLabel: range.topicLabel, rangeFromAt: range.from, rangeToAt: range.to, markerMessageId: marker.id },
    marker: { ...marker, tokens: messageTokens(marker) },
    ...(options.queuedFoldId ? { memoryId: options.queuedFoldId, fromFold: "QUEUED" as const, producedBy: "worker" as const } : {}),
  });
  if (!outcome.ok) {
    return { memoryId: outcome.memoryId ?? null, compactedMessages: 0, markerMessageId: null, reason: outcome.reason };
  }
  return { memoryId: outcome.memory.id, compactedMessages: fold.length, markerMessageId: marker.id };
}

/** Index of the newest USER message (where the triggering turn starts); the length when none. */
function triggeringTurnStart(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "USER") return i;
  return messages.length;
}

const inWindow = (m: Message, range: RangeRequest) => {
  const t = Date.parse(m.createdAt);
  return t >= Date.parse(range.from) && t <= Date.parse(range.to);
};

const isRangeMarker = (m: Message) => m.tags.some((t) => t.startsWith(RANGE_MARKER_PREFIX));

/**
 * Active, unpinned messages in the window; a tool group with a member outside (or pinned) stays,
 * and so do earlier range markers, which keeps a repeated range compaction a no-op. Like the
 * sliding window, the range never folds the triggering turn: the newest USER message and
 * everything after it stay, whatever the window says.
 */
export function selectRange(messages: Message[], range: RangeRequest): Message[] {
  const group = toolGroups(messages);
  const turn = triggeringTurnStart(messages);
  const stays = new Set<number>();
  messages.forEach((m, i) => {
    if (i >= turn || !inWindow(m, range) || effectiveStrength(m) === "pinned" || isRangeMarker(m)) stays.add(group[i]!);
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
  owner?: string;
  /** The id of the stored summary (default: a new one) and the fold row it replaces. */
  memoryId?: string;
  fromFold?: "QUEUED";
  producedBy?: "inline" | "worker";
  /** Own replay tokens to check against a revert hold (automatic compactions only). */
  holdCheckTokens?: number;
}

const LEASE_REFUSAL = {
  leased: "compaction_in_progress",
  version_changed: "concurrent_compaction",
  not_found: "concurrent_compaction",
  revert_hold: "reverted_recently",
} as const;

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
  // Whether the summarizer can run at all is known before the lease: if not, the caller gets a
  // reason (a turn still answers 200) and nothing is written.
  const ready = await summarizerFor(deps, key, tunables);
  if (!ready.ok) return { ok: false, reason: ready.reason };
  const { summarizer, inputCap } = ready;

  const { owner, lease } = await takeLease(deps, key, view, {
    ...(plan.owner ? { owner: plan.owner } : {}),
    ...(plan.holdCheckTokens !== undefined ? { replayTokens: plan.holdCheckTokens } : {}),
  });
  // Another compaction holds the process or just finished: back off instead of paying for a summary.
  if (!lease.ok) return { ok: false, reason: LEASE_REFUSAL[lease.reason] };

  const prior = newestSummary(view);
  let committed = false;
  try {
    const started = Date.now();
    const needs = await foldNeeds(deps, key, prior, plan.fold);
    const summary = await summarizeChecked(deps, summarizer, inputCap, tunables, plan, prior?.content ?? null, needs.required);
    const summarizerMs = Date.now() - started;
    deps.metrics.summarizerWallTime(plan.metricMode, summarizerMs);
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
      producedBy: plan.producedBy ?? ("inline" as const),
      summarizerCalls: summary.calls,
      summarizerMs,
      ...(summary.usage ? { usage: summary.usage } : {}),
      ...plan.metadata,
    };
    if (!summary.ok) {
      const failed: Memory = {
        ...base,
        id: deps.ids.memory(at),
        status: "FAILED",
        content: "",
        metadata: { ...metadata, error: summary.error, ...(summary.gate ? { qualityGate: summary.gate } : {}) },
        tokens: 0,
      };
      await deps.store.putMemory(key, failed);
      deps.log.warn("compaction failed: summarizer", { processId: key.processId, memoryId: failed.id, error: summary.error });
      return { ok: false, reason: `summarizer_failed: ${summary.error}`, memoryId: failed.id };
    }
    const fields = summaryFields(needs, plan.fold, summary);
    const memory: Memory = {
      ...base,
      id: plan.memoryId ?? deps.ids.memory(at),
      status: "OK",
      content: fields.content,
      metadata: {
        ...metadata,
        ...(prior ? { supersededMemoryId: prior.id } : {}),
        tokensBefore: plan.tokensBefore,
        loss: fields.loss,
      },
      tokens: fields.tokens,
      citations: fields.citations,
      droppedUnits: fields.droppedUnits,
      ...(fields.keepUnits ? { keepUnits: fields.keepUnits } : {}),
    };
    memory.metadata.tokensAfter = tokensAfterFold(view, plan, memory.tokens);
    const commit = await deps.store.commitCompaction(key, {
      leaseOwner: owner,
      expectedVersion: view.state.version,
      memory,
      priorSummaryId: prior?.id ?? null,
      archiveIds: memory.sourceRefs,
      ...(plan.marker ? { marker: plan.marker } : {}),
      ...(plan.fromFold ? { fromFold: plan.fromFold } : {}),
      at: at.toISOString(),
    });
    if (!commit.ok) {
      deps.log.warn("compaction commit conflict", { processId: key.processId });
      return { ok: false, reason: "commit_conflict" };
    }
    committed = true; // the commit cleared the lease
    const after = await afterCommit(deps, key, memory, { pendingArchive: commit.pendingArchive, metricMode: plan.metricMode });
    return { ok: true, memory, view: after };
  } finally {
    if (!committed) {
      await deps.store.releaseLease(key, owner).catch((e) => deps.log.warn("lease release failed", { error: String(e) }));
    }
  }
}

/**
 * What follows every committed fold, however it was produced: finish the archive roll-forward,
 * count it, log it, announce it (MemoryCompacted says how it was produced), re-read the view.
 */
export async function afterCommit(
  deps: ServiceDeps,
  key: ProcessKey,
  memory: Memory,
  o: { pendingArchive: boolean; metricMode: CompactionMetricMode },
): Promise<ActiveView> {
  if (o.pendingArchive) await deps.store.finishPendingArchive(key, memory.id);
  const folded = memory.sourceRefs.length;
  deps.metrics.compaction(o.metricMode, folded);
  deps.log.info("compaction ok", {
    processId: key.processId,
    mode: o.metricMode,
    messagesFolded: folded,
    summaryChars: memory.content.length,
    memoryId: memory.id,
    producedBy: memory.metadata.producedBy,
  });
  await publishSafely(deps, {
    source: MEMORY_SOURCE,
    detailType: "MemoryCompacted",
    detail: {
      tenantId: key.tenantId,
      processId: key.processId,
      memoryId: memory.id,
      mode: memory.metadata.mode,
      compactedMessages: folded,
      producedBy: memory.metadata.producedBy,
    },
  });
  const after = await deps.store.activeView(key);
  if (!after) throw notFound("process", key.processId);
  return after;
}

/** What a fold's summary needs before it is written: the prior summary in full and the units it must keep. */
export interface FoldNeeds {
  priorDetail: Memory | null;
  required: string[];
}

export async function foldNeeds(deps: ServiceDeps, key: ProcessKey, prior: Memory | null, fold: readonly Message[]): Promise<FoldNeeds> {
  const priorDetail = await priorDetailOf(deps, key, prior);
  return { priorDetail, required: requiredUnits(fold, prior, priorDetail?.keepUnits) };
}

/** The stored parts of a good summary: its text, tokens, loss report, per-line provenance and required units. */
export function summaryFields(needs: FoldNeeds, fold: readonly Message[], summary: Extract<ChunkedSummary, { ok: true }>) {
  const loss = lossReport(sourcesOf(fold), summary.text);
  return {
    content: summary.text,
    tokens: estimateTokens(summary.text),
    loss: { units: loss.units, kept: loss.kept, dropped: loss.dropped.slice(0, LOSS_PREVIEW).map(boundedLoss) },
    citations: provenance(needs.priorDetail, fold, summary),
    droppedUnits: loss.dropped.slice(0, LOSS_STORED).map(boundedLoss),
    ...(needs.required.length > 0 ? { keepUnits: needs.required } : {}),
  };
}

/**
 * The prompt size after the fold, in the caller's units: their count (or ours) scaled by how much
 * the replay shrank, since the engine's tokenizer and our estimate may differ.
 */
export function tokensAfterFold(view: ActiveView, plan: Pick<FoldPlan, "fold" | "marker" | "tokensBefore">, summaryTokens: number): number {
  const before = replayTokens(view);
  const folded = new Set(plan.fold.map((m) => m.id));
  const kept = view.messages.reduce((n, m) => n + (folded.has(m.id) ? 0 : m.tokens), 0);
  const after = kept + summaryTokens + (plan.marker?.tokens ?? 0);
  return before > 0 ? Math.round((plan.tokensBefore * after) / before) : after;
}

export type ChunkedSummary =
  | {
      ok: true;
      text: string;
      calls: number;
      usage?: SummarizerUsage;
      /** Per line of `text`, as the summarizer cited (unchecked). */
      citations?: string[][];
      /** Citations of the lines of earlier chunk outputs, by line text (later chunks may copy them). */
      carried: Map<string, string[]>;
    }
  | { ok: false; error: string; calls: number; usage?: SummarizerUsage; gate?: { check: string; detail?: string; attempts: number } };

/** The dropped units kept in `metadata.loss` (replayed with the view) and in the full list. */
const LOSS_PREVIEW = 20;
const LOSS_STORED = 300;
/** At most this many units of the strong and pinned sources of one fold are required of its summary. */
const REQUIRED_UNITS = 25;
/** At most this many required units in all, with those carried from earlier folds. */
const REQUIRED_UNITS_TOTAL = 40;

/**
 * What the summary must keep: the units of the strong and pinned messages it folds, then those an
 * earlier summary was required to keep and still carries (so they survive every later fold).
 */
function requiredUnits(fold: readonly Message[], prior: Memory | null, priorKeep: readonly string[] | undefined): string[] {
  const own = importantUnits(sourcesOf(fold), REQUIRED_UNITS);
  const carried = prior && priorKeep ? priorKeep.filter((u) => carries(carrierText(prior.content), { key: unitKey(u) })) : [];
  const seen = new Set(own.map(unitKey));
  const out = [...own];
  for (const u of carried) {
    if (out.length >= REQUIRED_UNITS_TOTAL) break;
    if (!seen.has(unitKey(u))) {
      seen.add(unitKey(u));
      out.push(u);
    }
  }
  return out;
}

/**
 * The prior summary as stored in full (its citations and required units live outside the replay
 * index). One read per fold; a failure only loses what they would carry forward.
 */
async function priorDetailOf(deps: ServiceDeps, key: ProcessKey, prior: Memory | null): Promise<Memory | null> {
  if (!prior) return null;
  try {
    return await deps.store.getMemory(key, prior.id);
  } catch (e) {
    deps.log.warn("prior summary detail unavailable", { memoryId: prior.id, error: String(e) });
    return null;
  }
}

const boundedLoss = (u: { text: string; messageIds: string[] }) => ({ text: u.text.slice(0, 200), messageIds: u.messageIds.slice(0, 20) });

const isImportant = (m: Message) => {
  const s = effectiveStrength(m);
  return s === "strong" || s === "pinned";
};

// What the summarizer sees: a cleared result as its placeholder (see summarizeChunks).
const sourcesOf = (fold: readonly Message[]) =>
  fold.map((m) => ({ id: m.id, content: replayed(m).content, important: isImportant(m) }));

function toSource(m: Message): SummarySourceMessage {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    createdAt: m.createdAt,
    ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
    ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
    ...(isImportant(m) ? { important: true } : {}),
  };
}

const addUsage = (a: SummarizerUsage | undefined, b: SummarizerUsage | undefined): SummarizerUsage | undefined =>
  b
    ? { inputTokens: (a?.inputTokens ?? 0) + (b.inputTokens ?? 0), outputTokens: (a?.outputTokens ?? 0) + (b.outputTokens ?? 0) }
    : a;

async function callSummarizer(summarizer: Summarizer, input: SummarizeInput) {
  try {
    return await summarizer.summarize(input);
  } catch (e) {
    // The port promises not to throw; an adapter bug must still not leave state behind.
    return { ok: false as const, error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * Summarizes, then runs the quality gate (docs/compaction.md): a failing summary is retried once
 * (the last chunk, with what failed and the missing units named); a second failure is a FAILED
 * row with `quality_gate: <check>`.
 */
export async function summarizeChecked(
  deps: ServiceDeps,
  summarizer: Summarizer,
  inputCap: number,
  tunables: Tunables,
  plan: Pick<FoldPlan, "fold" | "instructions" | "topicLabel">,
  priorSummary: string | null,
  required: string[],
): Promise<ChunkedSummary> {
  const first = await summarizeChunks(summarizer, inputCap, tunables, plan, priorSummary, required);
  if (!first.ok) return first;
  const maxTokens = tunables.summaryMaxTokens;
  const verdict = checkSummary(first.result.text, { maxTokens, required });
  if (verdict.ok) return first.result;

  deps.log.warn("summary failed the quality gate, retrying once", { check: verdict.check, detail: verdict.detail });
  const retryNote = retryInstructions(verdict, maxTokens);
  const input: SummarizeInput = {
    ...first.lastInput,
    instructions: [first.lastInput.instructions, retryNote].filter(Boolean).join("\n\n"),
    mustKeep: [...new Set([...(first.lastInput.mustKeep ?? []), ...(verdict.missing ?? [])])],
  };
  const again = await callSummarizer(summarizer, input);
  const calls = first.result.calls + 1;
  const usage = addUsage(first.result.usage, again.usage);
  if (!again.ok) return { ok: false, error: again.error, calls, ...(usage ? { usage } : {}) };
  const second: QualityVerdict = checkSummary(again.summary, { maxTokens, required });
  if (!second.ok) {
    return {
      ok: false,
      error: `quality_gate: ${second.check}`,
      calls,
      ...(usage ? { usage } : {}),
      gate: { check: second.check, detail: second.detail.slice(0, 300), attempts: 2 },
    };
  }
  return {
    ok: true,
    text: again.summary,
    calls,
    ...(usage ? { usage } : {}),
    ...(again.citations ? { citations: again.citations } : {}),
    carried: first.result.carried,
  };
}

type Ready = { ok: true; summarizer: Summarizer; inputCap: number } | { ok: false; reason: string };

/**
 * The summarizer and the input cap of one call for these tunables. A summarizer that cannot be
 * built (configuration) or whose window the tunables do not fit is a reason, logged, not a throw:
 * stored settings are checked against the window when saved, so this is a changed deployment.
 */
export async function summarizerFor(deps: ServiceDeps, key: ProcessKey, tunables: Tunables): Promise<Ready> {
  let summarizer: Summarizer;
  try {
    summarizer = await deps.summarizer();
  } catch (e) {
    deps.log.error("compaction skipped: no summarizer", { processId: key.processId, error: String(e) });
    return { ok: false, reason: "summarizer_unavailable" };
  }
  try {
    return { ok: true, summarizer, inputCap: summarizerInputCap(tunables, summarizer.contextWindow, tunables.summaryMaxTokens) };
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    deps.log.error("compaction skipped: summarizer window too small", { processId: key.processId, error: e.message });
    return { ok: false, reason: `summarizer_window_too_small: ${e.message}` };
  }
}

/** What the merge call is told about its input (docs/compaction.md, "Summarizing"). */
export const MERGE_INSTRUCTIONS =
  "The messages to fold are summaries of consecutive parts of the conversation, oldest first. Merge them with the prior summary into one summary.";

/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  });
  await Promise.all(lanes);
  return results;
}

type ChunkRun = { ok: true; result: Extract<ChunkedSummary, { ok: true }>; lastInput: SummarizeInput } | Extract<ChunkedSummary, { ok: false }>;

/**
 * Folds the selection into one summary. One chunk: one call with the prior summary. More chunks:
 * with `summarizerConcurrency` 1 they are chained (call k+1 gets call k's output); above 1 they are
 * summarized in parallel (at most that many at once, without the prior summary) and one more call
 * merges the partial summaries with the prior one, so the wall time is about two calls, not n.
 */
async function summarizeChunks(
  summarizer: Summarizer,
  cap: number,
  tunables: Tunables,
  plan: Pick<FoldPlan, "fold" | "instructions" | "topicLabel">,
  priorSummary: string | null,
  mustKeep: string[],
): Promise<ChunkRun> {
  // A cleared result is summarized as its placeholder: the model had stopped seeing its content,
  // and the placeholder keeps the message id through which the full text can still be fetched.
  const chunks = chunkBySourceChars(plan.fold.map(replayed), cap);
  if (chunks.length > 1 && tunables.summarizerConcurrency > 1) {
    return summarizeInParallel(summarizer, tunables, plan, priorSummary, mustKeep, cap, chunks.map((c) => c.source.map(toSource)));
  }
  let running = priorSummary;
  let calls = 0;
  let usage: SummarizerUsage | undefined;
  let citations: string[][] | undefined;
  const carried = new Map<string, string[]>();
  let lastInput: SummarizeInput | undefined;
  for (const chunk of chunks) {
    calls++;
    if (running !== null && citations) remember(carried, running, citations);
    lastInput = {
      priorSummary: running,
      messages: chunk.source.map(toSource),
      ...(plan.instructions ? { instructions: plan.instructions } : {}),
      ...(plan.topicLabel ? { topicLabel: plan.topicLabel } : {}),
      ...(mustKeep.length > 0 ? { mustKeep } : {}),
      maxSummaryTokens: tunables.summaryMaxTokens,
    };
    const outcome = await callSummarizer(summarizer, lastInput);
    usage = addUsage(usage, outcome.usage);
    if (!outcome.ok) return { ok: false, error: outcome.error, calls, ...(usage ? { usage } : {}) };
    running = outcome.summary;
    citations = outcome.citations;
  }
  if (running === null || running.trim() === "" || !lastInput) {
    // Not retried: the summarizer answered nothing, and a reworded request does not change that.
    return { ok: false, error: "quality_gate: empty (empty summary)", calls, ...(usage ? { usage } : {}), gate: { check: "empty", attempts: 1 } };
  }
  return {
    ok: true,
    result: { ok: true, text: running, calls, ...(usage ? { usage } : {}), ...(citations ? { citations } : {}), carried },
    lastInput,
  };
}

/**
 * The parallel path of {@link summarizeChunks}: every chunk without the prior summary, then the
 * partial summaries (as SYSTEM messages, oldest first) merged with the prior summary in one call;
 * a second parallel round only when n partial summaries exceed one call's cap. Lines the merge
 * copies keep the citations of the chunk output they came from.
 */
async function summarizeInParallel(
  summarizer: Summarizer,
  tunables: Tunables,
  plan: Pick<FoldPlan, "instructions" | "topicLabel">,
  priorSummary: string | null,
  mustKeep: string[],
  cap: number,
  firstRound: SummarySourceMessage[][],
): Promise<ChunkRun> {
  let calls = 0;
  let usage: SummarizerUsage | undefined;
  const carried = new Map<string, string[]>();
  const extra = {
    ...(plan.instructions ? { instructions: plan.instructions } : {}),
    ...(plan.topicLabel ? { topicLabel: plan.topicLabel } : {}),
    maxSummaryTokens: tunables.summaryMaxTokens,
  };
  let inputs = firstRound;
  let parts: SummarySourceMessage[] = [];
  for (let round = 1; ; round++) {
    const outcomes = await mapBounded(inputs, tunables.summarizerConcurrency, (messages) => {
      calls++;
      return callSummarizer(summarizer, { priorSummary: null, messages, ...extra });
    });
    for (const o of outcomes) usage = addUsage(usage, o.usage);
    const failed = outcomes.find((o) => !o.ok);
    if (failed && !failed.ok) return { ok: false, error: failed.error, calls, ...(usage ? { usage } : {}) };
    parts = outcomes.map((o, k) => {
      const text = o.ok ? o.summary : "";
      if (o.ok && o.citations) remember(carried, text, o.citations);
      const last = inputs[k]![inputs[k]!.length - 1]!;
      return { id: `part-${round}-${k + 1}`, role: "SYSTEM" as const, content: `Summary of part ${k + 1} of ${outcomes.length}:\n${text}`, createdAt: last.createdAt };
    });
    const regrouped = chunkBySourceChars(parts, cap);
    if (regrouped.length === 1 || round >= 3) break;
    inputs = regrouped.map((c) => c.source);
  }
  const lastInput: SummarizeInput = {
    priorSummary,
    messages: parts,
    instructions: plan.instructions ? `${MERGE_INSTRUCTIONS}\n${plan.instructions}` : MERGE_INSTRUCTIONS,
    ...(plan.topicLabel ? { topicLabel: plan.topicLabel } : {}),
    ...(mustKeep.length > 0 ? { mustKeep } : {}),
    maxSummaryTokens: tunables.summaryMaxTokens,
  };
  calls++;
  const merged = await callSummarizer(summarizer, lastInput);
  usage = addUsage(usage, merged.usage);
  if (!merged.ok) return { ok: false, error: merged.error, calls, ...(usage ? { usage } : {}) };
  if (merged.summary.trim() === "") {
    return { ok: false, error: "quality_gate: empty (empty summary)", calls, ...(usage ? { usage } : {}), gate: { check: "empty", attempts: 1 } };
  }
  return {
    ok: true,
    result: { ok: true, text: merged.summary, calls, ...(usage ? { usage } : {}), ...(merged.citations ? { citations: merged.citations } : {}), carried },
    lastInput,
  };
}

function remember(carried: Map<string, string[]>, text: string, citations: string[][]) {
  text.split("\n").forEach((line, i) => {
    const ids = citations[i];
    if (line.trim() && ids && ids.length > 0) carried.set(line.trim(), ids);
  });
}

/**
 * Per line of the new summary, the messages it came from: the summarizer's citations, checked
 * (ids outside the fold are dropped), plus the citations of an identical line in the prior
 * summary or an earlier chunk's output (a line carried over keeps its sources).
 */
function provenance(
  prior: Memory | null,
  fold: readonly Message[],
  summary: Extract<ChunkedSummary, { ok: true }>,
): string[][] {
  const carried = new Map(summary.carried);
  if (prior?.citations) remember(carried, prior.content, prior.citations);
  const inFold = new Set(fold.map((m) => m.id));
  return summary.text.split("\n").map((line, i) => {
    const own = (summary.citations?.[i] ?? []).filter((id) => inFold.has(id));
    const inherited = carried.get(line.trim()) ?? [];
    return [...new Set([...own, ...inherited])];
  });
}

/** Events are notifications: a publish failure is logged, it never undoes a committed compaction. */
export async function publishSafely(deps: ServiceDeps, event: Parameters<ServiceDeps["events"]["publish"]>[0]) {
  try {
    await deps.events.publish(event);
  } catch (e) {
    deps.log.error("event publish failed", { detailType: event.detailType, error: String(e) });
  }
}
