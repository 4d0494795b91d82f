/**
 * Lambda: EventBridge `CompactionRequested` -> the compaction worker (docs/compaction.md, "Off the
 * turn's critical path"). A failed delivery (another holder keeps the lease) throws, so Lambda's
 * asynchronous retries deliver it again; what still fails ends in the stage's dead-letter queue.
 */
import { createSummarizingDeps } from "../core/composition/summarizing-deps.js";
import { handleCompactionRequested } from "../core/adapters/events/handlers.js";

const deps = createSummarizingDeps();

export const handler = async (event: { detail?: unknown }) => {
  try {
    return await handleCompactionRequested(deps, event.detail);
  } finally {
    deps.metrics.flush();
  }
};
