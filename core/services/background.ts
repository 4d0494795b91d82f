/**
 * Compaction off the turn's critical path (docs/compaction.md, "Off the turn's critical path").
 *
 * A fold row moves QUEUED -> PREPARED -> OK, or ends DISCARDED or FAILED:
 * - a turn (or a manual compaction over its budget) queues it and publishes CompactionRequested;
 * - the worker summarizes it under the lease and stores it PREPARED (never replayed, with a TTL),
 *   or, for a queued manual compaction, commits it;
 * - a later turn commits a PREPARED fold through the commit protocol without a summarizer call,
 *   only if it still fits: it chains the active summary and every message it covers is active.
 * Every transition is a conditional write on the row's status, so a fold is committed once.
 */
import * as z from "zod";
import { conflict } from "../domain/errors.js";
import type { CompactionModeName, CompactionResult, Memory, Message } from "../domain/model.js";
import { modeForRatio, promptTokens } from "../domain/mode.js";
import { Id } from "../domain/fields.js";
import { foldOldestUntil, foldsByStrength, selectForCompaction } from "../domain/selector.js";
import { effectiveStrength } from "../domain/strength.js";
import { trimToFit } from "../domain/trim.js";
import type { Tunables } from "../domain/tunables.js";
import type { CompactionMetricMode } from "../ports/metrics.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import {
  MEMORY_SOURCE,
  afterCommit,
  compactIfNeeded,
  compactRange,
  newestSummary,
  publishSafely,
  replayTokens,
  resolveContextWindow,
  settledView,
  summarizeChecked,
  summaryFields,
  foldNeeds,
  selectRange,
  summarizerFor,
  tokensAfterFold,
  tokensToReachTarget,
  type CompactionRequest,
  type RangeRequest,
  type RangeResult,
} from "./compaction.js";
import { clearIfNeeded } from "./clearing.js";
import type { ServiceDeps } from "./deps.js";
import { takeLease } from "./lease.js";
import { tagBeforeFold } from "./strength-tagging.js";

export const COMPACTION_REQUESTED = "CompactionRequested";

/** How compaction runs in this deployment (createDeps reads them from the environment). */
export interface CompactionSettings {
  /** `background` (default): no turn calls a summarizer. `inline`: a turn summarizes itself. */
  execution: "inline" | "background";
  /** A manual compaction answers within this, or 202 queued (well inside API Gateway's 29 s). */
  manualBudgetMs: number;
  /** A queued or prepared fold nobody committed expires after this (and DynamoDB's TTL deletes it). */
  preparedTtlMs: number;
  /** A fold still QUEUED after this is taken for lost (worker crash, dead-letter) and queued again. */
  queueTimeoutMs: number;
  /** How long the worker waits for another holder's lease before failing the delivery. */
  leaseWaitMs: number;
}

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = Object.freeze({
  execution: "background",
  manualBudgetMs: 20_000,
  preparedTtlMs: 3_600_000,
  queueTimeoutMs: 600_000,
  leaseWaitMs: 30_000,
});

export type TurnCompaction = CompactionResult & { view: ActiveView; messages: Message[] };

const metricMode = (mode: string) => mode.toLowerCase() as CompactionMetricMode;
const foldTokens = (messages: readonly Message[]) => messages.reduce((n, m) => n + m.tokens, 0);

/**
 * The turn's compaction step. Inline: {@link compactIfNeeded} as is. Background: commit a prepared
 * fold that fits, queue the fold the prompt needs when none is prepared, and trim the answer below
 * the emergency threshold while the fold is not ready.
 */
