/** A fresh table in the run's DynamoDB Local engine, and a store over it. */
import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createTable } from "../../core/adapters/dynamodb/create-table.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";

export function dynamoEndpoint(): string {
  return inject("dynamoEndpoint");
}

export async function freshTable(prefix = "t") {
  const endpoint = dynamoEndpoint();
  const client = createDocumentClient({ endpoint });
  const tableName = `${prefix}-${randomUUID().slice(0, 8)}`;
  await createTable(client, tableName);
  return { endpoint, client, tableName, store: createDynamoStore({ client, tableName }) };
}
