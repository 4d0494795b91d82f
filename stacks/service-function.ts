/**
 * Builds one of the service's Lambdas from its HandlerSpec: the shared bundling, runtime, a log
 * group with one month's retention, Powertools settings, and an IAM policy derived from its handler entry (handlers.ts).
 */
import path from "node:path";
import { RemovalPolicy } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import type { IEventBus } from "aws-cdk-lib/aws-events";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { IBucket } from "aws-cdk-lib/aws-s3";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { NagSuppressions, type NagPackSuppression } from "cdk-nag";
import type { IConstruct } from "constructs";
import { Function, type FunctionProps, type Stack } from "sst/constructs";
import { LAMBDA_ARCHITECTURE, LAMBDA_RUNTIME, nodejsBundling } from "./bundling.js";
import { REMOTE_PROVIDERS } from "../core/adapters/llm/provider-descriptors.js";
import { OPENAPI_DOCUMENT, sstHandler, type HandlerSpec } from "./handlers.js";
import { blobStatements, llmSecretStatements, putEventsStatements, tableStatements } from "./permissions.js";
import { METRICS_NAMESPACE, SERVICE_NAME, type StageConfig } from "./stage.js";

export const LOG_RETENTION = RetentionDays.ONE_MONTH;

/** How cdk-nag names the blob objects' resource in an IAM5 finding: `Resource::<bucket ARN>/blobs/*`. */
export const BLOB_OBJECTS_FINDING = "/^Resource::.*Blobs.*\\/blobs\\/\\*$/g";

/**
 * The AWS Solutions findings every Lambda of a stage keeps, SST's custom resource functions included
 * (docs/deploy.md, "AWS Solutions checks"), each with the reason it stays.
 */
export const LAMBDA_NAG_SUPPRESSIONS: NagPackSuppression[] = [
  {
    id: "AwsSolutions-IAM4",
    appliesTo: ["Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"],
    reason: "The basic execution role grants only CreateLogGroup, CreateLogStream and PutLogEvents, what every function needs to write its own log group; CDK and SST attach it to every function role.",
  },
  {
    id: "AwsSolutions-L1",
    reason: "Node 22 (nodejs22.x) is the runtime the bundles are built for and run on in test/infra/bundle.test.ts; moving to a newer one is a tested change of stacks/bundling.ts, not a template edit.",
  },
];

/** Records on `scope` (and what it contains) the findings that stay, with their reasons. */
export const acceptLambdaFindings = (scope: IConstruct) => NagSuppressions.addResourceSuppressions(scope, LAMBDA_NAG_SUPPRESSIONS, true);

export interface ServiceFunctionOptions {
  config: StageConfig;
  table: ITable;
  /** Omitted for functions that publish nothing (the authorizer). */
  bus?: IEventBus;
  /** The compaction worker, for functions that queue folds. */
  worker?: IFunction;
  /** The blobs bucket, for functions with `blobs` access (handlers.ts). */
  blobBucket?: IBucket;
  /** Extra CDK function options (async retries, failure destination). */
  props?: Pick<FunctionProps, "retryAttempts" | "maxEventAge" | "onFailure">;
}

/** The environment every function gets, plus the LLM settings for those that summarize. */
export function functionEnvironment(
  spec: HandlerSpec,
  o: { config: StageConfig; tableName: string; busName?: string; workerName?: string; blobBucketName?: string },
) {
  const env: Record<string, string> = {
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    TABLE_NAME: o.tableName,
    ...spec.environment,
  };
  if (spec.tracesCalls) {
    env.POWERTOOLS_TRACE_ENABLED = "true";
    // A function's answer holds tenants' text (summaries, messages): it stays out of the traces.
    env.POWERTOOLS_TRACER_CAPTURE_RESPONSE = "false";
  }
  if (spec.publishes.length > 0 && o.busName) env.EVENT_BUS_NAME = o.busName;
  if (spec.queuesFolds && o.workerName) env.COMPACTION_WORKER_FUNCTION = o.workerName;
  if (spec.blobs?.length && o.blobBucketName) env.BLOB_BUCKET = o.blobBucketName;
  if (spec.listsPages && o.config.cursorSecret) env.CURSOR_SECRET = o.config.cursorSecret;
  // Set even when empty: the handlers then accept events from the service's own account only.
  if (spec.receivesEvents) env.EVENT_PUBLISHERS = o.config.eventPublishers;
  if (spec.rateLimited) {
    env.TENANT_RATE_LIMIT = String(o.config.tenantRateLimit);
    if (o.config.tenantRateLimits) env.TENANT_RATE_LIMITS = o.config.tenantRateLimits;
  }
  if (spec.summarizes) {
    const c = o.config;
    for (const [name, remote] of REMOTE_PROVIDERS) {
      // Parameter NAMES only: core/adapters/secrets/llm-secrets.ts fetches the SecureStrings at cold start.
      env[remote.keyParamEnv] = c.secretParams[name];
      const baseUrl = c.baseUrls[name];
      if (baseUrl) env[remote.baseUrlEnv] = baseUrl;
    }
    if (c.summarizer) env.SUMMARIZER = c.summarizer;
    if (c.summarizerModel) env.SUMMARIZER_MODEL = c.summarizerModel;
    if (c.tenantDailyTokenBudget) env.TENANT_DAILY_TOKEN_BUDGET = c.tenantDailyTokenBudget;
  }
  return env;
}

