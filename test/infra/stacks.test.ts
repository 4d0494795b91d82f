/**
 * The deployed system's shape, proven offline: SST synthesizes a prod-like team stage (with the
 * functions really bundled, as `sst deploy` does), a dev stage and a stage with a customer managed
 * KMS key, and CDK assertions check every resource, index and permission of the design.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { useProject } from "sst/project.js";
import { beforeAll, describe, expect, it } from "vitest";
import { tableIndexes } from "../../core/adapters/dynamodb/table.js";
import { NEXT_CURSOR_HEADER } from "../../core/adapters/http/export-routes.js";
import { LATEST_DELIVERY_MS } from "../../core/domain/late-delivery.js";
import { API_ROUTES, AUTHORIZER_CACHE_TTL, PUBLIC_ROUTES, THROTTLE } from "../../stacks/api.js";
import { productionBuildOptions } from "../../stacks/bundling.js";
import { HANDLERS, OPENAPI_DOCUMENT, type HandlerName, type HandlerSpec } from "../../stacks/handlers.js";
import { ERASE_ACTION, TABLE_ITEM_ACTIONS, tableItemActions } from "../../stacks/permissions.js";
import { API_URL_PLACEHOLDER, NO_CACHE, WEB_DIR, inspectorSiteProps } from "../../stacks/web.js";
import { grantLines, grantsOf, logicalId, managedPolicies } from "./iam.js";
import { ACCOUNT, REGION, synthStage, type Synthesized } from "./synth.js";

const SHELL_SECRETS = { OPENAI_API_KEY: "sk-test-NEVER-IN-TEMPLATE-1", ANTHROPIC_API_KEY: "sk-ant-NEVER-IN-TEMPLATE-2" };
const CLEAN_ENV = {
  SUMMARIZER: undefined,
  SUMMARIZER_MODEL: undefined,
  OPENAI_BASE_URL: undefined,
  ANTHROPIC_BASE_URL: undefined,
  VANCETOPE_SECRETS_KMS_KEY_ARN: undefined,
  VANCETOPE_EVENT_PUBLISHER_ACCOUNTS: undefined,
  VANCETOPE_EVENT_PUBLISHERS: undefined,
  TENANT_RATE_LIMIT: undefined,
  TENANT_RATE_LIMITS: undefined,
  VANCETOPE_WORKER_CONCURRENCY: undefined,
  TENANT_DAILY_TOKEN_BUDGET: undefined,
};
const PUBLISHER_ACCOUNT = "210987654321";
const KMS_KEY = `arn:aws:kms:${REGION}:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;
const hasWeb = existsSync(WEB_DIR);

let prod: Synthesized;
let dev: Synthesized;
let kms: Synthesized;

beforeAll(async () => {
  dev = await synthStage("dev-alice", { env: CLEAN_ENV });
  kms = await synthStage("team-kms", { env: { ...CLEAN_ENV, VANCETOPE_SECRETS_KMS_KEY_ARN: KMS_KEY } });
  prod = await synthStage("team-a", {
    env: {
      ...CLEAN_ENV,
      ...SHELL_SECRETS,
      SUMMARIZER: "anthropic",
      SUMMARIZER_MODEL: "claude-sonnet-4-5",
      ANTHROPIC_BASE_URL: "https://llm-gateway.example.com",
      VANCETOPE_EVENT_PUBLISHERS: `${PUBLISHER_ACCOUNT}=team-a-engine`,
      TENANT_RATE_LIMITS: "batch=5",
      VANCETOPE_WORKER_CONCURRENCY: "4",
      TENANT_DAILY_TOKEN_BUDGET: "2000000",
      SST_BUILD_CONCURRENCY: "2",
    },
    // The real bundling of every function; the static site too when web/ exists (SST zips it then).
    finish: true,
    web: hasWeb,
  });
}, 240_000);

/** Template and logical id of each function of a synthesized stage. */
function functionsOf(s: Synthesized): Record<HandlerName, { template: Template; id: string }> {
  const { api, events } = s.outputs;
  return {
    plainRoutes: { template: s.templates.api, id: logicalId(api.functions.plainRoutes) },
    summarizingRoutes: { template: s.templates.api, id: logicalId(api.functions.summarizingRoutes) },
    authorizer: { template: s.templates.api, id: logicalId(api.functions.authorizer) },
    planCompleted: { template: s.templates.events, id: logicalId(events.targets.PlanCompleted!) },
    inboxAnswered: { template: s.templates.events, id: logicalId(events.targets.InboxItemAnswered!) },
    compactionWorker: { template: s.templates.events, id: logicalId(events.worker) },
    blobExpiry: { template: s.templates.events, id: logicalId(events.blobExpiry) },
  };
}

const handlerNames = Object.keys(HANDLERS) as HandlerName[];
const props = (t: Template, id: string) => (t.toJSON().Resources[id] as { Properties: Record<string, any> }).Properties;
const allTemplates = (s: Synthesized) => Object.values(s.templates).filter(Boolean) as Template[];