export async function compactForTurn(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
  options: { view?: ActiveView } = {},
): Promise<TurnCompaction> {
  if (deps.compaction.execution === "inline") {
    const out = await compactIfNeeded(deps, key, request, options);
    return { ...out, messages: out.view.messages };
  }
  const contextWindow = resolveContextWindow(request.model);
  let view = await settledView(deps, key, options.view);
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  const tokensAtStart = promptTokens(request.prompt, replayTokens(view)).tokens;
  // The cheap tier first, as inline: clearing old tool results needs no model call.
  const clearing = await clearIfNeeded(deps, key, view, tunables, contextWindow, tokensAtStart);
  view = clearing.view;
  const own = replayTokens(view);
  const tokensBefore = clearing.tokensAfter;
  const scale = own > 0 ? tokensBefore / own : 1;
  const mode = modeForRatio(tokensBefore / contextWindow, tunables);
  let result: CompactionResult = {
    mode,
    compacted: false,
    compactedMessages: 0,
    tokensBefore: tokensAtStart,
    tokensAfter: tokensBefore,
    ...(clearing.clearedMessages > 0 ? { clearedMessages: clearing.clearedMessages } : {}),
  };
  let live = await settleFolds(deps, key, view);
  if (mode === "NONE") return { ...result, view, messages: view.messages };
  // After an undo, SOFT and HARD wait until the replay grew past the hold (docs/compaction.md,
  // "Undoing a compaction"): the turn reads it on META, so it neither commits a prepared fold nor
  // queues one the worker would only discard. EMERGENCY never waits.
  const held = (m: CompactionModeName) => m !== "EMERGENCY" && own < (view.state.revertHoldTokens ?? 0);

  // A prepared fold is committed when its threshold is reached (a SOFT one already at SOFT).
  if (live?.status === "PREPARED" && !held(mode) && (mode !== "SOFT" || live.metadata.preparedFor === "SOFT")) {
    const outcome = await commitPrepared(deps, key, view, live, { mode, tokensBefore });
    live = null;
    if (outcome.ok) {
      view = outcome.view;
      result = {
        ...result,
        mode,
        compacted: true,
        memoryId: outcome.memory.id,
        compactedMessages: outcome.memory.sourceRefs.length,
        tokensBefore,
        tokensAfter: outcome.memory.metadata.tokensAfter ?? tokensBefore,
      };
    } else if ("fold" in outcome) {
      result.reason = outcome.reason;
      live = outcome.fold;
    }
  }

  // What the prompt needs now: queue it unless a fold is already on its way.
  const tokensNow = result.compacted ? result.tokensAfter : tokensBefore;
  const wanted = wantedFold(tokensNow / contextWindow, tunables);
  if (wanted && !result.compacted && held(wanted)) {
    result.reason = "reverted_recently";
  } else if (wanted && !live) {
    const fold = selectForCompaction(view.messages, wanted, tunables).fold;
    const worthIt = fold.length > 0 && (wanted !== "SOFT" || foldTokens(fold) >= tunables.summaryMaxTokens);
    if (worthIt) {
      live = await queueFold(deps, key, view, { mode: wanted, job: "prepare", contextWindow, tokensBefore: tokensNow });
    } else if (!result.compacted && !result.reason) {
      result.reason = fold.length === 0 ? (selectForCompaction(view.messages, wanted, tunables).reason ?? "nothing_eligible") : "below_min_saving";
    }
  }
  if (!result.compacted && !result.reason && live) {
    const due = tokensNow / contextWindow >= tunables.hardThreshold || live.metadata.preparedFor === "SOFT";
    result.reason = live.status === "QUEUED" || due ? "compaction_queued" : "compaction_prepared";
    result.memoryId = live.id;
  }

  // Until the fold lands, the answer (never the history) stays below the emergency threshold.
  const limit = Math.ceil(tunables.emergencyThreshold * contextWindow) - 1;
  const trim = trimToFit(view.messages, tunables, { tokens: tokensNow, limit, scale });
  if (trim.trimmed.messages > 0) result.trimmed = trim.trimmed;
  return { ...result, view, messages: trim.kept };
}

/** The fold the prompt needs at `ratio`: HARD already from prepareThreshold, SOFT below that. */
export function wantedFold(ratio: number, t: Tunables): Exclude<CompactionModeName, "NONE"> | null {
  if (ratio >= t.emergencyThreshold) return "EMERGENCY";
  if (ratio >= Math.min(t.prepareThreshold, t.hardThreshold)) return "HARD";
  if (ratio >= t.softThreshold) return "SOFT";
  return null;
}

/**
 * Discards the folds that can no longer be used (expired, lost in the queue, queued or prepared on
 * a state that changed since, duplicates) and returns the one still live, if any.
 */
