/**
 * The compaction worker (docs/compaction.md, "The worker"): runs one queued fold per
 * `CompactionRequested` delivery, under the process lease. Prepare jobs store a PREPARED fold
 * (never replayed); manual and range jobs commit as the queued row's id.
 */
import { conflict } from "../domain/errors.js";
import type { EventDetail } from "../domain/events.js";
import { sizeFold } from "../domain/fold-size.js";
import type { CompactionModeName, Memory } from "../domain/model.js";
import { newestSummary, replayTokens } from "../domain/replay.js";
import { selectForCompaction } from "../domain/selector.js";
import { estimateFoldTokens, foldWithinCallCap } from "../domain/summary-plan.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import { metricModeOf, storeFailure, SUMMARY_TOO_LARGE, unlessTooLarge } from "./commit.js";
import { compactIfNeeded } from "./compaction.js";
import type { ServiceDeps } from "./deps.js";
import { discard, STALE } from "./fold-queue.js";
import { takeLease } from "./lease.js";
import { admitModelWork, budgetDiscardReason, recordModelUse } from "./model-budget.js";
import { metered } from "./model-usage.js";
import { compactRange } from "./range-compaction.js";
import { settledView } from "./settle.js";
import { summarizeChecked, summarizerFor } from "./summarize.js";
import { tagBeforeFold } from "./strength-tagging.js";
import { foldNeeds, summaryFields } from "./summary-fields.js";

