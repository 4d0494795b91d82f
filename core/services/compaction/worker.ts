/**
 * The compaction worker (docs/compaction.md, "The worker"): runs one queued fold per
 * `CompactionRequested` delivery, under the process lease, by the table of job kinds {@link JOBS}.
 * Prepare jobs store a PREPARED fold (never replayed); manual and range jobs commit as the queued
 * row's id; commit jobs commit a PREPARED fold a turn found due.
 */
import { conflict } from "../../domain/errors.js";
import type { EventDetail } from "../../domain/events.js";
import { planFold } from "../../domain/fold-plan.js";
import { asFold, type QueuedFold, type RequestedJob } from "../../domain/fold/lifecycle.js";
import { budgetDiscardReason, endsRangeJob, retryHelps, wireReason } from "../../domain/fold/refusal.js";
import { runsOn, STALE } from "../../domain/fold/usability.js";
import type { Memory } from "../../domain/model.js";
import type { FoldModeName } from "../../domain/mode-policy.js";
import { replayTokens } from "../../domain/replay.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import { foldIfNeeded } from "./compaction.js";
import type { ServiceDeps } from "../deps.js";
import { foldForJob } from "./fold-queue.js";
import { runFold } from "./fold-pipeline.js";
import { AGAIN, retrying } from "./lease.js";
import { foldRange } from "./range-compaction.js";
import { settledView } from "./settle.js";
import { tagBeforeFold } from "../strength-tagging.js";
import { foldReadyInTime } from "./fold-ahead.js";
import { commitWhenDue, leaseWait } from "./worker-commit.js";
import { discard, preparing } from "./transitions.js";

export type WorkerOutcome =
  | { done: "prepared" | "committed" | "failed"; foldId: string; compactedMessages?: number; next?: string }
  | { skipped: string; foldId?: string };

type RowJob = (deps: ServiceDeps, key: ProcessKey, fold: QueuedFold) => Promise<WorkerOutcome | "leased">;
type RequestJob = (deps: ServiceDeps, detail: EventDetail<"CompactionRequested">) => Promise<WorkerOutcome>;

/**
 * Each job kind a `CompactionRequested` names, and how the worker runs it: a job on a QUEUED row
 * (`row`, by the row's own job, so a late or redelivered request runs what was queued), or a
 * request of its own (`request`). A new kind is one row here and one in the FoldJob enum.
 */
const JOBS: Record<RequestedJob, { row: RowJob } | { request: RequestJob }> = {
  prepare: { row: (deps, key, fold) => forState(deps, key, fold, prepare) },
  manual: { row: (deps, key, fold) => forState(deps, key, fold, runManual) },
  range: { row: runRange },
  // A prepared fold that is due: committed here rather than in a turn (services/worker-commit.ts).
  commit: { request: commitWhenDue },
};

/**
 * Runs one queued fold. Safe to deliver twice or late: only a fold still QUEUED (a prepare or
 * manual job only on the state it was queued for) is worked on; the lease keeps one job per
 * process at a time; each result is a conditional write on the fold's status. Throws (so the
 * delivery is retried) while another holder keeps the lease, and when a range job's summary failed
 * for a reason a retry may not meet again. A job the tenant's daily budget refuses, or a range past
 * `maxSummarizerCalls`, is discarded with its reason instead: a retry would meet the same refusal.
 */
export async function runQueuedFold(deps: ServiceDeps, detail: EventDetail<"CompactionRequested">): Promise<WorkerOutcome> {
  const kind = JOBS[detail.job ?? "prepare"];
  if ("request" in kind) return kind.request(deps, detail);
  const { tenantId, processId, foldId } = detail;
  const key = { tenantId, processId };
  const again = () => conflict("compaction.retry_later", `process '${processId}' is being compacted; deliver fold '${foldId}' again`);
  return retrying(deps, leaseWait(deps), async () => {
    // Read afresh on every attempt.
    const job = await foldForJob(deps, key, foldId, "QUEUED");
    if (!("fold" in job)) return job;
    const run = JOBS[job.fold.job];
    const outcome = "row" in run ? await run.row(deps, key, job.fold) : { skipped: `fold is a ${job.fold.job} job`, foldId };
    return outcome === "leased" ? AGAIN : outcome;
  }, again);
}

/** A prepare or manual job only runs on the state it was queued for (a range job runs on any). */
async function forState(deps: ServiceDeps, key: ProcessKey, fold: QueuedFold, run: (deps: ServiceDeps, key: ProcessKey, view: ActiveView, fold: QueuedFold) => Promise<WorkerOutcome | "leased">) {
  const view = await settledView(deps, key);
  if (!runsOn(fold, view)) {
    await discard(deps, key, { fold, reason: STALE, outcome: "discarded" });
    return { skipped: "stale", foldId: fold.id };
  }
  return run(deps, key, view, fold);
}

/** A queued manual compaction: the fold is summarized and committed here, as the queued row's id. */
async function runManual(deps: ServiceDeps, key: ProcessKey, view: ActiveView, fold: QueuedFold): Promise<WorkerOutcome | "leased"> {
  const m = fold.memory.metadata;
  const result = await foldIfNeeded(
    deps,
    key,
    {
      model: { contextWindow: m.contextWindow! },
      prompt: { tokens: m.tokensBefore ?? 0 },
      ...(fold.mode !== "RANGE" && m.forced ? { force: fold.mode } : {}),
      ...(m.instructions ? { instructions: m.instructions } : {}),
    },
    { view, queuedFoldId: fold.id, foldUnit: m.foldUnit },
  );
  if (result.compacted) return { done: "committed", foldId: fold.id };
  if (result.refusal?.kind === "lease" && result.refusal.refusal === "leased") return "leased";
  const reason = result.budget ? budgetDiscardReason(result.budget) : (result.reason ?? "not_needed: below the soft threshold");
  await discard(deps, key, { fold, reason, outcome: "discarded" });
  return { done: "failed", foldId: fold.id };
}