async function settleFolds(deps: ServiceDeps, key: ProcessKey, view: ActiveView): Promise<Memory | null> {
  const now = deps.clock.now().getTime();
  const activeId = newestSummary(view)?.id ?? null;
  const live: Memory[] = [];
  // A range job (an accepted offer) runs on whatever state the worker finds: no turn discards it.
  for (const fold of view.folds.filter((f) => f.metadata.job !== "range")) {
    const expired = fold.metadata.expiresAt !== undefined && Date.parse(fold.metadata.expiresAt) <= now;
    const lost = fold.status === "QUEUED" && Date.parse(fold.metadata.queuedAt ?? fold.createdAt) + deps.compaction.queueTimeoutMs <= now;
    const stale =
      fold.status === "QUEUED"
        ? fold.metadata.queuedAtVersion !== view.state.version
        : (fold.metadata.supersededMemoryId ?? null) !== activeId;
    if (expired || lost) await discard(deps, key, fold, expired ? "expired" : "queue_timeout", expired ? "expired" : "discarded");
    else if (stale) await discard(deps, key, fold, "stale: a compaction committed since it was queued", "discarded");
    else live.push(fold);
  }
  // Normally one. After a race, keep a prepared one over a queued one, else the newest.
  live.sort((a, b) => (a.status === b.status ? (a.id < b.id ? 1 : -1) : a.status === "PREPARED" ? -1 : 1));
  for (const extra of live.slice(1)) await discard(deps, key, extra, "duplicate", "discarded");
  return live[0] ?? null;
}

async function discard(deps: ServiceDeps, key: ProcessKey, fold: Memory, reason: string, outcome: "discarded" | "expired") {
  const out = await deps.store.discardFold(key, fold.id, reason, deps.clock.now().toISOString());
  if (out.ok) {
    deps.metrics.preparedFold(outcome);
    deps.log.info("fold discarded", { processId: key.processId, foldId: fold.id, status: fold.status, reason });
  }
}

/**
 * Discards every queued and prepared fold of a process (e.g. after its history was changed by
 * hand): the next turn prepares a new one from the state as it is then.
 */
export async function discardPreparedFolds(deps: ServiceDeps, key: ProcessKey, reason: string): Promise<number> {
  const view = await deps.store.activeView(key);
  let discarded = 0;
  // A range job is not tied to the state it was queued on: it stays.
  for (const fold of (view?.folds ?? []).filter((f) => f.metadata.job !== "range")) {
    const out = await deps.store.discardFold(key, fold.id, reason, deps.clock.now().toISOString());
    if (out.ok) {
      discarded++;
      deps.metrics.preparedFold("discarded");
    }
  }
  return discarded;
}

type PreparedCommit =
  | { ok: true; memory: Memory; view: ActiveView }
  | { ok: false; reason: "stale" }
  | { ok: false; reason: string; fold: Memory };

/** Commits a PREPARED fold in the turn: the commit protocol without the summarizer step. */
async function commitPrepared(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  fold: Memory,
  o: { mode: CompactionModeName; tokensBefore: number },
): Promise<PreparedCommit> {
  const prior = newestSummary(view);
  // The replay index does not carry sourceRefs: read the fold itself (only on the committing turn).
  const full = await deps.store.getMemory(key, fold.id);
  if (!full || full.status !== "PREPARED") return { ok: false, reason: "stale" };
  const active = new Map(view.messages.map((m) => [m.id, m]));
  // Still active, and still foldable by its strength now (a message pinned since stays), both in
  // the mode it was prepared for and in the mode it is committed as (an EMERGENCY fold of strong
  // messages is not committed as a HARD one).
  const mode = (full.metadata.preparedFor ?? "HARD") as CompactionModeName;
  const foldable = (id: string) => {
    const m = active.get(id);
    return m !== undefined && foldsByStrength(effectiveStrength(m), mode) && foldsByStrength(effectiveStrength(m), o.mode);
  };
  if (!full.sourceRefs.every(foldable) || (full.metadata.supersededMemoryId ?? null) !== (prior?.id ?? null)) {
    await discard(deps, key, full, "stale: a message it covers is no longer active", "discarded");
    return { ok: false, reason: "stale" };
  }
  const { owner, now, lease } = await takeLease(deps, key, view);
  if (!lease.ok) return { ok: false, reason: lease.reason === "leased" ? "compaction_in_progress" : "concurrent_compaction", fold };
  const { expiresAt: _expires, discardReason: _reason, ...metadata } = full.metadata;
  const memory: Memory = {
    ...full,
    status: "OK",
    createdAt: now.toISOString(),
    supersededAt: null,
    metadata: { ...metadata, mode: o.mode, producedBy: "prepared", tokensBefore: o.tokensBefore },
  };
  const folded = full.sourceRefs.map((id) => active.get(id)!);
  memory.metadata.tokensAfter = tokensAfterFold(view, { fold: folded, tokensBefore: o.tokensBefore }, memory.tokens);
  const commit = await deps.store.commitCompaction(key, {
    leaseOwner: owner,
    expectedVersion: view.state.version,
    memory,
    priorSummaryId: prior?.id ?? null,
    archiveIds: full.sourceRefs,
    fromFold: "PREPARED",
    at: now.toISOString(),
  });
  if (!commit.ok) {
    await deps.store.releaseLease(key, owner).catch((e) => deps.log.warn("lease release failed", { error: String(e) }));
    deps.log.warn("compaction commit conflict", { processId: key.processId, foldId: fold.id });
    return { ok: false, reason: "commit_conflict", fold };
  }
  deps.metrics.preparedFold("used");
  const after = await afterCommit(deps, key, memory, { pendingArchive: commit.pendingArchive, metricMode: metricMode(o.mode) });
  return { ok: true, memory, view: after };
}

