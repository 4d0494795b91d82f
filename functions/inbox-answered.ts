/** Lambda: EventBridge `InboxItemAnswered` -> the range compaction of an accepted offer. */
import { handleInboxAnswered } from "../core/services/inbox.js";
import { createSummarizingDeps } from "../core/composition/summarizing-deps.js";

const deps = createSummarizingDeps();

export const handler = async (event: { detail?: unknown }) => {
  const result = await handleInboxAnswered(deps, event.detail);
  deps.metrics.flush();
  return result ?? { skipped: true };
};
