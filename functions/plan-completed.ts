/**
 * Lambda: EventBridge `PlanCompleted` -> maybe one recompaction offer in the inbox, only for a
 * tenant the event's account may act for (EVENT_PUBLISHERS; the function's own account for any).
 */
import { createDeps } from "../core/composition/create-deps.js";
import { readEventPublishers, serviceNameOf } from "../core/composition/env.js";
import { accountOfArn, accountPublishers } from "../core/domain/event-publishers.js";
import { receivePlanCompleted, type IncomingEvent } from "../core/adapters/events/handlers.js";
import { createPowertoolsTracing } from "../core/adapters/tracing/powertools-tracing.js";

const tracing = createPowertoolsTracing(serviceNameOf(process.env));
const deps = createDeps({ tracing });
const grants = readEventPublishers(process.env);

export const handler = (event: IncomingEvent, context?: { invokedFunctionArn?: string }) =>
  tracing.invocation(event, async () => {
    const publishers = accountPublishers(grants, accountOfArn(context?.invokedFunctionArn));
    const result = await receivePlanCompleted(deps, publishers, event);
    deps.metrics.flush();
    return { offered: result.offered, itemId: result.item?.id ?? null };
  });
