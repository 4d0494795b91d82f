/**
 * Compaction metrics as CloudWatch EMF through Powertools: `vance.memory.compaction` (count) and
 * `vance.memory.compaction.messages` (one value per run), both with the dimension `mode`;
 * `vance.memory.summarizer.wall_ms` per fold (dimension `mode`) and `vance.memory.prepared_fold`
 * (dimension `outcome`: used, discarded, expired).
 */
import { Metrics as PowertoolsMetrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { CompactionMetricMode, Metrics, PreparedFoldOutcome } from "../../ports/metrics.js";

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
    summarizerWallTime(mode, ms) {
      const single = metrics.singleMetric();
      single.addDimension("mode", mode);
      single.addMetric("vance.memory.summarizer.wall_ms", MetricUnit.Milliseconds, ms);
    },
    preparedFold(outcome) {
      const single = metrics.singleMetric();
      single.addDimension("outcome", outcome);
      single.addMetric("vance.memory.prepared_fold", MetricUnit.Count, 1);
    },
    flush() {
      metrics.publishStoredMetrics();
    },
  };
}

/** Records metrics in memory (tests, the chaos harness). */
export function createRecordingMetrics() {
  const runs: Array<{ mode: CompactionMetricMode; compactedMessages: number }> = [];
  const wallTimes: Array<{ mode: CompactionMetricMode; ms: number }> = [];
  const prepared: PreparedFoldOutcome[] = [];
  const metrics: Metrics & { runs: typeof runs; wallTimes: typeof wallTimes; prepared: typeof prepared } = {
    runs,
    wallTimes,
    prepared,
    compaction: (mode, compactedMessages) => void runs.push({ mode, compactedMessages }),
    summarizerWallTime: (mode, ms) => void wallTimes.push({ mode, ms }),
    preparedFold: (outcome) => void prepared.push(outcome),
    flush: () => {},
  };
  return metrics;
}