describe("storage: the one table", () => {
  it("has pk/sk, the sparse LSI and both GSIs of table.ts, all projecting ALL, billed on demand with PITR", () => {
    prod.templates.storage.hasResourceProperties("AWS::DynamoDB::Table", {
      TableName: "team-a-vancetope-memory-table",
      BillingMode: "PAY_PER_REQUEST",
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      AttributeDefinitions: Match.arrayWith(
        ["pk", "sk", "lsi1sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"].map((n) => ({ AttributeName: n, AttributeType: "S" })),
      ),
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      LocalSecondaryIndexes: [
        {
          IndexName: tableIndexes.lsi1.name,
          KeySchema: [
            { AttributeName: "pk", KeyType: "HASH" },
            { AttributeName: tableIndexes.lsi1.sortKey, KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: [...tableIndexes.lsi1.nonKeyAttributes] },
        },
      ],
      GlobalSecondaryIndexes: [tableIndexes.gsi1, tableIndexes.gsi2].map((g) => ({
        IndexName: g.name,
        KeySchema: [
          { AttributeName: g.partitionKey, KeyType: "HASH" },
          { AttributeName: g.sortKey, KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "ALL" },
      })),
    });
    const table = Object.values(prod.templates.storage.findResources("AWS::DynamoDB::Table"))[0]!;
    expect(table.Properties.AttributeDefinitions).toHaveLength(7);
    expect(table.Properties.ProvisionedThroughput).toBeUndefined();
  });

  it("expires queued and prepared folds by TTL (committed summaries carry no TTL attribute)", () => {
    prod.templates.storage.hasResourceProperties("AWS::DynamoDB::Table", {
      TimeToLiveSpecification: { AttributeName: "expiresAtEpoch", Enabled: true },
    });
  });

  it("outside dev stages is deletion-protected and retained", () => {
    prod.templates.storage.hasResource("AWS::DynamoDB::Table", {
      Properties: Match.objectLike({ DeletionProtectionEnabled: true }),
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
    });
  });

  it("in a dev stage is neither protected nor retained, and keeps PITR", () => {
    dev.templates.storage.hasResource("AWS::DynamoDB::Table", {
      Properties: Match.objectLike({
        TableName: "dev-alice-vancetope-memory-table",
        DeletionProtectionEnabled: false,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      }),
      DeletionPolicy: "Delete",
      UpdateReplacePolicy: "Delete",
    });
  });
});

describe("storage: the blob expiry", () => {
  it("streams the table's old images to one function, filtered to TTL deletions of items with native content, with a dead-letter queue", () => {
    prod.templates.storage.hasResourceProperties("AWS::DynamoDB::Table", { StreamSpecification: { StreamViewType: "OLD_IMAGE" } });
    const mappings = Object.values(prod.templates.events.findResources("AWS::Lambda::EventSourceMapping")) as Array<{ Properties: Record<string, any> }>;
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]!.Properties;
    expect(mapping.FunctionName).toEqual({ Ref: functionsOf(prod).blobExpiry.id });
    expect(mapping.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual([
      {
        eventName: ["REMOVE"],
        userIdentity: { type: ["Service"], principalId: ["dynamodb.amazonaws.com"] },
        dynamodb: { OldImage: { native: { S: [{ exists: true }] } } },
      },
    ]);
    expect(mapping).toMatchObject({ BisectBatchOnFunctionError: true, MaximumRetryAttempts: 5, StartingPosition: "TRIM_HORIZON" });
    expect(JSON.stringify(mapping.DestinationConfig)).toMatch(/EventsDlq/);
  });
});

describe("storage: the blobs bucket", () => {
  const bucketOf = (st: Synthesized) => {
    const buckets = Object.entries(st.templates.storage.findResources("AWS::S3::Bucket"));
    expect(buckets).toHaveLength(1);
    return { id: buckets[0]![0], bucket: buckets[0]![1] as { Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string } };
  };

  it.each(["prod", "dev", "kms"])("in the %s stage is encrypted with S3 managed keys like the table (no customer key), private and unversioned", (which) => {
    const st = { prod, dev, kms }[which as "prod" | "dev" | "kms"];
    const { bucket } = bucketOf(st);
    expect(bucket.Properties.BucketEncryption).toEqual({ ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }] });
    // The table has no customer key either: both keep AWS's.
    const table = Object.values(st.templates.storage.findResources("AWS::DynamoDB::Table"))[0]!;
    expect(table.Properties.SSESpecification).toBeUndefined();
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(bucket.Properties.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: "BucketOwnerEnforced" }] });
    expect(bucket.Properties.VersioningConfiguration).toBeUndefined();
    expect(bucket.Properties.BucketName).toBeUndefined();
  });

  it("refuses every request that is not over TLS", () => {
    const { id } = bucketOf(prod);
    prod.templates.storage.hasResourceProperties("AWS::S3::BucketPolicy", {
      Bucket: { Ref: id },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Action: "s3:*", Principal: { AWS: "*" }, Condition: { Bool: { "aws:SecureTransport": "false" } } }),
        ]),
      },
    });
  });

  it("is retained outside dev stages, like the table, and emptied and removed with a dev stage", () => {
    expect(bucketOf(prod).bucket).toMatchObject({ DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
    expect(Object.keys(prod.templates.storage.findResources("Custom::S3AutoDeleteObjects"))).toEqual([]);
    expect(bucketOf(dev).bucket).toMatchObject({ DeletionPolicy: "Delete", UpdateReplacePolicy: "Delete" });
    expect(Object.keys(dev.templates.storage.findResources("Custom::S3AutoDeleteObjects"))).toHaveLength(1);
  });

  it("names itself in BLOB_BUCKET to exactly the functions that use blobs, and in a stack output", () => {
    for (const name of handlerNames) {
      const { template, id } = functionsOf(prod)[name];
      const env = (props(template, id).Environment?.Variables ?? {}) as Record<string, unknown>;
      const uses = Boolean((HANDLERS[name] as HandlerSpec).blobs?.length);
      expect(env.BLOB_BUCKET === undefined, name).toBe(!uses);
      if (uses) expect(JSON.stringify(env.BLOB_BUCKET), name).toMatch(/Blobs[0-9A-F]{8}/);
    }
    expect(handlerNames.filter((n) => (HANDLERS[n] as HandlerSpec).blobs?.length).sort()).toEqual(["blobExpiry", "compactionWorker", "plainRoutes", "summarizingRoutes"]);
    expect(Object.keys(prod.templates.storage.findOutputs("BlobBucketName"))).toHaveLength(1);
  });

  it("grants object actions on blobs/* only, and deletes only to the functions that erase or expire blobs", () => {
    for (const s of [prod, dev, kms]) {
      for (const [name, { template, id }] of Object.entries(functionsOf(s)) as Array<[HandlerName, { template: Template; id: string }]>) {
        const s3 = grantsOf(template, id).filter((g) => g.action.startsWith("s3:"));
        for (const g of s3) expect(g.resource, `${name} ${g.action}`).toBe(g.action === "s3:ListBucket" ? "bucket" : "bucket/blobs/*");
        const deletes = s3.some((g) => g.action === "s3:DeleteObject");
        expect(deletes, name).toBe(Boolean((HANDLERS[name] as HandlerSpec).blobs?.includes("delete")));
        if (deletes) expect(name === "blobExpiry" || (HANDLERS[name] as HandlerSpec).erases, name).toBeTruthy();
      }
    }
  });
});

