/**
 * Reads that meet trouble, against the real DynamoDB Local engine: BatchGetItem's unprocessed keys
 * (throttling) and a stored item that no longer parses.
 */
import { randomUUID } from "node:crypto";
import { BatchGetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createTable } from "../../core/adapters/dynamodb/create-table.js";
import { messageSk, processPk } from "../../core/adapters/dynamodb/keys.js";
import { BATCH_GET_ATTEMPTS, createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import { createMemoryLog } from "../support/memory-log.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { AppError } from "../../core/domain/errors.js";
import { createDeps } from "../../core/composition/create-deps.js";
import { createHttpApp } from "../../core/adapters/http/app.js";
import { allRouteGroups } from "../../core/adapters/http/groups.js";
import { dynamoEndpoint } from "../support/dynamo.js";
import { makeMessage } from "../support/fixtures.js";

let client: DynamoDBDocumentClient;
let tableName: string;

beforeAll(async () => {
  client = createDocumentClient({ endpoint: dynamoEndpoint() });
  tableName = `reads-${randomUUID().slice(0, 8)}`;
  await createTable(client, tableName);
});

/**
 * A client over the same engine whose first `throttled` BatchGetItem calls send only one key of
 * the request to the engine and hand the rest back as UnprocessedKeys, as DynamoDB does when a
 * partition is throttled. Every answer still comes from the engine.
 */
function throttlingClient(throttled: number, options: { serveNone?: boolean } = {}) {
  const throttledClient = createDocumentClient({ endpoint: dynamoEndpoint() });
  const send = throttledClient.send.bind(throttledClient) as (command: unknown) => Promise<any>;
  let calls = 0;
  const requests: number[] = [];
  (throttledClient as { send: unknown }).send = async (command: unknown) => {
    if (!(command instanceof BatchGetCommand)) return send(command);
    calls++;
    const table = command.input.RequestItems![tableName]!;
    const keys = table.Keys!;
    requests.push(keys.length);
    if (options.serveNone) return { Responses: { [tableName]: [] }, UnprocessedKeys: { [tableName]: table } };
    if (calls > throttled || keys.length < 2) return send(command);
    const out = await send(new BatchGetCommand({ RequestItems: { [tableName]: { ...table, Keys: keys.slice(0, 1) } } }));
    return { ...out, UnprocessedKeys: { [tableName]: { ...table, Keys: keys.slice(1) } } };
  };
  return { client: throttledClient, requests };
}

async function seedMessages(processId: string, count: number) {
  const store = createDynamoStore({ client, tableName });
  const key = { tenantId: "acme", processId };
  await store.upsertProcess("acme", { processId, projectId: "p" }, new Date().toISOString());
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const m = makeMessage(processId, { content: `message ${i}` });
    await store.appendMessage(key, m);
    ids.push(m.id);
  }
  return { key, ids };
}

describe("BatchGetItem unprocessed keys", () => {
  it("retries only the unprocessed keys, after growing jittered waits, and returns every message", async () => {
    const { key, ids } = await seedMessages("batch-1", 5);
    const runs = [];
    for (const random of [() => 0, () => 1, () => 0.5]) {
      const throttle = throttlingClient(3);
      const waits: number[] = [];
      const store = createDynamoStore({ client: throttle.client, tableName, retry: { sleep: async (ms) => void waits.push(ms), random } });
      const found = await store.getMessages(key, ids);
      expect(found.map((m) => m.id)).toEqual([...ids].sort());
      expect(throttle.requests).toEqual([5, 4, 3, 2]); // each retry asks for the unprocessed keys only
      runs.push(waits);
    }
    // Three retries, each wait between half and all of a doubling ceiling (50, 100, 200 ms).
    expect(runs[0]).toEqual([25, 50, 100]);
    expect(runs[1]).toEqual([50, 100, 200]);
    expect(runs[2]).toEqual([38, 75, 150]);
  });

  it("gives up with an error after a bounded number of attempts instead of looping", async () => {
    const { key, ids } = await seedMessages("batch-2", 3);
    const throttle = throttlingClient(Number.POSITIVE_INFINITY, { serveNone: true });
    const waits: number[] = [];
    const store = createDynamoStore({ client: throttle.client, tableName, retry: { sleep: async (ms) => void waits.push(ms) } });
    await expect(store.getMessages(key, ids)).rejects.toThrow(/unprocessed after 8 attempts/);
    expect(throttle.requests).toHaveLength(BATCH_GET_ATTEMPTS);
    expect(waits).toHaveLength(BATCH_GET_ATTEMPTS - 1);
    expect(waits.every((ms) => ms >= 25 && ms <= 2_000)).toBe(true);
  });
});

