/**
 * Lambda: `CompactionRequested` -> the compaction worker (docs/compaction.md, "Off the turn's
 * critical path"); `ProcessEraseRequested` -> the erasure of a deleted process (docs/api.md,
 * "Deleting a process"). A failed delivery (another holder keeps the lease) throws, so Lambda's
 * asynchronous retries deliver it again; what still fails ends in the stage's dead-letter queue.
 */
import { createSummarizingDeps } from "../core/composition/summarizing-deps.js";
import { handleCompactionRequested, handleProcessEraseRequested } from "../core/adapters/events/handlers.js";
import { EVENTS } from "../core/domain/events.js";

const deps = createSummarizingDeps();

export const handler = async (event: { "detail-type"?: string; detail?: unknown }) => {
  try {
    if (event["detail-type"] === EVENTS.ProcessEraseRequested.detailType) return await handleProcessEraseRequested(deps, event.detail);
    return await handleCompactionRequested(deps, event.detail);
  } finally {
    deps.metrics.flush();
  }
};