describe("events: bus, rules, retries and the dead-letter queue", () => {
  const rules = [
    ["PlanCompleted", "vancetope.plan", "planCompleted"],
    ["InboxItemAnswered", "vancetope.inbox", "inboxAnswered"],
  ] as const;

  it.each(rules)("routes %s from %s to its function with retries and the DLQ", (detailType, source, handler) => {
    const t = prod.templates.events;
    const fnId = functionsOf(prod)[handler].id;
    const busId = Object.keys(t.findResources("AWS::Events::EventBus"))[0]!;
    const dlqId = Object.keys(t.findResources("AWS::SQS::Queue"))[0]!;
    t.hasResourceProperties("AWS::Events::Rule", {
      EventBusName: { Ref: busId },
      EventPattern: { source: [source], "detail-type": [detailType] },
      State: "ENABLED",
      Targets: [
        {
          Arn: { "Fn::GetAtt": [fnId, "Arn"] },
          Id: Match.anyValue(),
          RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 6 * 3600 },
          DeadLetterConfig: { Arn: { "Fn::GetAtt": [dlqId, "Arn"] } },
        },
      ],
    });
    // A handler that throws is retried by Lambda, then parked in the same DLQ.
    t.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      FunctionName: { Ref: fnId },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 6 * 3600,
      DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [dlqId, "Arn"] } } },
    });
    t.hasResourceProperties("AWS::Lambda::Permission", {
      Action: "lambda:InvokeFunction",
      Principal: "events.amazonaws.com",
      FunctionName: { "Fn::GetAtt": [fnId, "Arn"] },
    });
  });

  it("has exactly the two incoming rules on a stage-named bus", () => {
    const t = prod.templates.events;
    t.resourceCountIs("AWS::Events::Rule", 2);
    t.hasResourceProperties("AWS::Events::EventBus", { Name: "team-a-vancetope-memory-bus" });
  });

  it("keeps dead letters 14 days, encrypted, TLS-only, writable by the two rules only (its alarm: monitoring.test.ts)", () => {
    const t = prod.templates.events;
    t.resourceCountIs("AWS::SQS::Queue", 1);
    t.hasResourceProperties("AWS::SQS::Queue", { MessageRetentionPeriod: 14 * 24 * 3600, SqsManagedSseEnabled: true });
    // What must still be found by a late delivery lives longer than the queues hold one (the 6 h event age above).
    expect(LATEST_DELIVERY_MS).toBeGreaterThan((6 * 3600 + 14 * 24 * 3600) * 1000);
    const policy = Object.values(t.findResources("AWS::SQS::QueuePolicy"))[0]!;
    const statements = policy.Properties.PolicyDocument.Statement as Array<Record<string, any>>;
    expect(statements.find((s) => s.Effect === "Deny")?.Condition).toEqual({ Bool: { "aws:SecureTransport": "false" } });
    const fromRules = statements.filter((s) => s.Principal?.Service === "events.amazonaws.com");
    expect(fromRules).toHaveLength(2);
    for (const s of fromRules) {
      expect(s.Action).toBe("sqs:SendMessage");
      expect(JSON.stringify(s.Condition.ArnEquals["aws:SourceArn"])).toMatch(/Rule/);
    }
  });

  it("lets the configured engine accounts put only the incoming event sources and kinds on the bus", () => {
    prod.templates.events.hasResourceProperties("AWS::Events::EventBusPolicy", {
      Statement: {
        Effect: "Allow",
        Action: "events:PutEvents",
        Principal: { AWS: { "Fn::Join": ["", Match.arrayWith([`:iam::${PUBLISHER_ACCOUNT}:root`])] } },
        Condition: {
          "ForAllValues:StringEquals": {
            "events:source": ["vancetope.plan", "vancetope.inbox"],
            "events:detail-type": ["PlanCompleted", "InboxItemAnswered"],
          },
        },
      },
    });
    dev.templates.events.resourceCountIs("AWS::Events::EventBusPolicy", 0);
  });

  it("tells the two event handlers which tenants each publisher account may act for, and no other function", () => {
    for (const name of handlerNames) {
      const { template, id } = functionsOf(prod)[name];
      const env = props(template, id).Environment.Variables as Record<string, unknown>;
      expect(env.EVENT_PUBLISHERS, name).toBe((HANDLERS[name] as HandlerSpec).receivesEvents ? `${PUBLISHER_ACCOUNT}=team-a-engine` : undefined);
    }
    // Without publishers the handlers accept the service's own account alone.
    const dev1 = functionsOf(dev).planCompleted;
    expect(props(dev1.template, dev1.id).Environment.Variables.EVENT_PUBLISHERS).toBe("");
  });
});

