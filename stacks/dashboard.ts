/**
 * The stage's CloudWatch dashboard (docs/operations.md, "The dashboard"): what compaction does and
 * saves, how fast turns and summaries are, where summaries fail, and what the queue and the table
 * carry. Every service metric on it is one the code emits (test/infra/monitoring.test.ts checks).
 */
import { Duration, type Stack } from "aws-cdk-lib";
import {
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  LogQueryVisualizationType,
  LogQueryWidget,
  Metric,
  Stats,
  TextWidget,
  type Alarm,
  type IMetric,
} from "aws-cdk-lib/aws-cloudwatch";
import type { App } from "sst/constructs";
import { PROVIDER_NAMES } from "../core/adapters/llm/provider-descriptors.js";
import { FOLD_MODES } from "../core/domain/mode-policy.js";
import type { CompactionMetricMode } from "../core/ports/metrics.js";
import { emfMetric, failedFoldShare, TABLE_OPERATIONS, turnLatency, WORKER_TIMEOUTS_METRIC, type Watched } from "./alarms.js";
import { METRICS_NAMESPACE } from "./stage.js";

/**
 * The dashboard's table of the newest failed and fallen-back folds, over the logs of the two
 * functions that summarize most (the runbook's queries are checked on real lines with it). One
 * command per line: CDK joins them with `|`.
 */
export const FAILED_FOLDS_QUERY = [
  "fields @timestamp, message, processId, memoryId, code",
  'filter message = "compaction failed: summarizer" or message = "compaction fell back to the offline summarizer"',
  "sort @timestamp desc",
  "limit 20",
];

/** Every value of the compaction metrics' `mode` dimension. */
export const METRIC_MODES: CompactionMetricMode[] = [...FOLD_MODES.map((m) => m.toLowerCase() as Lowercase<typeof m>), "range", "clear"];

const WIDTH = 8;
const HEIGHT = 6;

const graph = (title: string, left: IMetric[], right: IMetric[] = []) => new GraphWidget({ title, left, right, width: WIDTH, height: HEIGHT });

const byMode = (name: string) => METRIC_MODES.map((mode) => emfMetric(name, { mode }).with({ label: mode }));
const byProvider = (name: string, statistic: string) => PROVIDER_NAMES.map((provider) => emfMetric(name, { provider }, statistic).with({ label: `${provider} ${statistic}` }));

/** Builds the dashboard `<stage>-vancetope-memory`, with every alarm's state on top. */
export function stageDashboard(stack: Stack, app: App, w: Watched, alarms: Alarm[]): Dashboard {
  const dashboard = new Dashboard(stack, "Dashboard", { dashboardName: app.logicalPrefixedName("dashboard"), defaultInterval: Duration.hours(6) });
  dashboard.addWidgets(
    new TextWidget({
      markdown: "**Vancetope Memory** — what each alarm means and what to do: docs/operations.md in the repository.",
      width: 24,
      height: 1,
    }),
  );
  dashboard.addWidgets(new AlarmStatusWidget({ title: "Alarms", alarms, width: 24, height: 3 }));
  dashboard.addWidgets(
    new LogQueryWidget({
      title: "Newest failed or fallen-back folds (turn routes and worker)",
      logGroupNames: [w.turnFunction.logGroup.logGroupName, w.worker.logGroup.logGroupName],
      queryLines: FAILED_FOLDS_QUERY,
      view: LogQueryVisualizationType.TABLE,
      width: 24,
      height: 6,
    }),
  );
  dashboard.addWidgets(
    graph("Compactions by mode", byMode("vance.memory.compaction")),
    graph("Tokens saved by mode", byMode("vance.memory.compaction.tokens_saved")),
    graph("Messages folded (or results cleared) by mode", byMode("vance.memory.compaction.messages")),
  );
  dashboard.addWidgets(
    graph(
      "Turn latency (POST .../turns)",
      [turnLatency(w.httpApi, Stats.p(50)).with({ label: "p50" }), turnLatency(w.httpApi, Stats.p(99)).with({ label: "p99" })],
      [w.turnFunction.metricDuration({ statistic: Stats.p(99) }).with({ label: "function p99" })],
    ),
    graph("Summarizer latency by provider", [...byProvider("vance.memory.summarizer.wall_ms", Stats.p(50)), ...byProvider("vance.memory.summarizer.wall_ms", Stats.p(99))]),
    graph("Summarizer errors by provider", byProvider("vance.memory.summarizer.errors", Stats.SUM)),
  );
  dashboard.addWidgets(
    graph(
      "Fold outcomes",
      [
        emfMetric("vance.memory.fold", { outcome: "ok" }).with({ label: "ok" }),
        emfMetric("vance.memory.fold", { outcome: "failed" }).with({ label: "failed" }),
        emfMetric("vance.memory.quality_gate.refused").with({ label: "quality gate refused" }),
        emfMetric("vance.memory.summarizer.fallback").with({ label: "offline fallback" }),
      ],
      [failedFoldShare(Duration.minutes(5))],
    ),
    graph(
      "Prepared folds and reverts",
      [
        ...(["used", "discarded", "expired", "extended"] as const).map((outcome) => emfMetric("vance.memory.prepared_fold", { outcome }).with({ label: `prepared ${outcome}` })),
        emfMetric("vance.memory.revert").with({ label: "reverts" }),
      ],
    ),
    graph(
      "Compaction worker",
      [
        w.worker.metricInvocations({ statistic: Stats.SUM }),
        w.worker.metricErrors({ statistic: Stats.SUM }),
        // Reserved concurrency in use: queued folds wait in Lambda's asynchronous queue.
        w.worker.metricThrottles({ statistic: Stats.SUM }),
        // Counted from the worker's log by a metric filter (alarms.ts): no `service` dimension.
        new Metric({ namespace: METRICS_NAMESPACE, metricName: WORKER_TIMEOUTS_METRIC, statistic: Stats.SUM, label: "timeouts" }),
      ],
      [w.worker.metricDuration({ statistic: Stats.p(99) }).with({ label: "duration p99" })],
    ),
  );
  dashboard.addWidgets(
    graph("Dead-letter queue", [w.dlq.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM })], [
      w.dlq.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM }),
    ]),
    graph("Table consumed capacity (RCU / WCU)", [
      w.table.metricConsumedReadCapacityUnits({ statistic: Stats.SUM }),
      w.table.metricConsumedWriteCapacityUnits({ statistic: Stats.SUM }),
    ]),
  );
  // Each of the table's sums is a math expression over one metric per operation, under the same
  // ids: one graph each.
  dashboard.addWidgets(
    graph("Table throttled requests", [w.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: Duration.minutes(5) })]),
    graph("Table system errors", [w.table.metricSystemErrorsForOperations({ operations: TABLE_OPERATIONS, period: Duration.minutes(5) })]),
    graph("API 5xx and requests", [w.httpApi.metricServerError({ statistic: Stats.SUM })], [w.httpApi.metricCount({ statistic: Stats.SUM })]),
  );
  return dashboard;
}
