/**
 * The paging helpers (core/adapters/dynamodb/paging.ts) against the real DynamoDB Local engine:
 * every page of a Query, and BatchGetItem in requests of at most 100 keys.
 */
import { BatchGetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { messageKey } from "../../core/adapters/dynamodb/message-params.js";
import { BATCH_GET_LIMIT, batchGetAll, queryAll } from "../../core/adapters/dynamodb/paging.js";
import { freshTable } from "../support/dynamo.js";
import { countCommands } from "../support/recording-store.js";
import { makeMessage } from "../support/fixtures.js";
import { draftMessages, writeMessages } from "../support/seed.js";

describe("paging", () => {
  it("queryAll follows every page of a Query and sums the capacity it read", async () => {
    const { client, tableName, store } = await freshTable("page");
    const key = { tenantId: "acme", processId: "paged" };
    await store.upsertProcess("acme", { processId: "paged", projectId: "p" }, new Date().toISOString());
    for (let i = 0; i < 5; i++) await store.appendMessage(key, makeMessage("paged"));
    const sent = countCommands(client);
    const { items, consumed } = await queryAll(client, {
      TableName: tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :m)",
      ExpressionAttributeValues: { ":pk": "T#acme#P#paged", ":m": "M#" },
      Limit: 2,
    });
    expect(items).toHaveLength(5);
    // Pages of 2, 2 and 1: the short last page carries no LastEvaluatedKey.
    expect(sent.names().filter((n) => n === QueryCommand.name)).toHaveLength(3);
    expect(consumed).toBeGreaterThan(0);
  });

  it("batchGetAll asks for at most 100 keys per request and returns every item that exists", async () => {
    const { client, tableName } = await freshTable("batch");
    const key = { tenantId: "acme", processId: "many" };
    const messages = draftMessages(key, 150, (i) => ({ role: "USER", content: `message ${i}` }));
    await writeMessages(client, tableName, key, messages);
    const ids = messages.map((m) => m.id);
    const sent = countCommands(client);
    const items = await batchGetAll(client, tableName, [...ids, "msg_missing"].map((id) => messageKey(key, id)));
    expect(items.map((i) => i.id).sort()).toEqual([...ids].sort());
    expect(sent.names().filter((n) => n === BatchGetCommand.name)).toHaveLength(Math.ceil(151 / BATCH_GET_LIMIT));
  });
});
