/**
 * The stage's alarms, their topic and the dashboard, proven offline on the synthesized templates:
 * each alarm on the metric the service (or AWS) really emits, with its threshold from the stage
 * settings and its actions to the topic; every service metric the dashboard or an alarm names is
 * one the EMF adapter publishes, under a dimension set it publishes.
 */
import { readFileSync } from "node:fs";
import { Stack, type CfnElement } from "aws-cdk-lib";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createEmfMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import type { Metrics } from "../../core/ports/metrics.js";
import { ALARM_THRESHOLDS, type AlarmThresholdName } from "../../stacks/alarm-settings.js";
import { alarmSlug, API_STAGE, MIN_FOLDS_FOR_SHARE, TABLE_OPERATIONS, TIMEOUT_LOG_TEXT, TURN_ROUTE, WORKER_TIMEOUTS_METRIC } from "../../stacks/alarms.js";
import { THROTTLE } from "../../stacks/api.js";
import { FAILED_FOLDS_QUERY, METRIC_MODES } from "../../stacks/dashboard.js";
import { METRICS_NAMESPACE, SERVICE_NAME } from "../../stacks/stage.js";
import { PROVIDER_NAMES } from "../../core/adapters/llm/provider-descriptors.js";
import { synthStage, type Synthesized } from "./synth.js";

const CLEAN_ENV = Object.fromEntries(["ALARM_TOPIC_ARN", "ALARM_EMAIL", ...Object.values(ALARM_THRESHOLDS).map((t) => t.env)].map((k) => [k, undefined]));
const EXISTING_TOPIC = "arn:aws:sns:eu-west-1:123456789012:team-pager";
const NAMES = Object.keys(ALARM_THRESHOLDS) as AlarmThresholdName[];

let own: Synthesized;
let existing: Synthesized;

beforeAll(async () => {
  own = await synthStage("team-a", { web: false, env: { ...CLEAN_ENV, ALARM_EMAIL: "ops@example.com, oncall@example.com" } });
  existing = await synthStage("team-b", {
    web: false,
    env: { ...CLEAN_ENV, ALARM_TOPIC_ARN: EXISTING_TOPIC, ALARM_TURN_P99_MS: "1500", ALARM_FAILED_FOLD_PERCENT: "50", ALARM_API_5XX: "1" },
  });
}, 240_000);

type Props = Record<string, any>;
const alarmsOf = (t: Template): Props[] => Object.values(t.findResources("AWS::CloudWatch::Alarm")).map((r) => r.Properties as Props);
const alarmNamed = (t: Template, stage: string, name: AlarmThresholdName) => {
  const found = alarmsOf(t).filter((a) => a.AlarmName === `${stage}-vancetope-memory-${alarmSlug(name)}`);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};
const dims = (list: Array<{ Name: string; Value: unknown }>) => Object.fromEntries(list.map((d) => [d.Name, d.Value]));
/** Every metric an alarm reads: its own, or those of its math expression. */
const alarmMetrics = (a: Props): Array<{ Namespace: string; MetricName: string; Dimensions: Array<{ Name: string; Value: unknown }> }> =>
  a.MetricName
    ? [{ Namespace: a.Namespace, MetricName: a.MetricName, Dimensions: a.Dimensions ?? [] }]
    : (a.Metrics as Props[]).filter((m) => m.MetricStat).map((m) => ({ ...m.MetricStat.Metric, Dimensions: m.MetricStat.Metric.Dimensions ?? [] }));

