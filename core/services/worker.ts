/**
 * The compaction worker (docs/compaction.md, "The worker"): runs one queued fold per
 * `CompactionRequested` delivery, under the process lease. Prepare jobs store a PREPARED fold
 * (never replayed); manual and range jobs commit as the queued row's id; commit jobs commit a
 * PREPARED fold a turn found due.
 */
import { conflict } from "../domain/errors.js";
import type { EventDetail } from "../domain/events.js";
import { planFold } from "../domain/fold-plan.js";
import type { Memory } from "../domain/model.js";
import type { FoldModeName } from "../domain/mode-policy.js";
import { replayTokens } from "../domain/replay.js";
import type { ActiveView, ProcessKey } from "../ports/store.js";
import { metricModeOf } from "./commit.js";
import { compactIfNeeded } from "./compaction.js";
import type { ServiceDeps } from "./deps.js";
import { discard, foldForJob, STALE } from "./fold-queue.js";
import { runFold, SUMMARY_TOO_LARGE } from "./fold-pipeline.js";
import { budgetDiscardReason } from "./model-budget.js";
import { compactRange } from "./range-compaction.js";
import { settledView } from "./settle.js";
import { tagBeforeFold } from "./strength-tagging.js";
import { foldReadyInTime } from "./fold-ahead.js";
import { commitWhenDue } from "./worker-commit.js";

export type WorkerOutcome =
  | { done: "prepared" | "committed" | "failed"; foldId: string; compactedMessages?: number; next?: string }
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
  // A prepared fold that is due: committed here rather than in a turn (services/worker-commit.ts).
  if (detail.job === "commit") return commitWhenDue(deps, detail);
  const { tenantId, processId, foldId } = detail;
  const key = { tenantId, processId };
  const deadline = Date.now() + deps.compaction.leaseWaitMs;
  for (;;) {
    const job = await foldForJob(deps, key, foldId, "QUEUED");
    if (!("fold" in job)) return job;
    const { fold } = job;
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
      ...(m.forced ? { force: m.preparedFor as FoldModeName } : {}),
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
  const mode = (fold.metadata.preparedFor ?? "HARD") as FoldModeName;
  const tunables = await deps.tunables.forProcess(key.tenantId, read.state.process.projectId);
  const { view, strengthAnalyzer } = await tagBeforeFold(deps, key, read, tunables, mode);
  const own = replayTokens(view);
  // The turn that queued the fold passed its gate; the worker only plans what to take now.
  const plan = planFold(view.messages, mode, tunables, { contextWindow: fold.metadata.contextWindow, own, tokensBefore: fold.metadata.tokensBefore ?? own, minSaving: false });
  if (!plan.ok) {
    await discard(deps, key, fold, plan.reason, "discarded");
    return { skipped: "nothing to fold", foldId: fold.id };
  }
  // A process that grows fast gets what one summarizer call holds, ready one call after it was queued.
  const tokens = fold.metadata.tokensBefore ?? own;
  const toFold = foldReadyInTime(deps, view, tunables, plan.fold, { tokens, scale: own > 0 ? tokens / own : 1, contextWindow: fold.metadata.contextWindow });
  let current: Memory | null = fold;
  const run = await runFold(
    deps,
    key,
    view,
    tunables,
    // After an undo the same fold is not prepared again until the replay grew (docs/compaction.md).
    { fold: toFold, metricMode: metricModeOf(mode), contextWindow: fold.metadata.contextWindow, holdCheckTokens: plan.holdCheckTokens },
    {
      // A duplicate delivery may have prepared this fold between our read and our lease: preparing
      // does not move the version the lease checks, so the row itself is read again under the lease.
      stillWanted: async () => {
        current = await deps.store.getMemory(key, fold.id);
        return current?.status === "QUEUED" ? null : `fold is ${current?.status ?? "gone"}`;
      },
      failed: (s, error, extra) => ({
        ...fold,
        status: "FAILED",
        sourceRefs: s.fold.map((m) => m.id),
        metadata: { ...fold.metadata, ...s.metadata, mode, ...(strengthAnalyzer ? { strengthAnalyzer } : {}), error, ...extra },
      }),
      putFailed: (failed) => deps.store.storeFold(key, failed, "QUEUED"),
      memory: (s) => ({
        ...fold,
        status: "PREPARED",
        content: s.fields.content,
        sourceRefs: s.fold.map((m) => m.id),
        tokens: s.fields.tokens,
        citations: s.fields.citations,
        droppedUnits: s.fields.droppedUnits,
        ...(s.fields.keepUnits ? { keepUnits: s.fields.keepUnits } : {}),
        metadata: {
          ...fold.metadata,
          ...s.metadata,
          mode,
          ...(strengthAnalyzer ? { strengthAnalyzer } : {}),
          loss: s.fields.loss,
          preparedAt: s.at.toISOString(),
          expiresAt: new Date(s.at.getTime() + deps.compaction.preparedTtlMs).toISOString(),
          ...(s.prior ? { supersededMemoryId: s.prior.id } : {}),
        },
      }),
      write: async (prepared) => {
        const stored = await deps.store.storeFold(key, prepared, "QUEUED");
        return stored.ok ? { ok: true, leaseCleared: false } : { ok: false, reason: "discarded while summarizing" };
      },
    },
  );
  if (run.ok) {
    deps.log.info("fold prepared", { processId: key.processId, foldId: fold.id, mode, messages: run.memory.sourceRefs.length, summarizerMs: run.memory.metadata.summarizerMs });
    return { done: "prepared", foldId: fold.id };
  }
  const failure = run.failure;
  switch (failure.step) {
    case "summarizer":
      await discard(deps, key, fold, failure.reason, "discarded");
      return { skipped: failure.reason, foldId: fold.id };
    case "lease": {
      if (failure.refusal === "leased") return "leased";
      const why = failure.refusal === "revert_hold" ? "reverted_recently" : "stale";
      await discard(deps, key, fold, why === "stale" ? STALE : why, "discarded");
      return { skipped: why, foldId: fold.id };
    }
    case "unwanted":
    case "write":
      return { skipped: failure.reason, foldId: fold.id };
    case "budget":
      await discard(deps, key, current ?? fold, budgetDiscardReason(failure.refusal), "discarded");
      return { skipped: "budget_exceeded", foldId: fold.id };
    case "summary":
    case "too_large":
      return { done: "failed", foldId: fold.id };
  }
}
