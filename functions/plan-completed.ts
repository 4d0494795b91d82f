/** Lambda: EventBridge `PlanCompleted` -> maybe one recompaction offer in the inbox. */
import { createDeps } from "../core/composition/create-deps.js";
import { handlePlanCompleted } from "../core/adapters/events/handlers.js";

const deps = createDeps();

export const handler = async (event: { detail?: unknown }) => {
  const result = await handlePlanCompleted(deps, event.detail);
  deps.metrics.flush();
  return { offered: result.offered, itemId: result.item?.id ?? null };
};
