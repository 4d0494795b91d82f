/**
 * The events of a function that queues folds (docs/compaction.md, "The worker"):
 * `CompactionRequested` reaches the compaction worker by an asynchronous invoke when
 * `COMPACTION_WORKER_FUNCTION` names it; without it (locally) the in-process bus runs the worker.
 *
 * @example
 * const deps = withWorkerInvoker(createDeps()); // an InboxItemAnswered Lambda queues range jobs
 */
import { createWorkerInvoker } from "../adapters/events/worker-invoker.js";
import type { EventPublisher } from "../ports/events.js";
import type { Tracing } from "../ports/tracing.js";
import { workerFunctionOf } from "./env.js";

export function withWorkerInvoker<D extends { events: EventPublisher }>(deps: D, env: NodeJS.ProcessEnv = process.env, tracing?: Tracing): D {
  const worker = workerFunctionOf(env);
  if (worker) deps.events = createWorkerInvoker({ functionName: worker, next: deps.events, capture: tracing?.capture });
  return deps;
}