export function policyStatements(stack: Stack, spec: HandlerSpec, o: ServiceFunctionOptions): PolicyStatement[] {
  return [
    ...tableStatements(o.table, spec),
    ...(o.bus ? putEventsStatements(o.bus, spec) : []),
    ...(o.blobBucket ? blobStatements(o.blobBucket, spec) : []),
    ...(spec.summarizes ? llmSecretStatements(stack, o.config) : []),
    // Queuing a fold is an asynchronous invoke of the worker, and of nothing else.
    ...(spec.queuesFolds && o.worker ? [new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [o.worker.functionArn] })] : []),
  ];
}

export function serviceFunction(stack: Stack, id: string, spec: HandlerSpec, o: ServiceFunctionOptions): Function {
  if (spec.publishes.length > 0 && !o.bus) throw new Error(`${id} publishes events but got no bus`);
  if (spec.queuesFolds && !o.worker) throw new Error(`${id} queues folds but got no worker`);
  if (spec.blobs?.length && !o.blobBucket) throw new Error(`${id} uses blobs but got no bucket`);
  const logGroup = new LogGroup(stack, `${id}Logs`, {
    retention: LOG_RETENTION,
    removalPolicy: o.config.dev ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
  });
  const fn = new Function(stack, id, {
    handler: sstHandler(spec.entry),
    runtime: LAMBDA_RUNTIME,
    architecture: LAMBDA_ARCHITECTURE,
    memorySize: spec.memoryMb,
    timeout: spec.timeoutSeconds,
    // Lambda records every invocation (and its cold start) in X-Ray, which adds xray:PutTraceSegments
    // and xray:PutTelemetryRecords on "*" (they name no resource) to the role.
    tracing: "active",
    nodejs: nodejsBundling,
    // Beside the bundle (`<entry dir>/openapi.json`), where the function reads it on request.
    ...(spec.servesDocument ? { copyFiles: [{ from: OPENAPI_DOCUMENT, to: path.posix.join(path.posix.dirname(spec.entry), "openapi.json") }] } : {}),
    logGroup,
    environment: functionEnvironment(spec, {
      config: o.config,
      tableName: o.table.tableName,
      busName: o.bus?.eventBusName,
      workerName: o.worker?.functionName,
      blobBucketName: o.blobBucket?.bucketName,
    }),
    permissions: policyStatements(stack, spec, o),
    // The worker's reserved concurrency caps the folds summarizing at once across the stage, so
    // a burst of queued folds cannot run up the provider's bill or its rate limit unbounded.
    ...(spec.reservesConcurrency && o.config.workerReservedConcurrency !== undefined
      ? { reservedConcurrentExecutions: o.config.workerReservedConcurrency }
      : {}),
    ...o.props,
  });
  acceptLambdaFindings(fn);
  NagSuppressions.addResourceSuppressions(
    fn,
    [
      {
        id: "AwsSolutions-IAM5",
        appliesTo: ["Resource::*"],
        reason: "xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions: X-Ray documents them on '*' only, as DynamoDB does dynamodb:ListStreams, which the stream's reader gets. Every other statement names its table, stream, index, bus, parameter or function.",
      },
      ...(spec.blobs?.length
        ? [
            {
              id: "AwsSolutions-IAM5",
              appliesTo: [{ regex: BLOB_OBJECTS_FINDING }],
              reason: "Blobs are created at run time, one object per content hash under blobs/<tenant>/<process>/: the object actions name that prefix of the stage's own bucket, the narrowest resource that holds them.",
            },
          ]
        : []),
    ],
    true,
  );
  return fn;
}