describe("api: routes, authorizer and groups", () => {
  const routeKeys = Object.keys(API_ROUTES);

  it("has exactly the contract's routes, each integrated with its group's function", () => {
    const t = prod.templates.api;
    const fns = functionsOf(prod);
    const routes = Object.values(t.findResources("AWS::ApiGatewayV2::Route")).map((r) => r.Properties);
    expect(routes.map((r) => r.RouteKey).sort()).toEqual([...routeKeys].sort());
    const integrations = t.findResources("AWS::ApiGatewayV2::Integration");
    for (const route of routes) {
      const integrationId = (route.Target["Fn::Join"][1] as unknown[])
        .map((p) => (typeof p === "object" && p && "Ref" in p ? (p as { Ref: string }).Ref : ""))
        .find((id) => id && integrations[id])!;
      const integration = integrations[integrationId]!.Properties;
      expect(integration.IntegrationType).toBe("AWS_PROXY");
      expect(integration.PayloadFormatVersion).toBe("2.0");
      const group = API_ROUTES[route.RouteKey as keyof typeof API_ROUTES];
      expect(integration.IntegrationUri, route.RouteKey).toEqual({ "Fn::GetAtt": [fns[group].id, "Arn"] });
    }
  });

  it("puts every route but /health and /openapi.json behind the API-key authorizer", () => {
    const t = prod.templates.api;
    const authorizerId = Object.keys(t.findResources("AWS::ApiGatewayV2::Authorizer"))[0]!;
    for (const route of Object.values(t.findResources("AWS::ApiGatewayV2::Route")).map((r) => r.Properties)) {
      if ((PUBLIC_ROUTES as readonly string[]).includes(route.RouteKey)) {
        expect(route.AuthorizationType, route.RouteKey).toBe("NONE");
        expect(route.AuthorizerId).toBeUndefined();
      } else {
        expect(route.AuthorizationType, route.RouteKey).toBe("CUSTOM");
        expect(route.AuthorizerId, route.RouteKey).toEqual({ Ref: authorizerId });
      }
    }
    expect(routeKeys).not.toContain("GET /");
  });

  it("uses a REQUEST authorizer with simple responses on the Authorization header, cached briefly", () => {
    const t = prod.templates.api;
    expect(AUTHORIZER_CACHE_TTL).toBe("60 seconds");
    t.hasResourceProperties("AWS::ApiGatewayV2::Authorizer", {
      AuthorizerType: "REQUEST",
      AuthorizerPayloadFormatVersion: "2.0",
      EnableSimpleResponses: true,
      IdentitySource: ["$request.header.Authorization"],
      AuthorizerResultTtlInSeconds: 60,
      AuthorizerUri: Match.objectLike({
        "Fn::Join": ["", Match.arrayWith([{ "Fn::GetAtt": [functionsOf(prod).authorizer.id, "Arn"] }])],
      }),
    });
    t.hasResourceProperties("AWS::Lambda::Permission", {
      Action: "lambda:InvokeFunction",
      Principal: "apigateway.amazonaws.com",
      FunctionName: { "Fn::GetAtt": [functionsOf(prod).authorizer.id, "Arn"] },
    });
  });

  it("throttles the stage, logs access for a month and lets any origin send the bearer header, delete, and read the export's next cursor", () => {
    const t = prod.templates.api;
    t.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingBurstLimit: THROTTLE.burst, ThrottlingRateLimit: THROTTLE.rate },
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
    const stage = Object.values(t.findResources("AWS::ApiGatewayV2::Stage"))[0]!.Properties;
    const accessLogId = stage.AccessLogSettings.DestinationArn["Fn::GetAtt"][0] as string;
    expect(t.toJSON().Resources[accessLogId].Properties.RetentionInDays).toBe(30);
    t.hasResourceProperties("AWS::ApiGatewayV2::Api", {
      ProtocolType: "HTTP",
      CorsConfiguration: {
        AllowOrigins: ["*"],
        AllowHeaders: ["authorization", "content-type"],
        AllowMethods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
        ExposeHeaders: [NEXT_CURSOR_HEADER.toLowerCase()],
        MaxAge: 86400,
      },
    });
  });

  it("exports the API URL, table name, bus name and DLQ URL as stack outputs", () => {
    expect(Object.keys(prod.templates.api.findOutputs("ApiUrl"))).toHaveLength(1);
    expect(Object.keys(prod.templates.storage.findOutputs("TableName"))).toHaveLength(1);
    expect(Object.keys(prod.templates.events.findOutputs("EventBusName"))).toHaveLength(1);
    expect(Object.keys(prod.templates.events.findOutputs("EventsDlqUrl"))).toHaveLength(1);
  });
});

