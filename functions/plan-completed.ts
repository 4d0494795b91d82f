/** Lambda: EventBridge `PlanCompleted` -> maybe one recompaction offer in the inbox. */
import { handlePlanCompleted } from "../core/services/inbox.js";
import { createDeps } from "../core/composition/create-deps.js";

const deps = createDeps();

export const handler = async (event: { detail?: unknown }) => {
  const result = await handlePlanCompleted(deps, event.detail);
  deps.metrics.flush();
  return { offered: result.offered, itemId: result.item?.id ?? null };
};
