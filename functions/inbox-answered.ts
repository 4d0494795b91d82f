/**
 * Lambda: EventBridge `InboxItemAnswered` -> an accepted offer's range job, queued for the
 * compaction worker; only for a tenant the event's account may act for (EVENT_PUBLISHERS; the
 * function's own account, where the answer endpoint publishes, for any).
 */
import { createDeps } from "../core/composition/create-deps.js";
import { readEventPublishers, serviceNameOf } from "../core/composition/env.js";
import { withWorkerInvoker } from "../core/composition/worker-events.js";
import { accountOfArn, accountPublishers } from "../core/domain/event-publishers.js";
import { receiveInboxAnswered, type IncomingEvent } from "../core/adapters/events/handlers.js";
import { createPowertoolsTracing } from "../core/adapters/tracing/powertools-tracing.js";

const tracing = createPowertoolsTracing(serviceNameOf(process.env));
const deps = withWorkerInvoker(createDeps({ tracing }), process.env, tracing);
const grants = readEventPublishers(process.env);

export const handler = (event: IncomingEvent, context?: { invokedFunctionArn?: string }) =>
  tracing.invocation(event, async () => {
    const publishers = accountPublishers(grants, accountOfArn(context?.invokedFunctionArn));
    const result = await receiveInboxAnswered(deps, publishers, event);
    deps.metrics.flush();
    return result ?? { skipped: true };
  });
