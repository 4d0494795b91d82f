/**
 * The one DynamoDB table, with the key schema and indexes of core/adapters/dynamodb/table.ts (the
 * same constants the local runner creates its table from), and the bucket of the blobs the large
 * parts of native message content are stored in (docs/configuration.md, "Blob storage"). On-demand
 * billing and point-in-time recovery everywhere; outside dev stages deletion protection and RETAIN
 * keep a team's data.
 */
import { RemovalPolicy } from "aws-cdk-lib";
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from "aws-cdk-lib/aws-dynamodb";
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from "aws-cdk-lib/aws-s3";
import { NagSuppressions } from "cdk-nag";
import type { StackContext } from "sst/constructs";
import { TTL_ATTRIBUTE } from "../core/adapters/dynamodb/keys.js";
import { tableAttributes, tableIndexes } from "../core/adapters/dynamodb/table.js";
import { stageConfigOf } from "./config.js";

const attributeType = (name: string) => {
  const attr = tableAttributes.find((a) => a.name === name);
  if (!attr) throw new Error(`table.ts declares no attribute '${name}'`);
  return attr.type === "S" ? AttributeType.STRING : attr.type === "N" ? AttributeType.NUMBER : AttributeType.BINARY;
};
const key = (name: string) => ({ name, type: attributeType(name) });

export function Storage({ stack, app }: StackContext) {
  const config = stageConfigOf(app);
  const table = new Table(stack, "Table", {
    tableName: app.logicalPrefixedName("table"),
    partitionKey: key("pk"),
    sortKey: key("sk"),
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: !config.dev,
    removalPolicy: config.dev ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    // Only queued and prepared folds that were never committed carry it (docs/compaction.md).
    timeToLiveAttribute: TTL_ATTRIBUTE,
    // Read by the blob expiry (stacks/events.ts): a TTL deletion's old image names its blobs.
    stream: StreamViewType.OLD_IMAGE,
  });
  const { lsi1, gsi1, gsi2 } = tableIndexes;
  // Sparse: only items of the replay carry lsi1sk; one strongly consistent Query returns them with
  // every attribute a turn reads (a summary's sourceRefs stay in the base table).
  table.addLocalSecondaryIndex({
    indexName: lsi1.name,
    sortKey: key(lsi1.sortKey),
    projectionType: ProjectionType.INCLUDE,
    nonKeyAttributes: [...lsi1.nonKeyAttributes],
  });
  for (const gsi of [gsi1, gsi2]) {
    table.addGlobalSecondaryIndex({
      indexName: gsi.name,
      partitionKey: key(gsi.partitionKey),
      sortKey: key(gsi.sortKey),
      projectionType: ProjectionType.ALL,
    });
  }
  // Encrypted like the table (its items are under the AWS owned key, no customer key): S3 managed
  // keys. Private, TLS only, no ACLs; blobs are immutable, so versions would only keep what a
  // deletion is meant to remove.
  const blobs = new Bucket(stack, "Blobs", {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    enforceSSL: true,
    versioned: false,
    removalPolicy: config.dev ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    // A dev stage's removal empties it first, as it drops the table with its items.
    autoDeleteObjects: config.dev,
  });
  NagSuppressions.addResourceSuppressions(blobs, [
    {
      id: "AwsSolutions-S1",
      reason: "Only the stage's own function roles reach the bucket (private, TLS only, no bucket policy grants anyone else), and each object is named by its tenant, process and content hash; CloudTrail data events are the operator's audit trail for it, as for the table's items. A log bucket would add a second store to secure and expire with no reader.",
    },
  ]);
  stack.addOutputs({ TableName: table.tableName, BlobBucketName: blobs.bucketName });
  return { table, blobs };
}