export interface QueueRequest {
  mode: Exclude<CompactionModeName, "NONE"> | "RANGE";
  job: "prepare" | "manual" | "range";
  contextWindow?: number;
  tokensBefore?: number;
  forced?: boolean;
  instructions?: string | undefined;
  /** A range job: the range and the accepted offer it comes from. */
  range?: RangeRequest & { inboxItemId: string };
}

/** Stores a QUEUED fold for the state of `view` and asks the worker for it. */
export async function queueFold(deps: ServiceDeps, key: ProcessKey, view: ActiveView, q: QueueRequest): Promise<Memory> {
  const at = deps.clock.now();
  const fold: Memory = {
    id: deps.ids.memory(at),
    processId: key.processId,
    kind: "ARCHIVED_CHAT",
    status: "QUEUED",
    content: "",
    sourceRefs: [],
    metadata: {
      compactedMessages: 0,
      provider: "",
      model: "",
      preparedFor: q.mode,
      job: q.job,
      queuedAt: at.toISOString(),
      expiresAt: new Date(at.getTime() + deps.compaction.preparedTtlMs).toISOString(),
      ...(q.contextWindow !== undefined ? { contextWindow: q.contextWindow } : {}),
      ...(q.tokensBefore !== undefined ? { tokensBefore: q.tokensBefore } : {}),
      queuedAtVersion: view.state.version,
      ...(q.forced ? { forced: true } : {}),
      ...(q.instructions ? { instructions: q.instructions } : {}),
      ...(q.range
        ? { topicLabel: q.range.topicLabel, rangeFromAt: q.range.from, rangeToAt: q.range.to, inboxItemId: q.range.inboxItemId }
        : {}),
    },
    createdAt: at.toISOString(),
    supersededAt: null,
    tokens: 0,
  };
  await deps.store.storeFold(key, fold, "new");
  await requestFold(deps, key, fold);
  return fold;
}

/**
 * Asks the worker for a queued fold. For a turn's or a manual job a lost request is not lost
 * work: the fold stays QUEUED and a later turn queues it again once queueTimeoutMs has passed. A
 * range job has no turn behind it, so its request must go out: a failure throws, and the
 * InboxItemAnswered delivery that queued it is retried (and asks again for the same row).
 */
async function requestFold(deps: ServiceDeps, key: ProcessKey, fold: Memory) {
  const event = {
    source: MEMORY_SOURCE,
    detailType: COMPACTION_REQUESTED,
    detail: { tenantId: key.tenantId, processId: key.processId, foldId: fold.id, mode: fold.metadata.preparedFor, job: fold.metadata.job },
  };
  if (fold.metadata.job === "range") await deps.events.publish(event);
  else await publishSafely(deps, event);
}

/**
 * An accepted offer's range compaction, queued for the worker (docs/compaction.md, "Range
 * compaction"). Safe to repeat: a delivery that finds the range already folded queues nothing,
 * and one that finds the job still queued asks the worker for that row again.
 */