describe("functions: runtime, sizes, settings, logs", () => {
  const names = Object.keys(HANDLERS) as HandlerName[];

  it.each(names)("%s runs its entry on Node 22 (arm64) with its memory, timeout and one-month logs", (name) => {
    const { template, id } = functionsOf(prod)[name];
    const spec = HANDLERS[name];
    const p = props(template, id);
    expect(p.Runtime).toBe("nodejs22.x");
    expect(p.Handler).toBe(spec.entry.replace(/\.ts$/, ".handler"));
    expect(p.Architectures).toEqual(["arm64"]);
    expect(p.MemorySize).toBe(spec.memoryMb);
    expect(p.Timeout).toBe(spec.timeoutSeconds);
    expect(p.TracingConfig).toEqual({ Mode: "Active" });
    expect(p.Code.S3Key).toMatch(/\.zip$/);
    const logGroupId = p.LoggingConfig.LogGroup.Ref as string;
    const logGroup = template.toJSON().Resources[logGroupId];
    expect(logGroup.Type).toBe("AWS::Logs::LogGroup");
    expect(logGroup.Properties.RetentionInDays).toBe(30);
    expect(logGroup.DeletionPolicy).toBe("Retain");
  });

  it("turns the tracer on, with its service name and no answers in traces, exactly in the functions that bundle it", () => {
    const traced = names.filter((n) => (HANDLERS[n] as HandlerSpec).tracesCalls);
    expect(traced.sort()).toEqual(["compactionWorker", "inboxAnswered", "planCompleted", "summarizingRoutes"]);
    for (const name of names) {
      const { template, id } = functionsOf(prod)[name];
      const env = props(template, id).Environment.Variables as Record<string, unknown>;
      expect(env.POWERTOOLS_SERVICE_NAME, name).toBe("vancetope-memory");
      if (traced.includes(name)) {
        expect(env, name).toMatchObject({ POWERTOOLS_TRACE_ENABLED: "true", POWERTOOLS_TRACER_CAPTURE_RESPONSE: "false" });
      } else {
        expect(env.POWERTOOLS_TRACE_ENABLED, name).toBeUndefined();
      }
    }
  });

  it("keeps the compaction routes within API Gateway's 29 s and gives range compaction 60 s", () => {
    expect(HANDLERS.summarizingRoutes).toMatchObject({ timeoutSeconds: 29, memoryMb: 1024 });
    expect(HANDLERS.inboxAnswered.timeoutSeconds).toBe(60);
  });

  it("gives the compaction worker minutes, a lease that outlasts its timeout, retries and the DLQ", () => {
    const { template, id } = functionsOf(prod).compactionWorker;
    const p = props(template, id);
    expect(p.Timeout).toBe(300);
    expect(Number(p.Environment.Variables.COMPACTION_LEASE_MS)).toBeGreaterThan(300_000);
    expect(p.Environment.Variables.OPENAI_API_KEY_PARAM).toBe("/vancetope-memory/team-a/openai-api-key");
    // A job that throws (another holder kept the lease) is retried by Lambda, then parked in the DLQ.
    const dlqId = Object.keys(template.findResources("AWS::SQS::Queue"))[0]!;
    template.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      FunctionName: { Ref: id },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 6 * 3600,
      DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [dlqId, "Arn"] } } },
    });
    // Its reserved concurrency bounds how many folds summarize at once across the stage (and keeps
    // that many free for it): from the deploying shell here, 10 by default.
    expect(p.ReservedConcurrentExecutions).toBe(4);
    const { template: devTemplate, id: devId } = functionsOf(dev).compactionWorker;
    expect(props(devTemplate, devId).ReservedConcurrentExecutions).toBe(10);
    for (const name of ["plainRoutes", "summarizingRoutes", "planCompleted", "inboxAnswered", "authorizer"] as const) {
      const f = functionsOf(prod)[name];
      expect(props(f.template, f.id).ReservedConcurrentExecutions, name).toBeUndefined();
    }
    // No rule and no outside principal reaches it: only the functions that queue folds may invoke it.
    expect(JSON.stringify(prod.templates.events.findResources("AWS::Events::Rule"))).not.toContain(id);
    const perms = Object.values(template.findResources("AWS::Lambda::Permission")).filter((r) => JSON.stringify(r).includes(id));
    expect(perms).toEqual([]);
  });

  it("lets the compaction routes invoke the worker: they know its name, and only turns queue folds", () => {
    const { template, id } = functionsOf(prod).summarizingRoutes;
    expect(props(template, id).Environment.Variables.COMPACTION_WORKER_FUNCTION).toBeDefined();
    for (const name of ["plainRoutes", "planCompleted", "compactionWorker", "authorizer"] as const) {
      const f = functionsOf(prod)[name];
      expect(props(f.template, f.id).Environment?.Variables?.COMPACTION_WORKER_FUNCTION).toBeUndefined();
      expect(grantsOf(f.template, f.id).filter((g) => g.action.startsWith("lambda:"))).toEqual([]);
    }
    // An accepted offer's range job is queued by the InboxItemAnswered function.
    const inbox = functionsOf(prod).inboxAnswered;
    expect(props(inbox.template, inbox.id).Environment.Variables.COMPACTION_WORKER_FUNCTION).toBeDefined();
  });

  it("gives the two route functions the per-tenant rate, 20 per second unless the operator says otherwise", () => {
    for (const name of names) {
      const { template, id } = functionsOf(prod)[name];
      const env = props(template, id).Environment.Variables as Record<string, unknown>;
      const routes = name === "plainRoutes" || name === "summarizingRoutes";
      expect(env.TENANT_RATE_LIMIT, name).toBe(routes ? "20" : undefined);
      expect(env.TENANT_RATE_LIMITS, name).toBe(routes ? "batch=5" : undefined);
    }
    const devRoutes = functionsOf(dev).plainRoutes;
    expect(props(devRoutes.template, devRoutes.id).Environment.Variables).toMatchObject({ TENANT_RATE_LIMIT: "20" });
    expect(props(devRoutes.template, devRoutes.id).Environment.Variables.TENANT_RATE_LIMITS).toBeUndefined();
  });

  it("dev stages drop function logs with the stage", () => {
    const { template, id } = functionsOf(dev).plainRoutes;
    const logGroupId = props(template, id).LoggingConfig.LogGroup.Ref as string;
    expect(template.toJSON().Resources[logGroupId].DeletionPolicy).toBe("Delete");
  });

  it.each(names)("%s gets Powertools settings, the table, and the bus only if it publishes", (name) => {
    const { template, id } = functionsOf(prod)[name];
    const env = props(template, id).Environment.Variables as Record<string, unknown>;
    expect(env.POWERTOOLS_SERVICE_NAME).toBe("vancetope-memory");
    expect(env.POWERTOOLS_METRICS_NAMESPACE).toBe("Vancetope/Memory");
    expect(JSON.stringify(env.TABLE_NAME)).toMatch(/Table/);
    expect("EVENT_BUS_NAME" in env).toBe(HANDLERS[name].publishes.length > 0);
  });

  it.each(names)("%s carries LLM settings and key parameter NAMES only if it summarizes", (name) => {
    const { template, id } = functionsOf(prod)[name];
    const env = props(template, id).Environment.Variables as Record<string, unknown>;
    const llm = ["SUMMARIZER", "SUMMARIZER_MODEL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY_PARAM", "ANTHROPIC_API_KEY_PARAM"];
    if (HANDLERS[name].summarizes) {
      expect(env).toMatchObject({
        SUMMARIZER: "anthropic",
        SUMMARIZER_MODEL: "claude-sonnet-4-5",
        ANTHROPIC_BASE_URL: "https://llm-gateway.example.com",
        OPENAI_API_KEY_PARAM: "/vancetope-memory/team-a/openai-api-key",
        ANTHROPIC_API_KEY_PARAM: "/vancetope-memory/team-a/anthropic-api-key",
      });
      expect(env.OPENAI_BASE_URL).toBeUndefined();
    } else {
      for (const k of llm) expect(env[k], k).toBeUndefined();
    }
    expect(env.OPENAI_API_KEY).toBeUndefined();
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
  });

  it("gives the functions that summarize the deployment's daily token budget per tenant, and no other function", () => {
    for (const name of names) {
      const { template, id } = functionsOf(prod)[name];
      const env = props(template, id).Environment.Variables as Record<string, unknown>;
      expect(env.TENANT_DAILY_TOKEN_BUDGET, name).toBe(HANDLERS[name].summarizes ? "2000000" : undefined);
    }
    const unset = functionsOf(dev).summarizingRoutes;
    expect(props(unset.template, unset.id).Environment.Variables.TENANT_DAILY_TOKEN_BUDGET).toBeUndefined();
  });

  it("leaves SUMMARIZER unset when the deploying shell does not choose (the function picks by configured key)", () => {
    const env = props(functionsOf(dev).summarizingRoutes.template, functionsOf(dev).summarizingRoutes.id).Environment.Variables;
    expect(env.SUMMARIZER).toBeUndefined();
    expect(env.OPENAI_API_KEY_PARAM).toBe("/vancetope-memory/dev-alice/openai-api-key");
  });

  it("never writes an LLM key from the deploying shell into any template", () => {
    for (const t of allTemplates(prod)) {
      const text = JSON.stringify(t.toJSON());
      for (const secret of Object.values(SHELL_SECRETS)) expect(text).not.toContain(secret);
    }
  });
});

