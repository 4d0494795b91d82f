/**
 * The stage's alarms (docs/operations.md says what each means and what to do): one per trouble an
 * operator must hear of, each on a metric the service or AWS really emits, each notifying the
 * stage's alarm topic when it fires and when it clears.
 */
import { Duration, type Stack } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import { Alarm, ComparisonOperator, MathExpression, Metric, Stats, TreatMissingData, type IMetric } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Operation, type ITable } from "aws-cdk-lib/aws-dynamodb";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { FilterPattern, MetricFilter, type ILogGroup } from "aws-cdk-lib/aws-logs";
import type { ITopic } from "aws-cdk-lib/aws-sns";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import type { App } from "sst/constructs";
import type { AlarmSettings, AlarmThresholdName } from "./alarm-settings.js";
import { METRICS_NAMESPACE, SERVICE_NAME } from "./stage.js";

/** What the alarms and the dashboard watch, from the stage's other stacks. */
export interface Watched {
  table: ITable;
  dlq: IQueue;
  worker: IFunction & { logGroup: ILogGroup };
  /** The function serving the turn route (and the other summarizing routes). */
  turnFunction: IFunction & { logGroup: ILogGroup };
  httpApi: HttpApi;
}

/** The route whose latency is alarmed on; API Gateway reports it per route once detailed metrics are on. */
export const TURN_ROUTE = "POST /v1/processes/{processId}/turns";
/** SST serves the API from the `$default` stage. */
export const API_STAGE = "$default";
/** The table operations the service uses (core/adapters/dynamodb): an alarm's math takes at most 10 metrics. */
export const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.QUERY,
  Operation.TRANSACT_WRITE_ITEMS,
];
/** Lambda's own line for an invocation that ran out of time (not a Powertools JSON line). */
export const TIMEOUT_LOG_TEXT = "Task timed out";
/** The metric the worker's log group counts timeouts into (a metric filter, not EMF). */
export const WORKER_TIMEOUTS_METRIC = "vance.memory.worker.timeouts";

const FIVE_MINUTES = Duration.minutes(5);
const FIFTEEN_MINUTES = Duration.minutes(15);

/** A metric the service emits through EMF (core/adapters/metrics/emf-metrics.ts), under its `service` dimension. */
export function emfMetric(name: string, dimensions: Record<string, string> = {}, statistic: string = Stats.SUM, period = FIVE_MINUTES): Metric {
  return new Metric({ namespace: METRICS_NAMESPACE, metricName: name, dimensionsMap: { service: SERVICE_NAME, ...dimensions }, statistic, period });
}

/** The turn route's latency (API Gateway, detailed route metrics). */
export function turnLatency(httpApi: HttpApi, statistic: string): Metric {
  return new Metric({
    namespace: "AWS/ApiGateway",
    metricName: "Latency",
    dimensionsMap: { ApiId: httpApi.apiId, Stage: API_STAGE, Route: TURN_ROUTE },
    statistic,
    period: FIVE_MINUTES,
  });
}

/**
 * The fewest folds in a period whose failed share counts: one failed fold of a quiet quarter hour
 * is not a trend (the provider's errors have their own signals on the dashboard).
 */
export const MIN_FOLDS_FOR_SHARE = 3;

/** Percent of the summarizing folds whose summary failed; 0 below {@link MIN_FOLDS_FOR_SHARE} folds. */
export function failedFoldShare(period = FIFTEEN_MINUTES): MathExpression {
  return new MathExpression({
    expression: `IF((FILL(ok, 0) + FILL(failed, 0)) >= ${MIN_FOLDS_FOR_SHARE}, 100 * FILL(failed, 0) / (FILL(ok, 0) + FILL(failed, 0)), 0)`,
    usingMetrics: {
      ok: emfMetric("vance.memory.fold", { outcome: "ok" }, Stats.SUM, period),
      failed: emfMetric("vance.memory.fold", { outcome: "failed" }, Stats.SUM, period),
    },
    label: "failed folds (%)",
    period,
  });
}

