/** Lambda: EventBridge `InboxItemAnswered` -> an accepted offer's range job, queued for the compaction worker. */
import { createDeps } from "../core/composition/create-deps.js";
import { withWorkerInvoker } from "../core/composition/worker-events.js";
import { handleInboxAnswered } from "../core/adapters/events/handlers.js";

const deps = withWorkerInvoker(createDeps());

export const handler = async (event: { detail?: unknown }) => {
  const result = await handleInboxAnswered(deps, event.detail);
  deps.metrics.flush();
  return result ?? { skipped: true };
};
