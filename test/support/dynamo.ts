/** A fresh table in the run's DynamoDB Local engine, a store over it, and a raw read of a partition. */
import { randomUUID } from "node:crypto";
import { QueryCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { inject } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createTable } from "../../core/adapters/dynamodb/create-table.js";
import { processPk } from "../../core/adapters/dynamodb/keys.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import type { ProcessKey } from "../../core/ports/store.js";

export function dynamoEndpoint(): string {
  return inject("dynamoEndpoint");
}

export async function freshTable(prefix = "t") {
  const endpoint = dynamoEndpoint();
  const client = createDocumentClient({ endpoint });
  const tableName = `${prefix}-${randomUUID().slice(0, 8)}`;
  await createTable(client, tableName);
  return {
    endpoint,
    client,
    tableName,
    store: createDynamoStore({ client, tableName }),
    /** Every item of the process's partition as stored, strongly consistent, past the store's reads. */
    partition: (key: ProcessKey) => readPartition(client, tableName, key),
  };
}

async function readPartition(client: DynamoDBDocumentClient, tableName: string, key: ProcessKey) {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({ TableName: tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": processPk(key) }, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