interface AlarmSpec {
  metric: IMetric;
  description: string;
  /** Periods in a row that must breach (default 1). */
  periods?: number;
  comparison?: ComparisonOperator;
}

/** Each alarm: its metric and what it says; the threshold comes from the stage settings. */
function alarmSpecs(stack: Stack, w: Watched): Record<AlarmThresholdName, AlarmSpec> {
  const timeouts = new MetricFilter(stack, "WorkerTimeoutsFilter", {
    logGroup: w.worker.logGroup,
    filterPattern: FilterPattern.literal(`"${TIMEOUT_LOG_TEXT}"`),
    metricNamespace: METRICS_NAMESPACE,
    metricName: WORKER_TIMEOUTS_METRIC,
    metricValue: "1",
  });
  return {
    dlqMessages: {
      metric: w.dlq.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: Stats.MAXIMUM }),
      description: "An incoming event or a compaction job failed every retry and waits in the dead-letter queue",
    },
    workerErrors: {
      metric: w.worker.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      description: "The compaction worker threw: folds are not being prepared or committed",
    },
    workerTimeouts: {
      metric: timeouts.metric({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      description: "The compaction worker ran out of time (Lambda's 'Task timed out')",
    },
    failedFoldPercent: {
      metric: failedFoldShare(),
      description: "Too many folds ended in a FAILED row: summaries are failing",
      comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    },
    gateRefusals: {
      metric: emfMetric("vance.memory.quality_gate.refused", {}, Stats.SUM, FIFTEEN_MINUTES),
      description: "The quality gate is refusing many summaries: the summarizer's answers are unusable",
    },
    fallbacks: {
      metric: emfMetric("vance.memory.summarizer.fallback", {}, Stats.SUM, FIFTEEN_MINUTES),
      description: "EMERGENCY folds are committing the offline summarizer's summary because the summarizer failed",
    },
    turnP99Ms: {
      metric: turnLatency(w.httpApi, Stats.p(99)),
      description: `The p99 latency of ${TURN_ROUTE} is over its threshold for 15 minutes`,
      periods: 3,
      comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
    },
    dynamoThrottles: {
      metric: w.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES }),
      description: "DynamoDB throttled requests to the table",
    },
    dynamoSystemErrors: {
      metric: w.table.metricSystemErrorsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES }),
      description: "DynamoDB answered requests to the table with server errors",
    },
    api5xx: {
      metric: w.httpApi.metricServerError({ period: FIVE_MINUTES, statistic: Stats.SUM }),
      description: "The API answered with 5xx statuses",
    },
  };
}

/** An alarm's short name (`dlq-messages`): its runbook section in docs/operations.md is titled by it. */
export const alarmSlug = (name: AlarmThresholdName) => name.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`);

/** Creates every alarm with its threshold, notifying `topic` when it fires and when it clears. */
export function stageAlarms(stack: Stack, app: App, w: Watched, settings: AlarmSettings, topic: ITopic): Record<AlarmThresholdName, Alarm> {
  const action = new SnsAction(topic);
  const specs = alarmSpecs(stack, w);
  const alarms = Object.fromEntries(
    (Object.entries(specs) as Array<[AlarmThresholdName, AlarmSpec]>).map(([name, spec]) => {
      const alarm = new Alarm(stack, `${name[0]!.toUpperCase()}${name.slice(1)}Alarm`, {
        // `<stage>-vancetope-memory-<slug>`: the stage and the runbook section, in every notification.
        alarmName: app.logicalPrefixedName(alarmSlug(name)),
        alarmDescription: `Vancetope Memory: ${spec.description} (runbook: docs/operations.md#${alarmSlug(name)})`,
        metric: spec.metric,
        threshold: settings.thresholds[name],
        evaluationPeriods: spec.periods ?? 1,
        datapointsToAlarm: spec.periods ?? 1,
        comparisonOperator: spec.comparison ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No data is no trouble: an idle stage emits none of these metrics.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
      return [name, alarm];
    }),
  );
  return alarms as Record<AlarmThresholdName, Alarm>;
}