describe("IAM: each function gets only what it uses", () => {
  // The read-write roles may not touch API key items: a compromised function cannot mint a key.
  const items = [...TABLE_ITEM_ACTIONS.map((a) => `${a} table`), ...TABLE_ITEM_ACTIONS.map((a) => `Deny ${a} table`)];
  // The functions that erase deleted processes (docs/api.md, "Deleting a process") may also delete items.
  const erases = [`${ERASE_ACTION} table`, `Deny ${ERASE_ACTION} table`];
  const secrets = [
    "ssm:GetParameter ssm:/vancetope-memory/team-a/anthropic-api-key",
    "ssm:GetParameter ssm:/vancetope-memory/team-a/openai-api-key",
  ];
  const dlq = ["sqs:GetQueueAttributes dlq", "sqs:GetQueueUrl dlq", "sqs:SendMessage dlq"];
  const stream = ["dynamodb:DescribeStream stream", "dynamodb:GetRecords stream", "dynamodb:GetShardIterator stream", "dynamodb:ListStreams *"];
  // Every function sends its traces; X-Ray's two actions name no resource.
  const xray = ["xray:PutTelemetryRecords *", "xray:PutTraceSegments *"];
  // Object actions on blobs/* only; listing to read (a missing blob is 404, not 403) and to delete a prefix.
  const blobs = (...actions: string[]) => [...actions.map((a) => `s3:${a} bucket/blobs/*`), "s3:ListBucket bucket"];
  const expected: Record<HandlerName, string[]> = {
    authorizer: ["dynamodb:GetItem table", ...xray],
    plainRoutes: [...items, "dynamodb:Query index:lsi1", "dynamodb:Query index:gsi1", "dynamodb:Query index:gsi2", "events:PutEvents bus", ...blobs("GetObject", "PutObject"), ...xray],
    summarizingRoutes: [
      ...items,
      ...erases,
      "dynamodb:Query index:lsi1",
      "dynamodb:Query index:gsi2",
      "events:PutEvents bus",
      ...secrets,
      "lambda:InvokeFunction worker",
      ...blobs("GetObject", "PutObject", "DeleteObject"),
      ...xray,
    ],
    planCompleted: [...items, "events:PutEvents bus", ...dlq, ...xray],
    // It queues the accepted range for the worker: no LLM secrets, the worker's invoke instead.
    inboxAnswered: [...items, "dynamodb:Query index:lsi1", "events:PutEvents bus", "lambda:InvokeFunction worker", ...dlq, ...xray],
    compactionWorker: [...items, ...erases, "dynamodb:Query index:lsi1", "dynamodb:Query index:gsi2", "events:PutEvents bus", ...secrets, ...dlq, ...blobs("GetObject", "PutObject", "DeleteObject"), ...xray],
    // The stream's records (ListStreams names no resource), then the process's messages and its blobs.
    blobExpiry: [...items, ...stream, ...dlq, ...blobs("GetObject", "PutObject", "DeleteObject"), ...xray],
  };

  it.each(Object.keys(expected) as HandlerName[])("%s: exactly its table actions, indexes, bus and secrets", (name) => {
    const { template, id } = functionsOf(prod)[name];
    expect(grantLines(grantsOf(template, id))).toEqual([...expected[name]].sort());
    // Logs come from the basic execution role and nothing else is attached.
    expect(managedPolicies(template, id)).toEqual(["service-role/AWSLambdaBasicExecutionRole"]);
  });

  it("confines the authorizer to API key items (no tenant data)", () => {
    const { template, id } = functionsOf(prod).authorizer;
    expect(grantsOf(template, id).filter((g) => !g.action.startsWith("xray:"))).toEqual([
      {
        effect: "Allow",
        action: "dynamodb:GetItem",
        resource: "table",
        condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["APIKEY#*"] } },
      },
    ]);
  });

  it.each(handlerNames.filter((n) => HANDLERS[n].table === "read-write"))("%s cannot read or write API key items (a LeadingKeys deny)", (name) => {
    const { template, id } = functionsOf(prod)[name];
    const denied = grantsOf(template, id).filter((g) => g.effect === "Deny");
    expect(denied).toEqual(
      tableItemActions(HANDLERS[name]).map((action) => ({
        effect: "Deny",
        action,
        resource: "table",
        condition: { "ForAnyValue:StringLike": { "dynamodb:LeadingKeys": ["APIKEY#*"] } },
      })),
    );
    expect(TABLE_ITEM_ACTIONS).toEqual(expect.arrayContaining(["dynamodb:PutItem", "dynamodb:UpdateItem"]));
  });

  it.each([
    ["plainRoutes", ["vancetope.inbox"]],
    ["summarizingRoutes", ["vancetope.memory"]],
    ["planCompleted", ["vancetope.memory"]],
    ["inboxAnswered", ["vancetope.memory"]],
    ["compactionWorker", ["vancetope.memory"]],
  ] as const)("%s may put only %j events on the bus", (name, sources) => {
    const { template, id } = functionsOf(prod)[name];
    const put = grantsOf(template, id).filter((g) => g.action === "events:PutEvents");
    expect(put).toEqual([
      { effect: "Allow", action: "events:PutEvents", resource: "bus", condition: { StringEquals: { "events:source": sources } } },
    ]);
  });

  it("grants no wildcard action or resource (X-Ray's and the stream listing, which name none, aside), no scan to any service function, and a delete only to the erasing ones", () => {
    for (const s of [prod, dev, kms]) {
      for (const [name, { template, id }] of Object.entries(functionsOf(s)) as Array<[HandlerName, { template: Template; id: string }]>) {
        for (const g of grantsOf(template, id)) {
          expect(g.action).not.toMatch((HANDLERS[name] as HandlerSpec).erases ? /\*|Scan|BatchWriteItem|PartiQL/ : /\*|DeleteItem|Scan|BatchWriteItem|PartiQL/);
          if (g.resource === "*") expect(["xray:PutTraceSegments", "xray:PutTelemetryRecords", ...(name === "blobExpiry" ? ["dynamodb:ListStreams"] : [])]).toContain(g.action);
        }
      }
    }
  });

  it("adds kms:Decrypt via SSM on a customer managed key to the summarizing functions only", () => {
    for (const [name, { template, id }] of Object.entries(functionsOf(kms)) as Array<[HandlerName, { template: Template; id: string }]>) {
      const decrypt = grantsOf(template, id).filter((g) => g.action.startsWith("kms:"));
      if (HANDLERS[name].summarizes) {
        expect(decrypt).toEqual([
          {
            effect: "Allow",
            action: "kms:Decrypt",
            resource: KMS_KEY,
            condition: { StringEquals: { "kms:ViaService": `ssm.${REGION}.amazonaws.com` } },
          },
        ]);
      } else {
        expect(decrypt).toEqual([]);
      }
    }
    // The default aws/ssm key needs no IAM grant: without the setting there is no kms action at all.
    for (const { template, id } of Object.values(functionsOf(prod))) {
      expect(grantsOf(template, id).filter((g) => g.action.startsWith("kms:"))).toEqual([]);
    }
  });
});