describe("alarms", () => {
  it("exist once per setting, each named after its runbook section, and notify the stage's topic when firing and when clear", () => {
    const t = own.templates.monitoring;
    const created = own.outputs.monitoring.topic;
    const topic = { Ref: Stack.of(created).getLogicalId(created.node.defaultChild as CfnElement) };
    expect(alarmsOf(t)).toHaveLength(NAMES.length);
    const runbook = readFileSync("docs/operations.md", "utf8");
    for (const name of NAMES) {
      const alarm = alarmNamed(t, "team-a", name);
      expect(alarm.Threshold, name).toBe(ALARM_THRESHOLDS[name].default);
      expect(alarm.AlarmActions, name).toEqual([topic]);
      expect(alarm.OKActions, name).toEqual([topic]);
      expect(alarm.TreatMissingData, name).toBe("notBreaching");
      expect(alarm.AlarmDescription, name).toContain(`docs/operations.md#${alarmSlug(name)}`);
      expect(runbook, name).toMatch(new RegExp(`^### ${alarmSlug(name)}$`, "m"));
    }
  });

  it("watch the dead-letter queue, the worker's errors, and its timeouts counted from Lambda's own log line", () => {
    const t = own.templates.monitoring;
    expect(alarmNamed(t, "team-a", "dlqMessages")).toMatchObject({ Namespace: "AWS/SQS", MetricName: "ApproximateNumberOfMessagesVisible", Statistic: "Maximum" });
    const errors = alarmNamed(t, "team-a", "workerErrors");
    expect(errors).toMatchObject({ Namespace: "AWS/Lambda", MetricName: "Errors", Statistic: "Sum", Period: 300 });
    expect(JSON.stringify(dims(errors.Dimensions).FunctionName)).toContain("CompactionWorker");
    t.hasResourceProperties("AWS::Logs::MetricFilter", {
      FilterPattern: `"${TIMEOUT_LOG_TEXT}"`,
      LogGroupName: { "Fn::ImportValue": Match.stringLikeRegexp("CompactionWorkerLogs") },
      MetricTransformations: [{ MetricName: WORKER_TIMEOUTS_METRIC, MetricNamespace: METRICS_NAMESPACE, MetricValue: "1" }],
    });
    expect(alarmNamed(t, "team-a", "workerTimeouts")).toMatchObject({ Namespace: METRICS_NAMESPACE, MetricName: WORKER_TIMEOUTS_METRIC, Statistic: "Sum" });
  });

  it("alarm on the share of failed folds: 100 x failed / (ok + failed) over 15 minutes, 0 below the minimum of folds", () => {
    const alarm = alarmNamed(own.templates.monitoring, "team-a", "failedFoldPercent");
    const expression = (alarm.Metrics as Props[]).find((m) => m.Expression)!;
    expect(expression.ReturnData).toBe(true);
    expect(MIN_FOLDS_FOR_SHARE).toBe(3);
    expect(expression.Expression).toBe("IF((FILL(ok, 0) + FILL(failed, 0)) >= 3, 100 * FILL(failed, 0) / (FILL(ok, 0) + FILL(failed, 0)), 0)");
    const inputs = (alarm.Metrics as Props[]).filter((m) => m.MetricStat);
    expect(inputs.map((m) => [m.Id, m.MetricStat.Metric.MetricName, dims(m.MetricStat.Metric.Dimensions), m.MetricStat.Period, m.MetricStat.Stat])).toEqual([
      ["ok", "vance.memory.fold", { outcome: "ok", service: SERVICE_NAME }, 900, "Sum"],
      ["failed", "vance.memory.fold", { outcome: "failed", service: SERVICE_NAME }, 900, "Sum"],
    ]);
  });

  it("count quality-gate refusals and offline fallbacks over 15 minutes under the service dimension", () => {
    const t = own.templates.monitoring;
    expect(alarmNamed(t, "team-a", "gateRefusals")).toMatchObject({
      MetricName: "vance.memory.quality_gate.refused",
      Namespace: METRICS_NAMESPACE,
      Dimensions: [{ Name: "service", Value: SERVICE_NAME }],
      Period: 900,
    });
    expect(alarmNamed(t, "team-a", "fallbacks")).toMatchObject({ MetricName: "vance.memory.summarizer.fallback", Dimensions: [{ Name: "service", Value: SERVICE_NAME }], Period: 900 });
  });

  it("alarm when the turn route's p99 stays over the threshold for three 5-minute periods, with route metrics on for that route alone", () => {
    const alarm = alarmNamed(own.templates.monitoring, "team-a", "turnP99Ms");
    expect(alarm).toMatchObject({
      Namespace: "AWS/ApiGateway",
      MetricName: "Latency",
      ExtendedStatistic: "p99",
      Period: 300,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      ComparisonOperator: "GreaterThanThreshold",
    });
    expect(dims(alarm.Dimensions)).toMatchObject({ Route: TURN_ROUTE, Stage: API_STAGE });
    own.templates.api.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: API_STAGE,
      DefaultRouteSettings: { ThrottlingBurstLimit: THROTTLE.burst, ThrottlingRateLimit: THROTTLE.rate },
      RouteSettings: { [TURN_ROUTE]: { DetailedMetricsEnabled: true, ThrottlingBurstLimit: THROTTLE.burst, ThrottlingRateLimit: THROTTLE.rate } },
    });
  });

  it("sum the table's throttled requests and system errors over the operations the service uses, and count API 5xx", () => {
    const t = own.templates.monitoring;
    for (const [name, metric] of [
      ["dynamoThrottles", "ThrottledRequests"],
      ["dynamoSystemErrors", "SystemErrors"],
    ] as const) {
      const metrics = alarmMetrics(alarmNamed(t, "team-a", name));
      expect(metrics.map((m) => [m.Namespace, m.MetricName, dims(m.Dimensions).Operation])).toEqual(TABLE_OPERATIONS.map((op) => ["AWS/DynamoDB", metric, op]));
    }
    expect(alarmNamed(t, "team-a", "api5xx")).toMatchObject({ Namespace: "AWS/ApiGateway", MetricName: "5xx", Statistic: "Sum" });
  });

  it("take the thresholds and an existing topic from the stage settings, and then create no topic", () => {
    const t = existing.templates.monitoring;
    t.resourceCountIs("AWS::SNS::Topic", 0);
    t.resourceCountIs("AWS::KMS::Key", 0);
    const changed: Partial<Record<AlarmThresholdName, number>> = { turnP99Ms: 1500, failedFoldPercent: 50, api5xx: 1 };
    for (const name of NAMES) {
      const alarm = alarmNamed(t, "team-b", name);
      expect(alarm.Threshold, name).toBe(changed[name] ?? ALARM_THRESHOLDS[name].default);
      expect(alarm.AlarmActions, name).toEqual([EXISTING_TOPIC]);
    }
  });
});

