/** Creates the table (local runner and tests); in AWS the SST stack creates it. */
import {
  CreateTableCommand,
  ResourceInUseException,
  waitUntilTableExists,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { tableAttributes, tableIndexes } from "./table.js";

/** Any client that can send the low-level table commands (the document client can too). */
export interface CommandSender {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  send(command: any): Promise<any>;
}

export async function createTable(client: CommandSender, tableName: string): Promise<void> {
  const { lsi1, gsi1, gsi2 } = tableIndexes;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: tableAttributes.map((a) => ({
          AttributeName: a.name,
          AttributeType: a.type,
        })),
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        LocalSecondaryIndexes: [
          {
            IndexName: lsi1.name,
            KeySchema: [
              { AttributeName: "pk", KeyType: "HASH" },
              { AttributeName: lsi1.sortKey, KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: [...lsi1.nonKeyAttributes] },
          },
        ],
        GlobalSecondaryIndexes: [gsi1, gsi2].map((g) => ({
          IndexName: g.name,
          KeySchema: [
            { AttributeName: g.partitionKey, KeyType: "HASH" },
            { AttributeName: g.sortKey, KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        })),
      }),
    );
  } catch (e) {
    // A kept-on-disk table from an earlier run is fine.
    if (!(e instanceof ResourceInUseException)) throw e;
  }
  // DynamoDB Local creates a table ACTIVE at once, so the waiter's first DescribeTable answers; it
  // throws if the table is not ACTIVE in time. Any client that sends DescribeTable will do (the
  // document client passes low-level commands through unchanged).
  await waitUntilTableExists({ client: client as DynamoDBClient, minDelay: 1, maxDelay: 2, maxWaitTime: 30 }, { TableName: tableName });
}