describe("bundles: what sst deploy uploads", () => {
  it("is byte-identical to the productionBuildOptions build the bundle test imports", async () => {
    // SST bundles with its own esbuild; build with that same one.
    const esbuild = createRequire(createRequire(import.meta.url).resolve("sst/package.json"))(
      "esbuild",
    ) as typeof import("esbuild");
    const out = mkdtempSync(path.join(tmpdir(), "vtm-sst-"));
    const { api, events } = prod.outputs;
    const fns = {
      plainRoutes: api.functions.plainRoutes,
      summarizingRoutes: api.functions.summarizingRoutes,
      authorizer: api.functions.authorizer,
      planCompleted: events.targets.PlanCompleted!,
      inboxAnswered: events.targets.InboxItemAnswered!,
      compactionWorker: events.worker,
    };
    for (const [name, fn] of Object.entries(fns) as Array<[HandlerName, (typeof fns)["plainRoutes"]]>) {
      const entry = HANDLERS[name].entry;
      const rel = entry.replace(/\.ts$/, ".mjs");
      const deployed = readFileSync(path.join(useProject().paths.artifacts, fn.node.addr, rel));
      const outfile = path.join(out, name, rel);
      await esbuild.build(productionBuildOptions(entry, outfile));
      expect(readFileSync(outfile).equals(deployed), `${name}: SST's bundle differs from productionBuildOptions`).toBe(true);
    }
  }, 120_000);

  it("deploys docs/openapi.json next to the bundle of the function that serves it, and beside no other", () => {
    const { api } = prod.outputs;
    const served = path.join(useProject().paths.artifacts, api.functions.plainRoutes.node.addr, "functions", "openapi.json");
    expect(readFileSync(served, "utf8")).toBe(readFileSync(OPENAPI_DOCUMENT, "utf8"));
    for (const fn of [api.functions.summarizingRoutes, api.functions.authorizer]) {
      expect(existsSync(path.join(useProject().paths.artifacts, fn.node.addr, "functions", "openapi.json"))).toBe(false);
    }
  });
});