export async function queueRangeJob(
  deps: ServiceDeps,
  key: ProcessKey,
  range: RangeRequest & { inboxItemId: string },
): Promise<RangeResult> {
  const view = await settledView(deps, key);
  const none = { compactedMessages: 0, markerMessageId: null };
  const queued = view.folds.find((f) => f.status === "QUEUED" && f.metadata.job === "range" && f.metadata.inboxItemId === range.inboxItemId);
  if (queued) {
    await requestFold(deps, key, queued);
    return { ...none, memoryId: queued.id, reason: "compaction_queued" };
  }
  if (selectRange(view.messages, range).length === 0) return { ...none, memoryId: null, reason: "nothing_in_range" };
  const fold = await queueFold(deps, key, view, { mode: "RANGE", job: "range", range });
  return { ...none, memoryId: fold.id, reason: "compaction_queued" };
}

// ---------------------------------------------------------------------------------------------
// The worker

export const CompactionRequestedDetail = z.object({ tenantId: Id, processId: Id, foldId: z.string().min(1).max(64) });

export type WorkerOutcome =
  | { done: "prepared" | "committed" | "failed"; foldId: string; compactedMessages?: number }
  | { skipped: string; foldId?: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs one queued fold. Safe to deliver twice or late: only a fold still QUEUED (a prepare or
 * manual job only on the state it was queued for) is worked on; the lease keeps one job per process at a time; each result is a
 * conditional write on the fold's status. Throws (so the delivery is retried) while another
 * holder keeps the lease, and when a range job's summary failed.
 */
export async function handleCompactionRequested(deps: ServiceDeps, raw: unknown): Promise<WorkerOutcome> {
  const parsed = CompactionRequestedDetail.safeParse(raw);
  if (!parsed.success) {
    deps.log.error("CompactionRequested ignored: invalid detail", { issues: parsed.error.issues.map((i) => i.message) });
    return { skipped: "invalid detail" };
  }
  const { tenantId, processId, foldId } = parsed.data;
  const key = { tenantId, processId };
  const deadline = Date.now() + deps.compaction.leaseWaitMs;
  for (;;) {
    const fold = await deps.store.getMemory(key, foldId);
    if (!fold || fold.status !== "QUEUED") return { skipped: fold ? `fold is ${fold.status}` : "fold not found", foldId };
    if (fold.metadata.expiresAt && Date.parse(fold.metadata.expiresAt) <= deps.clock.now().getTime()) {
      await discard(deps, key, fold, "expired", "expired");
      return { skipped: "expired", foldId };
    }
    const outcome = fold.metadata.job === "range" ? await runRange(deps, key, fold) : await runForState(deps, key, fold);
    if (outcome !== "leased") return outcome;
    if (Date.now() >= deadline) {
      throw conflict("compaction.retry_later", `process '${processId}' is being compacted; deliver fold '${foldId}' again`);
    }
    await sleep(250);
  }
}

/** A prepare or manual job, which only runs on the state it was queued for (a range job runs on any). */
async function runForState(deps: ServiceDeps, key: ProcessKey, fold: Memory): Promise<WorkerOutcome | "leased"> {
  const view = await settledView(deps, key);
  if (view.state.version !== fold.metadata.queuedAtVersion) {
    await discard(deps, key, fold, "stale: a compaction committed since it was queued", "discarded");
    return { skipped: "stale", foldId: fold.id };
  }
  return fold.metadata.job === "manual" ? runManual(deps, key, view, fold) : prepare(deps, key, view, fold);
}

/** A queued manual compaction: the fold is summarized and committed here, as the queued row's id. */
async function runManual(deps: ServiceDeps, key: ProcessKey, view: ActiveView, fold: Memory): Promise<WorkerOutcome | "leased"> {
  const m = fold.metadata;
  const result = await compactIfNeeded(
    deps,
    key,
    {
      model: { contextWindow: m.contextWindow! },
      prompt: { tokens: m.tokensBefore ?? 0 },
      ...(m.forced ? { force: m.preparedFor as Exclude<CompactionModeName, "NONE"> } : {}),
      ...(m.instructions ? { instructions: m.instructions } : {}),
    },
    { view, queuedFoldId: fold.id },
  );
  if (result.compacted) return { done: "committed", foldId: fold.id };
  if (result.reason === "compaction_in_progress") return "leased";
  await discard(deps, key, fold, result.reason ?? "nothing to fold", "discarded");
  return { done: "failed", foldId: fold.id };
}

/**
 * A range job: the accepted offer's range folded and committed here, as the queued row's id (so
 * it commits once). A range already folded ends the job; backing off waits for the lease; a
 * failed summary fails the delivery and leaves the row QUEUED, so the retry folds it.
 */
async function runRange(deps: ServiceDeps, key: ProcessKey, fold: Memory): Promise<WorkerOutcome | "leased"> {
  const m = fold.metadata;
  const range = { from: m.rangeFromAt ?? "", to: m.rangeToAt ?? "", topicLabel: m.topicLabel ?? "" };
  const result = await compactRange(deps, key, range, { queuedFoldId: fold.id });
  if (result.compactedMessages > 0) return { done: "committed", foldId: fold.id, compactedMessages: result.compactedMessages };
  if (result.reason === "nothing_in_range") {
    await discard(deps, key, fold, "nothing_in_range", "discarded");
    return { skipped: "nothing_in_range", foldId: fold.id };
  }
  if (result.reason && BACK_OFF.has(result.reason)) return "leased";
  throw conflict("compaction.retry_later", `range job '${fold.id}' did not run (${result.reason}); deliver again`, { reason: result.reason });
}

/** Refusals that only mean "someone else is compacting this process right now". */
const BACK_OFF = new Set(["compaction_in_progress", "concurrent_compaction", "commit_conflict"]);

/** A prepare job: summarize what the fold's mode selects now, store it PREPARED (never replayed). */
async function prepare(deps: ServiceDeps, key: ProcessKey, read: ActiveView, fold: Memory): Promise<WorkerOutcome | "leased"> {
  const mode = (fold.metadata.preparedFor ?? "HARD") as Exclude<CompactionModeName, "NONE">;
  const tunables = await deps.tunables.forProcess(key.tenantId, read.state.process.projectId);
  const { view, strengthAnalyzer } = await tagBeforeFold(deps, key, read, tunables, mode);
  const selection = selectForCompaction(view.messages, mode, tunables);
  const own = replayTokens(view);
  const messages =
    tunables.foldTarget > 0 && mode !== "SOFT" && fold.metadata.contextWindow
      ? foldOldestUntil(selection.fold, tokensToReachTarget(tunables, fold.metadata.contextWindow, own, fold.metadata.tokensBefore ?? own))
      : selection.fold;
  if (messages.length === 0) {
    await discard(deps, key, fold, selection.reason ?? "nothing_eligible", "discarded");
    return { skipped: "nothing to fold", foldId: fold.id };
  }
  const ready = await summarizerFor(deps, key, tunables);
  if (!ready.ok) {
    await discard(deps, key, fold, ready.reason, "discarded");
    return { skipped: ready.reason, foldId: fold.id };
  }
  const { summarizer, inputCap } = ready;
  // After an undo the same fold is not prepared again until the replay grew (docs/compaction.md).
  const { owner, lease } = await takeLease(deps, key, view, mode === "EMERGENCY" ? {} : { replayTokens: own });
  if (!lease.ok) {
    if (lease.reason === "leased") return "leased";
    const why = lease.reason === "revert_hold" ? "reverted_recently" : "stale: a compaction committed since it was queued";
    await discard(deps, key, fold, why, "discarded");
    return { skipped: lease.reason === "revert_hold" ? "reverted_recently" : "stale", foldId: fold.id };
  }
  try {
    // A duplicate delivery may have prepared this fold between our read and our lease: preparing
    // does not move the version the lease checks, so the row itself is read again under the lease.
    const current = await deps.store.getMemory(key, fold.id);
    if (current?.status !== "QUEUED") return { skipped: `fold is ${current?.status ?? "gone"}`, foldId: fold.id };
    const prior = newestSummary(view);
    const started = Date.now();
    const needs = await foldNeeds(deps, key, prior, messages);
    const summary = await summarizeChecked(deps, summarizer, inputCap, tunables, { fold: messages }, prior?.content ?? null, needs.required);
    const summarizerMs = Date.now() - started;
    deps.metrics.summarizerWallTime(metricMode(mode), summarizerMs);
    const at = deps.clock.now();
    const metadata = {
      ...fold.metadata,
      compactedMessages: messages.length,
      provider: summarizer.provider,
      model: summarizer.model,
      mode,
      summarizerCalls: summary.calls,
      summarizerMs,
      ...(summary.usage ? { usage: summary.usage } : {}),
      ...(strengthAnalyzer ? { strengthAnalyzer } : {}),
    };
    if (!summary.ok) {
      const failed: Memory = {
        ...fold,
        status: "FAILED",
        sourceRefs: messages.map((m) => m.id),
        metadata: { ...metadata, error: summary.error, ...(summary.gate ? { qualityGate: summary.gate } : {}) },
      };
      await deps.store.storeFold(key, failed, "QUEUED");
      deps.log.warn("compaction failed: summarizer", { processId: key.processId, memoryId: fold.id, error: summary.error });
      return { done: "failed", foldId: fold.id };
    }
    const fields = summaryFields(needs, messages, summary);
    const prepared: Memory = {
      ...fold,
      status: "PREPARED",
      content: fields.content,
      sourceRefs: messages.map((m) => m.id),
      tokens: fields.tokens,
      citations: fields.citations,
      droppedUnits: fields.droppedUnits,
      ...(fields.keepUnits ? { keepUnits: fields.keepUnits } : {}),
      metadata: {
        ...metadata,
        loss: fields.loss,
        preparedAt: at.toISOString(),
        expiresAt: new Date(at.getTime() + deps.compaction.preparedTtlMs).toISOString(),
        ...(prior ? { supersededMemoryId: prior.id } : {}),
      },
    };
    const stored = await deps.store.storeFold(key, prepared, "QUEUED");
    if (!stored.ok) return { skipped: "discarded while summarizing", foldId: fold.id };
    deps.log.info("fold prepared", { processId: key.processId, foldId: fold.id, mode, messages: messages.length, summarizerMs });
    return { done: "prepared", foldId: fold.id };
  } finally {
    await deps.store.releaseLease(key, owner).catch((e) => deps.log.warn("lease release failed", { error: String(e) }));
  }
}

// ---------------------------------------------------------------------------------------------
// Manual compaction within a budget

/**
 * `POST .../compaction`: the fold runs in the request; when it is not done within
 * `manualBudgetMs` the request gives up its lease (so its own late commit is refused), queues the
 * same compaction for the worker and answers 202 `compaction_queued`. The queued fold only runs on
 * the state the request started from, so a fold that did commit in between is not repeated.
 */
export async function compactManually(
  deps: ServiceDeps,
  key: ProcessKey,
  request: CompactionRequest,
): Promise<{ status: 200 | 202; result: CompactionResult }> {
  const contextWindow = resolveContextWindow(request.model);
  const view = await settledView(deps, key);
  const owner = deps.ids.token();
  const work = compactIfNeeded(deps, key, request, { view: structuredClone(view), leaseOwner: owner });
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), deps.compaction.manualBudgetMs)));
  const first = await Promise.race([work, expired]).finally(() => clearTimeout(timer));
  if (first) {
    const { view: _view, ...result } = first;
    return { status: 200, result };
  }
  work.catch((e) => deps.log.warn("abandoned compaction failed", { processId: key.processId, error: String(e) }));
  await deps.store.releaseLease(key, owner);
  const tunables = await deps.tunables.forProcess(key.tenantId, view.state.process.projectId);
  const tokensBefore = promptTokens(request.prompt, replayTokens(view)).tokens;
  const mode = request.force ?? modeForRatio(tokensBefore / contextWindow, tunables);
  const base = { mode, compacted: false, compactedMessages: 0, tokensBefore, tokensAfter: tokensBefore };
  if (mode === "NONE") return { status: 200, result: base };
  const fold = await queueFold(deps, key, view, {
    mode,
    job: "manual",
    contextWindow,
    tokensBefore,
    forced: request.force !== undefined,
    instructions: request.instructions,
  });
  return { status: 202, result: { ...base, reason: "compaction_queued", memoryId: fold.id } };
}