describe("the alarm topic", () => {
  it("is TLS-only, encrypted with a rotated key of its own that CloudWatch may use for this stage's alarms, with the addresses subscribed", () => {
    const t = own.templates.monitoring;
    t.resourceCountIs("AWS::SNS::Topic", 1);
    t.hasResourceProperties("AWS::KMS::Key", { EnableKeyRotation: true });
    const keyId = Object.keys(t.findResources("AWS::KMS::Key"))[0]!;
    t.hasResourceProperties("AWS::SNS::Topic", { TopicName: "team-a-vancetope-memory-alarms", KmsMasterKeyId: { "Fn::GetAtt": [keyId, "Arn"] } });
    const statements = (Object.values(t.findResources("AWS::SNS::TopicPolicy"))[0]!.Properties.PolicyDocument.Statement as Props[]);
    expect(statements.find((s) => s.Effect === "Deny")).toMatchObject({ Action: "sns:Publish", Condition: { Bool: { "aws:SecureTransport": "false" } } });
    const alarmSource = JSON.stringify(statements.find((s) => s.Principal?.Service === "cloudwatch.amazonaws.com")?.Condition);
    expect(alarmSource).toContain(":alarm:team-a-vancetope-memory-*");
    const keyPolicy = (t.findResources("AWS::KMS::Key")[keyId]!.Properties.KeyPolicy.Statement as Props[]).find((s) => s.Principal?.Service === "cloudwatch.amazonaws.com");
    expect(keyPolicy).toMatchObject({ Action: ["kms:Decrypt", "kms:GenerateDataKey*"], Condition: { StringEquals: { "aws:SourceAccount": "123456789012" } } });
    expect(Object.values(t.findResources("AWS::SNS::Subscription")).map((s) => [s.Properties.Protocol, s.Properties.Endpoint])).toEqual([
      ["email", "ops@example.com"],
      ["email", "oncall@example.com"],
    ]);
  });
});