export type WorkerOutcome =
  | { done: "prepared" | "committed" | "failed"; foldId: string; compactedMessages?: number }
  | { skipped: string; foldId?: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs one queued fold. Safe to deliver twice or late: only a fold still QUEUED (a prepare or
 * manual job only on the state it was queued for) is worked on; the lease keeps one job per process at a time; each result is a
 * conditional write on the fold's status. Throws (so the delivery is retried) while another
 * holder keeps the lease, and when a range job's summary failed for a reason a retry may not meet
 * again. A job the tenant's daily budget refuses, or a range past `maxSummarizerCalls`, is
 * discarded with its reason instead: a retry would meet the same refusal.
 */
export async function runQueuedFold(deps: ServiceDeps, detail: EventDetail<"CompactionRequested">): Promise<WorkerOutcome> {
  const { tenantId, processId, foldId } = detail;
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
    await discard(deps, key, fold, STALE, "discarded");
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
  const reason = result.budget ? budgetDiscardReason(result.budget) : (result.reason ?? "not_needed: below the soft threshold");
  await discard(deps, key, fold, reason, "discarded");
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
  // Not a passing trouble: the same range would make the same summary again, or need as many calls.
  const final = result.budget
    ? budgetDiscardReason(result.budget)
    : result.reason === SUMMARY_TOO_LARGE || FINAL_FAILURES.some((f) => result.reason?.startsWith(f))
      ? result.reason
      : undefined;
  if (final) {
    await discard(deps, key, fold, final, "discarded");
    return { done: "failed", foldId: fold.id };
  }
  throw conflict("compaction.retry_later", `range job '${fold.id}' did not run (${result.reason}); deliver again`, { reason: result.reason });
}

/** Summary failures every retry would meet again: the range needs more calls than a fold may make. */
const FINAL_FAILURES = ["summarizer_failed: summarizer_call_cap", "summarizer_failed: summarizer_merge_stalled"];

/** Refusals that only mean "someone else is compacting this process right now". */
const BACK_OFF = new Set(["compaction_in_progress", "concurrent_compaction", "commit_conflict"]);

/** A prepare job: summarize what the fold's mode selects now, store it PREPARED (never replayed). */
async function prepare(deps: ServiceDeps, key: ProcessKey, read: ActiveView, fold: Memory): Promise<WorkerOutcome | "leased"> {
  const mode = (fold.metadata.preparedFor ?? "HARD") as Exclude<CompactionModeName, "NONE">;
  const tunables = await deps.tunables.forProcess(key.tenantId, read.state.process.projectId);
  const { view, strengthAnalyzer } = await tagBeforeFold(deps, key, read, tunables, mode);
  const selection = selectForCompaction(view.messages, mode, tunables);
  const own = replayTokens(view);
  let messages = sizeFold(selection.fold, mode, tunables, {
    contextWindow: fold.metadata.contextWindow,
    own,
    tokensBefore: fold.metadata.tokensBefore ?? own,
  });
  if (messages.length === 0) {
    await discard(deps, key, fold, selection.reason ?? "nothing_eligible", "discarded");
    return { skipped: "nothing to fold", foldId: fold.id };
  }
  const ready = await summarizerFor(deps, key, tunables, fold.metadata.contextWindow);
  if (!ready.ok) {
    await discard(deps, key, fold, ready.reason, "discarded");
    return { skipped: ready.reason, foldId: fold.id };
  }
  const { inputCap } = ready;
  // Past maxSummarizerCalls the oldest part that fits is prepared; the rest folds later.
  const sized = foldWithinCallCap(messages, inputCap, ready.tunables);
  if (sized.cut && sized.fold.length > 0) messages = sized.fold;
  // After an undo the same fold is not prepared again until the replay grew (docs/compaction.md).
  const { owner, lease } = await takeLease(deps, key, view, mode === "EMERGENCY" ? {} : { replayTokens: own });
  if (!lease.ok) {
    if (lease.reason === "leased") return "leased";
    const why = lease.reason === "revert_hold" ? "reverted_recently" : STALE;
    await discard(deps, key, fold, why, "discarded");
    return { skipped: lease.reason === "revert_hold" ? "reverted_recently" : "stale", foldId: fold.id };
  }
  try {
    // A duplicate delivery may have prepared this fold between our read and our lease: preparing
    // does not move the version the lease checks, so the row itself is read again under the lease.
    const current = await deps.store.getMemory(key, fold.id);
    if (current?.status !== "QUEUED") return { skipped: `fold is ${current?.status ?? "gone"}`, foldId: fold.id };
    const admission = await admitModelWork(deps, key.tenantId, estimateFoldTokens(sized, ready.tunables.summaryMaxTokens));
    if (!admission.ok) {
      await discard(deps, key, current, budgetDiscardReason(admission.refusal), "discarded");
      return { skipped: "budget_exceeded", foldId: fold.id };
    }
    const { summarizer, use } = metered(ready.summarizer);
    const prior = newestSummary(view);
    const started = Date.now();
    const needs = await foldNeeds(deps, key, prior, messages);
    const summary = await summarizeChecked(deps, summarizer, inputCap, ready.tunables, { fold: messages }, prior?.content ?? null, needs.required);
    const summarizerMs = Date.now() - started;
    await recordModelUse(deps, admission, "summary", use);
    deps.metrics.summarizerWallTime(metricModeOf(mode), summarizerMs);
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
    const fail = (error: string, extra: Partial<Memory["metadata"]> = {}) =>
      storeFailure((m) => deps.store.storeFold(key, m, "QUEUED"), {
        ...fold,
        status: "FAILED",
        sourceRefs: messages.map((m) => m.id),
        metadata: { ...metadata, error, ...extra },
      });
    if (!summary.ok) {
      // The code for tenants; the provider's words only in the log (docs/summarizers.md, "Failures").
      await fail(summary.code, summary.gate ? { qualityGate: summary.gate } : {});
      deps.log.warn("compaction failed: summarizer", { processId: key.processId, memoryId: fold.id, code: summary.code, error: summary.error });
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
    const stored = await unlessTooLarge(deps.store.storeFold(key, prepared, "QUEUED"));
    if (stored === null) {
      await fail(SUMMARY_TOO_LARGE);
      deps.log.warn("compaction failed: summary too large to store", { processId: key.processId, memoryId: fold.id });
      return { done: "failed", foldId: fold.id };
    }
    if (!stored.ok) return { skipped: "discarded while summarizing", foldId: fold.id };
    deps.log.info("fold prepared", { processId: key.processId, foldId: fold.id, mode, messages: messages.length, summarizerMs });
    return { done: "prepared", foldId: fold.id };
  } finally {
    await deps.store.releaseLease(key, owner).catch((e) => deps.log.warn("lease release failed", { error: String(e) }));
  }
}
