/**
 * Compaction metrics as CloudWatch EMF through Powertools: `vance.memory.compaction` (count) and
 * `vance.memory.compaction.messages` (one value per run), both with the dimension `mode`; and
 * `vance.memory.revert` / `vance.memory.revert.messages` for undone compactions.
 */
import { Metrics as PowertoolsMetrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { CompactionMetricMode, Metrics } from "../../ports/metrics.js";

export function createEmfMetrics(options: { namespace?: string; serviceName?: string } = {}): Metrics {
  const metrics = new PowertoolsMetrics({
    namespace: options.namespace ?? process.env.POWERTOOLS_METRICS_NAMESPACE ?? "Vancetope/Memory",
    serviceName: options.serviceName ?? process.env.POWERTOOLS_SERVICE_NAME ?? "vancetope-memory",
  });
  return {
    compaction(mode: CompactionMetricMode, compactedMessages: number) {
      // One EMF document per run keeps the `mode` dimension on both metrics.
      const single = metrics.singleMetric();
      single.addDimension("mode", mode);
      single.addMetric("vance.memory.compaction", MetricUnit.Count, 1);
      single.addMetric("vance.memory.compaction.messages", MetricUnit.Count, compactedMessages);
    },
    revert(restoredMessages: number) {
      const single = metrics.singleMetric();
      single.addMetric("vance.memory.revert", MetricUnit.Count, 1);
      single.addMetric("vance.memory.revert.messages", MetricUnit.Count, restoredMessages);
    },
    flush() {
      metrics.publishStoredMetrics();
    },
  };
}

/** Records metrics in memory (tests, the chaos harness). */
export function createRecordingMetrics() {
  const runs: Array<{ mode: CompactionMetricMode; compactedMessages: number }> = [];
  const reverts: number[] = [];
  const metrics: Metrics & { runs: typeof runs; reverts: typeof reverts } = {
    runs,
    reverts,
    compaction: (mode, compactedMessages) => void runs.push({ mode, compactedMessages }),
    revert: (restoredMessages) => void reverts.push(restoredMessages),
    flush: () => {},
  };
  return metrics;
}
