/**
 * The one DynamoDB table, with the key schema and indexes of core/adapters/dynamodb/table.ts (the
 * same constants the local runner creates its table from). On-demand billing and point-in-time
 * recovery everywhere; outside dev stages deletion protection and RETAIN keep a team's data.
 */
import { RemovalPolicy } from "aws-cdk-lib";
import { AttributeType, BillingMode, ProjectionType, Table } from "aws-cdk-lib/aws-dynamodb";
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
  stack.addOutputs({ TableName: table.tableName });
  return { table };
}