describe("a stored item that fails to parse", () => {
  async function corruptProcess(processId: string) {
    const { key, ids } = await seedMessages(processId, 2);
    // A message item as an older or buggy writer might have left it: an unknown role, no tokens.
    const sk = messageSk(ids[1]!);
    await client.send(
      new PutCommand({
        TableName: tableName,
        Item: { pk: processPk(key), sk, lsi1sk: `A#M#${ids[1]}`, type: "MSG", id: ids[1], processId, role: "ROBOT", content: "x", tags: [], createdAt: new Date().toISOString() },
      }),
    );
    return { key, pk: processPk(key), sk };
  }

  it("is an internal error naming the item's key, from every read", async () => {
    const { key, pk, sk } = await corruptProcess("corrupt-1");
    const store = createDynamoStore({ client, tableName });
    for (const read of [() => store.activeView(key), () => store.listMessages(key, { limit: 10 }), () => store.getMessages(key, [sk.slice(2)])]) {
      const error = await read().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ kind: "internal", code: "store.item_invalid" });
      expect((error as AppError).message).toContain(`${pk} / ${sk}`);
      expect((error as AppError).message).toContain("role");
    }
  });

  it("is an internal error on the lease path too: the META a failed lease condition saw is parsed", async () => {
    const { key } = await seedMessages("corrupt-lease", 1);
    const store = createDynamoStore({ client, tableName });
    // A META whose version an older or buggy writer stored as a string.
    await client.send(
      new UpdateCommand({ TableName: tableName, Key: { pk: processPk(key), sk: "META" }, UpdateExpression: "SET version = :v", ExpressionAttributeValues: { ":v": "0" } }),
    );
    const now = new Date().toISOString();
    const error = await store.acquireLease(key, { owner: "w1", until: now, now, expectedVersion: 0 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ kind: "internal", code: "store.item_invalid" });
    expect((error as AppError).message).toContain("version");
  });

  it("answers 500 internal over HTTP without internal field names, and logs the key", async () => {
    const { pk, sk } = await corruptProcess("corrupt-2");
    const log = createMemoryLog();
    const deps = createDeps({ env: {}, store: createDynamoStore({ client, tableName }), log, metrics: createRecordingMetrics(), events: { publish: async () => {} } });
    const app = createHttpApp({ deps, resolveTenant: () => "acme", groups: allRouteGroups });
    for (const path of ["/v1/processes/corrupt-2/messages?view=active", "/v1/processes/corrupt-2/messages", "/v1/processes/corrupt-2/context"]) {
      const res = await app.request(path);
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: { code: "internal", message: "internal error" } });
      expect(text).not.toMatch(/role|tokens|lsi1sk/);
    }
    const logged = log.entries.filter((e) => e.level === "ERROR");
    expect(logged).toHaveLength(3);
    for (const entry of logged) expect(entry.fields).toMatchObject({ code: "store.item_invalid", details: { pk, sk } });

    // Request validation keeps its 400s.
    const bad = await app.request("/v1/processes/corrupt-2/messages?view=nope");
    expect(bad.status).toBe(400);
  });
});
