/**
 * The stage's EventBridge bus, the rules for the two incoming events and their target functions.
 * Delivery failures (EventBridge -> Lambda) and handler failures (Lambda's async retries) both end
 * in one SQS dead-letter queue (its alarm: monitoring.ts); the handlers are idempotent, so retries are safe.
 */
import { Duration } from "aws-cdk-lib";
import { EventBus, Rule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { AccountPrincipal, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { FilterCriteria, FilterRule, StartingPosition } from "aws-cdk-lib/aws-lambda";
import { SqsDestination } from "aws-cdk-lib/aws-lambda-destinations";
import { DynamoEventSource, SqsDlq } from "aws-cdk-lib/aws-lambda-event-sources";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import { use, type StackContext } from "sst/constructs";
import { stageConfigOf } from "./config.js";
import { EVENTS } from "../core/domain/events.js";
import { HANDLERS } from "./handlers.js";
import { serviceFunction } from "./service-function.js";
import { Storage } from "./storage.js";

/** The incoming events (from the catalogue, core/domain/events.ts) and the function each one reaches. */
export const EVENT_RULES = {
  PlanCompleted: { source: EVENTS.PlanCompleted.source, handler: "planCompleted" },
  InboxItemAnswered: { source: EVENTS.InboxItemAnswered.source, handler: "inboxAnswered" },
} as const;

/**
 * The stream records the blob expiry receives: deletions by DynamoDB's TTL (`userIdentity` as the
 * DynamoDB Streams API reference, "Identity", gives it) of items whose old image has native content.
 */
export const BLOB_EXPIRY_FILTER = {
  eventName: FilterRule.isEqual("REMOVE"),
  userIdentity: { type: FilterRule.isEqual("Service"), principalId: FilterRule.isEqual("dynamodb.amazonaws.com") },
  dynamodb: { OldImage: { native: { S: FilterRule.exists() } } },
};

/** EventBridge's own retries of a failed delivery to Lambda (throttling, service errors). */
export const TARGET_RETRY = { retryAttempts: 8, maxEventAge: Duration.hours(6) };
/** Lambda's retries of an asynchronous invocation whose handler threw. */
export const ASYNC_RETRY = { retryAttempts: 2, maxEventAge: Duration.hours(6) };

export function Events({ stack, app }: StackContext) {
  const config = stageConfigOf(app);
  const { table, blobs } = use(Storage);

  const bus = new EventBus(stack, "Bus", { eventBusName: app.logicalPrefixedName("bus") });
  const dlq = new Queue(stack, "EventsDlq", {
    retentionPeriod: Duration.days(14),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  NagSuppressions.addResourceSuppressions(dlq, [
    {
      id: "AwsSolutions-SQS3",
      reason: "This queue is itself the dead-letter queue: of the event rules' targets and of Lambda's asynchronous invocations (onFailure), which the rule cannot see because no SQS queue redrives into it.",
    },
  ]);

  // The compaction worker (docs/compaction.md): reached by an asynchronous invoke from the
  // functions that queue folds, with Lambda's retries and the same dead-letter queue.
  const worker = serviceFunction(stack, "CompactionWorker", HANDLERS.compactionWorker, {
    config,
    table,
    bus,
    blobBucket: blobs,
    props: { ...ASYNC_RETRY, onFailure: new SqsDestination(dlq) },
  });

  const targets: Record<string, ReturnType<typeof serviceFunction>> = {};
  for (const [detailType, rule] of Object.entries(EVENT_RULES)) {
    const fn = serviceFunction(stack, `${detailType}Handler`, HANDLERS[rule.handler], {
      config,
      table,
      bus,
      worker,
      props: { ...ASYNC_RETRY, onFailure: new SqsDestination(dlq) },
    });
    new Rule(stack, `${detailType}Rule`, {
      eventBus: bus,
      description: `${rule.source} ${detailType} -> ${HANDLERS[rule.handler].entry}`,
      eventPattern: { source: [rule.source], detailType: [detailType] },
      targets: [new LambdaFunction(fn, { ...TARGET_RETRY, deadLetterQueue: dlq })],
    });
    targets[detailType] = fn;
  }

  // Engines in other accounts may put the two incoming event kinds, and only those, on this bus
  // (every entry of a PutEvents call must match). Which tenants each account may act for is not
  // a condition a bus policy can express: the two handlers check it against EVENT_PUBLISHERS.
  for (const account of config.eventPublisherAccounts) {
    bus.addToResourcePolicy(
      new PolicyStatement({
        sid: `PutIncomingEventsFrom${account}`,
        principals: [new AccountPrincipal(account)],
        actions: ["events:PutEvents"],
        resources: [bus.eventBusArn],
        conditions: {
          "ForAllValues:StringEquals": {
            "events:source": Object.values(EVENT_RULES).map((r) => r.source),
            "events:detail-type": Object.keys(EVENT_RULES),
          },
        },
      }),
    );
  }

  // The blobs of expired originals (docs/configuration.md, "Retention"): only the TTL's deletions
  // of items with native content reach the function (the filter is Lambda's, so no other change
  // of the table invokes it); a failing batch is halved, retried, then recorded in the queue.
  const blobExpiry = serviceFunction(stack, "BlobExpiry", HANDLERS.blobExpiry, { config, table, blobBucket: blobs });
  blobExpiry.addEventSource(
    new DynamoEventSource(table, {
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      maxBatchingWindow: Duration.minutes(1),
      bisectBatchOnError: true,
      retryAttempts: 5,
      onFailure: new SqsDlq(dlq),
      filters: [FilterCriteria.filter(BLOB_EXPIRY_FILTER)],
    }),
  );

  stack.addOutputs({ EventBusName: bus.eventBusName, EventsDlqUrl: dlq.queueUrl });
  return { bus, dlq, targets, worker, blobExpiry };
}
