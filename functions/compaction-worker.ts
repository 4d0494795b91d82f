/**
 * Lambda: `CompactionRequested` -> the compaction worker (docs/compaction.md, "Off the turn's
 * critical path"); `ProcessEraseRequested` -> the erasure of a deleted process (docs/api.md,
 * "Deleting a process"). A failed delivery (another holder keeps the lease) throws, so Lambda's
 * asynchronous retries deliver it again; what still fails ends in the stage's dead-letter queue.
 */
import { createSummarizingDeps } from "../core/composition/summarizing-deps.js";
import { handleCompactionRequested, handleProcessEraseRequested } from "../core/adapters/events/handlers.js";
import { EVENTS } from "../core/domain/events.js";
import { createPowertoolsTracing } from "../core/adapters/tracing/powertools-tracing.js";
import { serviceNameOf } from "../core/composition/env.js";

const tracing = createPowertoolsTracing(serviceNameOf(process.env));
const deps = createSummarizingDeps(process.env, { tracing });

export const handler = (event: { "detail-type"?: string; detail?: unknown }) =>
  tracing.invocation(event, async () => {
    try {
      if (event["detail-type"] === EVENTS.ProcessEraseRequested.detailType) return await handleProcessEraseRequested(deps, event.detail);
      return await handleCompactionRequested(deps, event.detail);
    } finally {
      deps.metrics.flush();
    }
  });