describe("web: the inspector site", () => {
  it("serves web/ from a private bucket through CloudFront", () => {
    const t = (hasWeb ? prod : dev).templates.web!;
    t.resourceCountIs("AWS::CloudFront::Distribution", 1);
    t.hasResourceProperties("AWS::S3::Bucket", {
      PublicAccessBlockConfiguration: Match.objectLike({ BlockPublicAcls: true, RestrictPublicBuckets: true }),
    });
    expect(Object.keys(t.findOutputs("InspectorUrl"))).toHaveLength(1);
  });

  it("replaces the API URL placeholder in .html/.js and makes browsers revalidate unhashed .js/.css", () => {
    const props = inspectorSiteProps("https://api.example", false);
    expect(props.path).toBe("web");
    expect(props.replaceValues).toEqual([
      { files: "**/*.html", search: API_URL_PLACEHOLDER, replace: "https://api.example" },
      { files: "**/*.js", search: API_URL_PLACEHOLDER, replace: "https://api.example" },
    ]);
    expect(props.assets?.fileOptions).toEqual([{ files: ["**/*.js", "**/*.css"], cacheControl: NO_CACHE }]);
  });

  it.runIf(hasWeb)("uploads web/ with those replacements and cache options (sst deploy's site deployment)", () => {
    const uploader = Object.values(prod.templates.web!.findResources("Custom::S3Uploader"))[0]!.Properties;
    // SST applies the last matching option: ours comes after its year-long default for .js/.css.
    expect(uploader.fileOptions.at(-1)).toEqual({ files: ["**/*.js", "**/*.css"], cacheControl: NO_CACHE });
    expect(uploader.replaceValues).toHaveLength(2);
    for (const r of uploader.replaceValues) {
      expect(r.search).toBe(API_URL_PLACEHOLDER);
      expect(JSON.stringify(r.replace)).toMatch(/ApiEndpoint/);
    }
  });
});