/** The dashboard's body as JSON, with each CloudFormation token replaced by a placeholder. */
function dashboardBody(t: Template): { widgets: Array<{ type: string; properties: Props }> } {
  const dashboards = Object.values(t.findResources("AWS::CloudWatch::Dashboard"));
  expect(dashboards).toHaveLength(1);
  const [, parts] = dashboards[0]!.Properties.DashboardBody["Fn::Join"] as [string, unknown[]];
  return JSON.parse(parts.map((p) => (typeof p === "string" ? p : "TOKEN")).join(""));
}

/** Each row of a graph: namespace, name, the dimensions (key/value pairs), options; math rows have none. */
function dashboardMetrics(t: Template) {
  return dashboardBody(t)
    .widgets.filter((w) => w.type === "metric")
    .flatMap((w) => (w.properties.metrics as unknown[][]).map((row) => ({ widget: w.properties.title as string, row })))
    .filter(({ row }) => typeof row[0] === "string" && typeof row[1] === "string")
    .map(({ widget, row }) => {
      const pairs = row.slice(2).filter((x) => typeof x === "string") as string[];
      const dimensions = Object.fromEntries(pairs.flatMap((_, i) => (i % 2 === 0 ? [[pairs[i]!, pairs[i + 1]!]] : [])));
      return { widget, namespace: row[0] as string, name: row[1] as string, dimensions };
    });
}

/** Every EMF metric the adapter publishes, by name, with the dimension key sets it goes out under. */
function emittedMetrics(): Map<string, Set<string>> {
  vi.stubEnv("POWERTOOLS_DEV", "true");
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "false");
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
  const m = createEmfMetrics();
  // One call of every method of the port, with the optional parts present.
  const calls: { [K in keyof Metrics]: () => void } = {
    compaction: () => m.compaction("hard", 3, 900),
    summarizerWallTime: () => m.summarizerWallTime("soft", 10, "openai"),
    foldOutcome: () => m.foldOutcome("failed"),
    qualityGateRefused: () => m.qualityGateRefused(),
    summarizerFallback: () => m.summarizerFallback(),
    summarizerFailed: () => m.summarizerFailed("openai"),
    preparedFold: () => m.preparedFold("used"),
    strengthAnalysis: () => m.strengthAnalysis("model", 2, { inputTokens: 5, outputTokens: 1 }),
    modelUsage: () => m.modelUsage("t", "summary", { calls: 1, inputTokens: 1, outputTokens: 1 }),
    budgetExceeded: () => m.budgetExceeded("t"),
    providerBlockRefused: () => m.providerBlockRefused("anthropic"),
    revert: () => m.revert(2),
    originalsMissing: () => m.originalsMissing(1),
    rateLimited: () => m.rateLimited("t"),
    invalidSetting: () => m.invalidSetting("tenant", "softThreshold"),
    eventDropped: () => m.eventDropped("PlanCompleted", "invalid_detail"),
    flush: () => m.flush(),
  };
  for (const call of Object.values(calls)) call();
  const emitted = new Map<string, Set<string>>();
  for (const doc of lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))) {
    for (const directive of doc._aws.CloudWatchMetrics) {
      expect(directive.Namespace).toBe(METRICS_NAMESPACE);
      for (const metric of directive.Metrics) {
        const sets = emitted.get(metric.Name) ?? new Set<string>();
        for (const set of directive.Dimensions as string[][]) sets.add([...set].sort().join(","));
        emitted.set(metric.Name, sets);
      }
    }
  }
  return emitted;
}

