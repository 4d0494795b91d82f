/**
 * Queued folds (docs/compaction.md, "Off the turn's critical path"): the fold a worker job is for,
 * and range jobs of accepted offers. Their writes (queue, discard) are ./transitions.ts.
 */
import { notFound } from "../../domain/errors.js";
import { asFold, type LiveFold } from "../../domain/fold/lifecycle.js";
import { jobFold } from "../../domain/fold/usability.js";
import type { Memory } from "../../domain/model.js";
import { selectRange, type RangeRequest } from "../../domain/range.js";
import type { ProcessKey } from "../../ports/store.js";
import type { ServiceDeps } from "../deps.js";
import type { RangeResult } from "./range-compaction.js";
import { settledView } from "./settle.js";
import { discard, queueFold, requestFold } from "./transitions.js";

/**
 * The fold a worker job is for, read afresh on every attempt, while it still has `status` and has
 * not expired (an expired one is discarded); else why the job ends.
 */
export async function foldForJob<S extends LiveFold["status"]>(deps: ServiceDeps, key: ProcessKey, foldId: string, status: S) {
  const row = await deps.store.getMemory(key, foldId);
  const job = jobFold(row && asFold(row), status, deps.clock.now().getTime());
  if ("fold" in job) return job;
  if (job.discard) await discard(deps, key, job.discard);
  return { skipped: job.skipped, foldId };
}

/**
 * An accepted offer's range compaction, queued for the worker once (docs/compaction.md, "Range
 * jobs"). The offer records its job's id before the job is stored, so every later delivery of the
 * answer finds that job: still QUEUED, it asks the worker for it again; committed, undone or
 * discarded, it does nothing, so a redelivered answer never folds again a range the user undid.
 * A delivery that finds the range already folded before any job was recorded queues nothing.
 */
export async function queueRangeJob(
  deps: ServiceDeps,
  key: ProcessKey,
  range: RangeRequest & { inboxItemId: string },
  recordedJobId?: string,
): Promise<RangeResult> {
  const view = await settledView(deps, key);
  const none = { compactedMessages: 0, markerMessageId: null };
  const queued = (id: string) => ({ ...none, memoryId: id, reason: "compaction_queued" });
  let jobId = recordedJobId;
  if (jobId === undefined) {
    // A job queued before its offer recorded one is adopted, not queued a second time.
    const waiting = view.folds.find((f) => f.metadata.job === "range" && f.metadata.inboxItemId === range.inboxItemId);
    if (!waiting && selectRange(view.messages, range).length === 0) return { ...none, memoryId: null, reason: "nothing_in_range" };
    const candidate = waiting?.id ?? deps.ids.memory(deps.clock.now());
    const claim = await deps.store.claimRangeJob(key.tenantId, range.inboxItemId, candidate);
    if (!claim.ok) throw notFound("inbox item", range.inboxItemId, "inbox_item");
    if (claim.jobId === candidate && !waiting) return queued((await queueFold(deps, key, view, { mode: "RANGE", job: "range", range, id: candidate })).id);
    jobId = claim.jobId;
  }
  const job = await deps.store.getMemory(key, jobId);
  // Recorded but not stored (the recording delivery died, or is storing it right now): store it
  // under the recorded id; of two such deliveries one stores it and both ask the worker for it.
  if (!job) return queued((await queueFold(deps, key, view, { mode: "RANGE", job: "range", range, id: jobId })).id);
  if (job.status === "QUEUED") {
    await requestFold(deps, key, job);
    return queued(job.id);
  }
  return { ...none, memoryId: job.id, reason: rangeJobEnd(job) };
}

/** Why a recorded range job needs nothing more: it folded the range, was undone, or was discarded (with its reason). */
function rangeJobEnd(job: Memory): string {
  if (job.status === "OK") return "already_folded";
  if (job.status === "DISCARDED") return job.metadata.discardReason ?? "discarded";
  return job.status.toLowerCase();
}
