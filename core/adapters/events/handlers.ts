/**
 * The inbound event adapter: what the EventBridge rules (functions/*.ts), the local bus and the
 * chaos harness deliver. Each handler parses the raw detail with the event catalogue
 * (core/domain/events.ts) and hands the typed detail to its use case. A malformed detail would
 * fail the same way on every retry, so it is logged and dropped, never thrown.
 */
import { type EventName, parseDetail, type EventDetail } from "../../domain/events.js";
import type { ServiceDeps } from "../../services/deps.js";
import { offerRecompaction, runAcceptedOffer } from "../../services/inbox.js";
import { runQueuedFold, type WorkerOutcome } from "../../services/worker.js";

/** `run` on the parsed detail, or `dropped` (after an error log) when the detail is malformed. */
async function parsed<N extends EventName, R>(
  deps: ServiceDeps,
  name: N,
  raw: unknown,
  run: (detail: EventDetail<N>) => Promise<R>,
  dropped: R,
): Promise<R> {
  const result = parseDetail(name, raw);
  if (result.ok) return run(result.detail);
  deps.log.error(`${name} ignored: invalid detail`, { issues: result.issues });
  return dropped;
}

/** `PlanCompleted`: maybe one recompaction offer in the inbox. */
export const handlePlanCompleted = (deps: ServiceDeps, raw: unknown) =>
  parsed(deps, "PlanCompleted", raw, (detail) => offerRecompaction(deps, detail), { offered: false });

/** `InboxItemAnswered`: an accepted offer's range job, queued for the worker (null: nothing to do). */
export const handleInboxAnswered = (deps: ServiceDeps, raw: unknown) =>
  parsed(deps, "InboxItemAnswered", raw, (detail) => runAcceptedOffer(deps, detail), null);

/** `CompactionRequested`: the compaction worker runs the queued fold. */
export const handleCompactionRequested = (deps: ServiceDeps, raw: unknown): Promise<WorkerOutcome> =>
  parsed(deps, "CompactionRequested", raw, (detail) => runQueuedFold(deps, detail), { skipped: "invalid detail" });