/**
 * A range job: the accepted offer's range folded and committed here, as the queued row's id (so
 * it commits once). A range already folded ends the job; backing off waits for the lease; a
 * failed summary fails the delivery and leaves the row QUEUED, so the retry folds it.
 */
async function runRange(deps: ServiceDeps, key: ProcessKey, fold: QueuedFold): Promise<WorkerOutcome | "leased"> {
  const m = fold.memory.metadata;
  const range = { from: m.rangeFromAt ?? "", to: m.rangeToAt ?? "", topicLabel: m.topicLabel ?? "" };
  const result = await foldRange(deps, key, range, { queuedFoldId: fold.id });
  if (result.compactedMessages > 0) return { done: "committed", foldId: fold.id, compactedMessages: result.compactedMessages };
  if (result.reason === "nothing_in_range") {
    await discard(deps, key, { fold, reason: "nothing_in_range", outcome: "discarded" });
    return { skipped: "nothing_in_range", foldId: fold.id };
  }
  const refusal = result.refusal;
  if (refusal && retryHelps(refusal)) return "leased";
  // Not a passing trouble: the same range would make the same summary again, or need as many calls.
  if (refusal && endsRangeJob(refusal)) {
    const reason = refusal.kind === "budget" ? budgetDiscardReason(refusal.refusal) : wireReason(refusal);
    await discard(deps, key, { fold, reason, outcome: "discarded" });
    return { done: "failed", foldId: fold.id };
  }
  throw conflict("compaction.retry_later", `range job '${fold.id}' did not run (${result.reason}); deliver again`, { reason: result.reason });
}

/** A prepare job: summarize what the fold's mode selects now, store it PREPARED (never replayed). */
async function prepare(deps: ServiceDeps, key: ProcessKey, read: ActiveView, queued: QueuedFold): Promise<WorkerOutcome | "leased"> {
  const fold = queued.memory;
  const mode: FoldModeName = queued.mode === "RANGE" ? "HARD" : queued.mode;
  const tunables = await deps.tunables.forProcess(key.tenantId, read.state.process.projectId);
  const { view, strengthAnalyzer } = await tagBeforeFold(deps, key, read, tunables, mode);
  const own = replayTokens(view);
  // The turn that queued the fold passed its gate; the worker only plans what to take now.
  // What it keeps whole is the rule of the model the fold was queued for (docs/turns.md, "What a fold may keep").
  const unit = fold.metadata.foldUnit;
  const plan = planFold(view.messages, mode, tunables, { contextWindow: fold.metadata.contextWindow, own, tokensBefore: fold.metadata.tokensBefore ?? own, minSaving: false, unit });
  if (!plan.ok) {
    await discard(deps, key, { fold: queued, reason: plan.reason, outcome: "discarded" });
    return { skipped: "nothing to fold", foldId: fold.id };
  }
  // A process that grows fast gets what one summarizer call holds, ready one call after it was queued.
  const tokens = fold.metadata.tokensBefore ?? own;
  const toFold = foldReadyInTime(deps, view, tunables, plan.fold, { tokens, scale: own > 0 ? tokens / own : 1, contextWindow: fold.metadata.contextWindow, unit });
  let current: Memory | null = fold;
  const analyzed = strengthAnalyzer ? { strengthAnalyzer } : {};
  const run = await runFold(
    deps,
    key,
    view,
    tunables,
    // After an undo the same fold is not prepared again until the replay grew (docs/compaction.md).
    { fold: toFold, mode, contextWindow: fold.metadata.contextWindow, holdCheckTokens: plan.holdCheckTokens },
    {
      // A duplicate delivery may have prepared this fold between our read and our lease: preparing
      // does not move the version the lease checks, so the row itself is read again under the lease.
      stillWanted: async () => {
        current = await deps.store.getMemory(key, fold.id);
        return current?.status === "QUEUED" ? null : `fold is ${current?.status ?? "gone"}`;
      },
      ...preparing(deps, key, fold, { mode, extra: analyzed }),
    },
  );
  if (run.ok) return { done: "prepared", foldId: fold.id };
  const refusal = run.refusal;
  switch (refusal.kind) {
    case "summarizer":
      await discard(deps, key, { fold: queued, reason: refusal.reason, outcome: "discarded" });
      return { skipped: refusal.reason, foldId: fold.id };
    case "lease": {
      if (refusal.refusal === "leased") return "leased";
      const why = refusal.refusal === "revert_hold" ? "reverted_recently" : "stale";
      await discard(deps, key, { fold: queued, reason: why === "stale" ? STALE : why, outcome: "discarded" });
      return { skipped: why, foldId: fold.id };
    }
    case "budget": {
      // The row as read under the lease: discarded only while it still has that status.
      const row = current ? asFold(current) : queued;
      if (row.status === "QUEUED" || row.status === "PREPARED") await discard(deps, key, { fold: row, reason: budgetDiscardReason(refusal.refusal), outcome: "discarded" });
      return { skipped: "budget_exceeded", foldId: fold.id };
    }
    case "summary":
    case "too_large":
      return { done: "failed", foldId: fold.id };
    default:
      // The fold's row moved on meanwhile (unwanted, write), or any other refusal: nothing to discard.
      return { skipped: wireReason(refusal), foldId: fold.id };
  }
}
