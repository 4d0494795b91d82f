/**
 * What tells a stage's operators that something is wrong: the alarms (alarms.ts), the topic they
 * notify, and the dashboard (dashboard.ts). The runbook for each alarm is docs/operations.md.
 */
import type { CfnStage } from "aws-cdk-lib/aws-apigatewayv2";
import { Duration, RemovalPolicy, type Stack } from "aws-cdk-lib";
import { PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { use, type App, type StackContext } from "sst/constructs";
import { Api, THROTTLE } from "./api.js";
import { stageAlarms, TURN_ROUTE, type Watched } from "./alarms.js";
import { stageConfigOf } from "./config.js";
import { stageDashboard } from "./dashboard.js";
import { Events } from "./events.js";
import { Storage } from "./storage.js";

export function Monitoring({ stack, app }: StackContext) {
  const { alarms: settings } = stageConfigOf(app);
  const { table } = use(Storage);
  const { dlq, worker } = use(Events);
  const { api, functions } = use(Api);
  const httpApi = api.cdk.httpApi;

  // API Gateway reports latency per route only with detailed metrics, billed per metric: on for
  // the turn route alone. A route's settings replace the stage's defaults, so the throttle is
  // repeated here. (RouteSettings is raw JSON to CDK: CloudFormation's own casing.)
  const cfnStage = httpApi.defaultStage!.node.defaultChild as CfnStage;
  cfnStage.routeSettings = {
    [TURN_ROUTE]: { DetailedMetricsEnabled: true, ThrottlingBurstLimit: THROTTLE.burst, ThrottlingRateLimit: THROTTLE.rate },
  };

  const topic = settings.topicArn ? Topic.fromTopicArn(stack, "AlarmTopic", settings.topicArn) : ownTopic(stack, app, settings.emails);
  const watched: Watched = { table, dlq, worker, turnFunction: functions.summarizingRoutes, httpApi };
  const alarms = stageAlarms(stack, app, watched, settings, topic);
  const dashboard = stageDashboard(stack, app, watched, Object.values(alarms));

  stack.addOutputs({ AlarmTopicArn: topic.topicArn, DashboardName: dashboard.dashboardName });
  return { alarms, dashboard, topic };
}

/**
 * The stage's alarm topic: TLS only, encrypted with its own key. CloudWatch cannot publish to a
 * topic under the AWS managed key (its policy admits no service), so the key and the topic admit
 * CloudWatch, for this account's alarms of this stage only.
 */
function ownTopic(stack: Stack, app: App, emails: string[]): Topic {
  const dev = stageConfigOf(app).dev;
  const key = new Key(stack, "AlarmTopicKey", {
    description: `${app.logicalPrefixedName("alarms")}: encrypts the alarm notifications`,
    enableKeyRotation: true,
    removalPolicy: dev ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    pendingWindow: Duration.days(7),
  });
  const topic = new Topic(stack, "AlarmTopic", { topicName: app.logicalPrefixedName("alarms"), enforceSSL: true, masterKey: key });
  const cloudwatch = new ServicePrincipal("cloudwatch.amazonaws.com");
  const fromOurAlarms = {
    StringEquals: { "aws:SourceAccount": stack.account },
    ArnLike: { "aws:SourceArn": `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:${app.logicalPrefixedName("*")}` },
  };
  key.addToResourcePolicy(new PolicyStatement({ principals: [cloudwatch], actions: ["kms:Decrypt", "kms:GenerateDataKey*"], resources: ["*"], conditions: fromOurAlarms }));
  topic.addToResourcePolicy(new PolicyStatement({ principals: [cloudwatch], actions: ["sns:Publish"], resources: [topic.topicArn], conditions: fromOurAlarms }));
  for (const email of emails) topic.addSubscription(new EmailSubscription(email));
  return topic;
}
