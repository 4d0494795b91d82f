/**
 * The inbound event adapter: what the EventBridge rules (functions/*.ts), the local bus and the
 * chaos harness deliver. Each handler parses the raw detail with the event catalogue
 * (core/domain/events.ts) and hands the typed detail to its use case. A malformed detail would
 * fail the same way on every retry, so it is logged, counted and dropped, never thrown.
 *
 * Events from outside the service go through `receive…`, which first checks that the event's
 * publisher may act for the tenant its detail names (core/domain/event-publishers.ts): an event
 * for any other tenant is logged, counted and dropped. The `handle…` forms skip that check; they
 * are for deliveries inside one process (the chaos harness), where nothing comes from outside.
 */
import type { PublisherPolicy } from "../../domain/event-publishers.js";
import { type EventName, parseDetail, type EventDetail } from "../../domain/events.js";
import type { ServiceDeps } from "../../services/deps.js";
import { offerRecompaction, runAcceptedOffer } from "../../services/recompaction-offers.js";
import { runQueuedFold, type WorkerOutcome } from "../../services/compaction/worker.js";
import { eraseProcess } from "../../services/process-deletion.js";

/** What the adapter reads of an EventBridge event (or a local bus delivery): who put it, and its detail. */
export interface IncomingEvent {
  /** The publisher's AWS account, stamped by EventBridge; unset for a delivery inside the process. */
  account?: string;
  detail?: unknown;
}

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
  deps.metrics.eventDropped(name, "invalid_detail");
  return dropped;
}

/** `run` when the event's publisher may act for the tenant its detail names, else `dropped`. */
function bound<N extends "PlanCompleted" | "InboxItemAnswered", R>(
  deps: ServiceDeps,
  publishers: PublisherPolicy,
  name: N,
  event: IncomingEvent,
  run: (detail: EventDetail<N>) => Promise<R>,
  dropped: R,
): Promise<R> {
  return parsed(
    deps,
    name,
    event.detail,
    async (detail) => {
      if (publishers(event.account, detail.tenantId)) return run(detail);
      deps.log.warn(`${name} dropped: publisher may not act for the tenant`, { account: event.account, tenantId: detail.tenantId });
      deps.metrics.eventDropped(name, "publisher_not_allowed");
      return dropped;
    },
    dropped,
  );
}

/** `PlanCompleted`: maybe one recompaction offer in the inbox. */
export const handlePlanCompleted = (deps: ServiceDeps, raw: unknown) =>
  parsed(deps, "PlanCompleted", raw, (detail) => offerRecompaction(deps, detail), { offered: false });

/** `InboxItemAnswered`: an accepted offer's range job, queued for the worker (null: nothing to do). */
export const handleInboxAnswered = (deps: ServiceDeps, raw: unknown) =>
  parsed(deps, "InboxItemAnswered", raw, (detail) => runAcceptedOffer(deps, detail), null);

/** `PlanCompleted` from outside the process, bound to its publisher's tenants. */
export const receivePlanCompleted = (deps: ServiceDeps, publishers: PublisherPolicy, event: IncomingEvent) =>
  bound(deps, publishers, "PlanCompleted", event, (detail) => offerRecompaction(deps, detail), { offered: false } as Awaited<
    ReturnType<typeof offerRecompaction>
  >);

/** `InboxItemAnswered` from outside the process, bound to its publisher's tenants. */
export const receiveInboxAnswered = (deps: ServiceDeps, publishers: PublisherPolicy, event: IncomingEvent) =>
  bound(deps, publishers, "InboxItemAnswered", event, (detail) => runAcceptedOffer(deps, detail), null);

/** `ProcessEraseRequested`: the compaction worker erases what is left of a deleted process. */
export const handleProcessEraseRequested = (deps: ServiceDeps, raw: unknown) =>
  parsed(deps, "ProcessEraseRequested", raw, (detail) => eraseProcess(deps, detail), { erased: 0 });

/** `CompactionRequested`: the compaction worker runs the queued fold. */
export const handleCompactionRequested = (deps: ServiceDeps, raw: unknown): Promise<WorkerOutcome> =>
  parsed(deps, "CompactionRequested", raw, (detail) => runQueuedFold(deps, detail), { skipped: "invalid detail" });
