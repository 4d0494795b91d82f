/**
 * Least-privilege IAM statements, derived from each function's HandlerSpec: the table actions it
 * uses on the table (and Query on exactly the indexes it reads), PutEvents on the bus for its own
 * event sources, the object actions it uses on the blobs, and the LLM key parameters only for the
 * functions that summarize.
 */
import { ArnFormat, Stack } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import type { IEventBus } from "aws-cdk-lib/aws-events";
import type { IBucket } from "aws-cdk-lib/aws-s3";
import { Effect, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Construct } from "constructs";
import { API_KEY_PK_PREFIX } from "../core/adapters/dynamodb/api-keys.js";
import { tableIndexes } from "../core/adapters/dynamodb/table.js";
import { BLOB_ROOT } from "../core/adapters/blobs/keys.js";
import type { BlobAccess, HandlerSpec } from "./handlers.js";
import type { StageConfig } from "./stage.js";

/**
 * What the store does: Get/BatchGet/Query reads, Put/Update writes, ConditionCheck inside
 * TransactWriteItems (which has no IAM action of its own). Nothing is ever scanned; only the
 * functions that erase deleted processes delete items ({@link ERASE_ACTION}).
 */
export const TABLE_ITEM_ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:BatchGetItem",
  "dynamodb:Query",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:ConditionCheckItem",
];

/** The one extra action of a function that erases deleted processes (HandlerSpec.erases). */
export const ERASE_ACTION = "dynamodb:DeleteItem";

/** The table actions of a read-write function. */
export const tableItemActions = (spec: HandlerSpec) => (spec.erases ? [...TABLE_ITEM_ACTIONS, ERASE_ACTION] : TABLE_ITEM_ACTIONS);

export const indexArn = (table: ITable, index: keyof typeof tableIndexes) =>
  `${table.tableArn}/index/${tableIndexes[index].name}`;

export function tableStatements(table: ITable, spec: HandlerSpec): PolicyStatement[] {
  if (spec.table === "api-keys") {
    // The authorizer can read API key items and nothing else: no tenant data.
    return [
      new PolicyStatement({
        actions: ["dynamodb:GetItem"],
        resources: [table.tableArn],
        conditions: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [`${API_KEY_PK_PREFIX}*`] } },
      }),
    ];
  }
  const statements = [
    new PolicyStatement({ actions: tableItemActions(spec), resources: [table.tableArn] }),
    // API key items are the operator's (`npm run keys`) and the authorizer's: a read-write role
    // that could put one could mint a key for any tenant. The explicit deny wins over the allow
    // above for any request whose partition keys include an `APIKEY#` one.
    new PolicyStatement({
      effect: Effect.DENY,
      actions: tableItemActions(spec),
      resources: [table.tableArn],
      conditions: { "ForAnyValue:StringLike": { "dynamodb:LeadingKeys": [`${API_KEY_PK_PREFIX}*`] } },
    }),
  ];
  if (spec.queries.length > 0) {
    statements.push(
      new PolicyStatement({ actions: ["dynamodb:Query"], resources: spec.queries.map((i) => indexArn(table, i)) }),
    );
  }
  return statements;
}

/** The object action of each kind of blob access. */
export const BLOB_OBJECT_ACTIONS: Record<BlobAccess, string> = {
  read: "s3:GetObject",
  write: "s3:PutObject",
  delete: "s3:DeleteObject",
};

/** Every object the service writes is under this prefix (core/adapters/blobs/keys.ts). */
export const blobObjectsArn = (bucket: IBucket) => `${bucket.bucketArn}/${BLOB_ROOT}/*`;

/**
 * Object actions on `blobs/*` only, and ListBucket for reading (without it S3 answers a missing
 * blob with 403, not 404) and for deleting (a process's blobs are found by listing its prefix).
 * ListBucket carries no prefix condition: a GetObject's 404 is decided without one, and the bucket
 * holds nothing but blobs.
 */
export function blobStatements(bucket: IBucket, spec: HandlerSpec): PolicyStatement[] {
  const access = spec.blobs ?? [];
  if (access.length === 0) return [];
  const statements = [new PolicyStatement({ actions: access.map((a) => BLOB_OBJECT_ACTIONS[a]), resources: [blobObjectsArn(bucket)] })];
  if (access.includes("read") || access.includes("delete")) {
    statements.push(new PolicyStatement({ actions: ["s3:ListBucket"], resources: [bucket.bucketArn] }));
  }
  return statements;
}

export function putEventsStatements(bus: IEventBus, spec: HandlerSpec): PolicyStatement[] {
  if (spec.publishes.length === 0) return [];
  return [
    new PolicyStatement({
      actions: ["events:PutEvents"],
      resources: [bus.eventBusArn],
      // A function cannot forge another domain's events (e.g. a PlanCompleted).
      conditions: { StringEquals: { "events:source": [...spec.publishes] } },
    }),
  ];
}

export const parameterArn = (scope: Construct, name: string) =>
  Stack.of(scope).formatArn({
    service: "ssm",
    resource: "parameter",
    resourceName: name.replace(/^\//, ""),
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });

export function llmSecretStatements(scope: Construct, config: StageConfig): PolicyStatement[] {
  const statements = [
    new PolicyStatement({
      actions: ["ssm:GetParameter"],
      // One parameter per remote provider (core/adapters/llm/provider-descriptors.ts).
      resources: Object.values(config.secretParams).map((n) => parameterArn(scope, n)),
    }),
  ];
  if (config.secretsKmsKeyArn) {
    // Only for a customer managed key; the default aws/ssm key's policy already allows decryption via SSM.
    statements.push(
      new PolicyStatement({
        actions: ["kms:Decrypt"],
        resources: [config.secretsKmsKeyArn],
        conditions: { StringEquals: { "kms:ViaService": `ssm.${Stack.of(scope).region}.amazonaws.com` } },
      }),
    );
  }
  return statements;
}