describe("the dashboard", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it("names only metrics the service emits, under dimension sets it emits them with (or the worker's log filter's)", () => {
    const emitted = emittedMetrics();
    // The EMF adapter's source names the same metrics (so a name on the dashboard is one in emf-metrics.ts).
    const source = readFileSync("core/adapters/metrics/emf-metrics.ts", "utf8");
    const inSource = new Set(source.match(/"vance\.memory\.[a-z_.]+"/g)!.map((s) => s.slice(1, -1)));
    expect([...emitted.keys()].every((n) => inSource.has(n))).toBe(true);

    const ours = [...dashboardMetrics(own.templates.monitoring), ...alarmsOf(own.templates.monitoring).flatMap(alarmMetrics).map((m) => ({ widget: m.MetricName, namespace: m.Namespace, name: m.MetricName, dimensions: dims(m.Dimensions) }))].filter(
      (m) => m.namespace === METRICS_NAMESPACE,
    );
    expect(ours.length).toBeGreaterThan(30);
    for (const m of ours) {
      if (m.name === WORKER_TIMEOUTS_METRIC) {
        expect(m.dimensions, m.widget).toEqual({});
        continue;
      }
      expect(inSource.has(m.name), `${m.widget}: ${m.name}`).toBe(true);
      expect(emitted.get(m.name), `${m.widget}: ${m.name}`).toContain(Object.keys(m.dimensions).sort().join(","));
      expect(m.dimensions.service, m.name).toBe(SERVICE_NAME);
    }
  });

  it("shows compactions and tokens saved by mode, summarizer latency and errors by provider, turn latency, the queue, capacity and throttles", () => {
    const metrics = dashboardMetrics(own.templates.monitoring);
    const series = (name: string, key: string) => metrics.filter((m) => m.name === name).map((m) => m.dimensions[key]);
    expect(new Set(series("vance.memory.compaction", "mode"))).toEqual(new Set(METRIC_MODES));
    expect(new Set(series("vance.memory.compaction.tokens_saved", "mode"))).toEqual(new Set(METRIC_MODES));
    expect(new Set(series("vance.memory.summarizer.wall_ms", "provider"))).toEqual(new Set(PROVIDER_NAMES));
    expect(new Set(series("vance.memory.summarizer.errors", "provider"))).toEqual(new Set(PROVIDER_NAMES));
    const aws = new Set(metrics.filter((m) => m.namespace.startsWith("AWS/")).map((m) => `${m.namespace} ${m.name}`));
    for (const expected of [
      "AWS/ApiGateway Latency",
      "AWS/ApiGateway 5xx",
      "AWS/SQS ApproximateNumberOfMessagesVisible",
      "AWS/DynamoDB ConsumedReadCapacityUnits",
      "AWS/DynamoDB ConsumedWriteCapacityUnits",
      "AWS/DynamoDB ThrottledRequests",
      "AWS/DynamoDB SystemErrors",
      "AWS/Lambda Errors",
    ]) {
      expect(aws, expected).toContain(expected);
    }
    expect(metrics.find((m) => m.name === "Latency")!.dimensions).toMatchObject({ Route: TURN_ROUTE, Stage: API_STAGE });
    const body = dashboardBody(own.templates.monitoring);
    expect(body.widgets.find((w) => w.type === "alarm")!.properties.alarms).toHaveLength(NAMES.length);
    // The failed folds' table runs the query the runbook test checks, on two log groups.
    const logs = body.widgets.find((w) => w.type === "log")!.properties;
    expect(logs.query).toBe(`SOURCE 'TOKEN' | SOURCE 'TOKEN' | ${FAILED_FOLDS_QUERY.join("\n| ")}`);
  });
});
