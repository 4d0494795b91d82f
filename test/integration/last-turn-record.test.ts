/**
 * The last turn's record on META (docs/turns.md, "The last turn's record") against DynamoDB Local:
 * in META's map, which every new META has and an older META gets from the first turn that records.
 */
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import type { LastTurn } from "../../core/domain/last-turn.js";
import type { Store } from "../../core/ports/store.js";
import { freshTable } from "../support/dynamo.js";
import { makeMessage } from "../support/fixtures.js";

let table: Awaited<ReturnType<typeof freshTable>>;
let store: Store;
const at = "2026-12-02T10:00:00.000Z";
const record = (summaryId: string | null, tokens = 4000): LastTurn => ({ at, window: { tokens, source: "request" }, summaryId, version: 0 });

beforeAll(async () => {
  table = await freshTable("lt");
  store = table.store;
});

const metaKey = (processId: string) => ({ pk: `T#acme#P#${processId}`, sk: "META" });
const rawMeta = async (processId: string) => (await table.client.send(new GetCommand({ TableName: table.tableName, Key: metaKey(processId) }))).Item!;
/** A META as written before the record existed: no `metadata` map. */
async function olderProcess(processId: string) {
  await store.upsertProcess("acme", { processId, projectId: "p" }, at);
  await table.client.send(new UpdateCommand({ TableName: table.tableName, Key: metaKey(processId), UpdateExpression: "REMOVE metadata" }));
  expect(await rawMeta(processId)).not.toHaveProperty("metadata");
}

describe("the last turn's record", () => {
  it("has its place on every new META, and the append writes it in the same transaction", async () => {
    await store.upsertProcess("acme", { processId: "n-1", projectId: "p" }, at);
    expect((await rawMeta("n-1")).metadata).toEqual({});
    const key = { tenantId: "acme", processId: "n-1" };
    const out = await store.appendMessage(key, makeMessage("n-1", { role: "ASSISTANT" }), undefined, undefined, record(null));
    expect(out.ok).toBe(true);
    expect((await store.getProcess(key))?.lastTurn).toEqual(record(null));
    expect((await store.activeView(key))?.state.lastTurn).toEqual(record(null));
  });

  it("gets its place on an older META from the first append that records, which still appends once", async () => {
    await olderProcess("o-1");
    const key = { tenantId: "acme", processId: "o-1" };
    const message = makeMessage("o-1");
    const out = await store.appendMessage(key, message, "idem-1", "h", record("mem_1"));
    expect(out).toMatchObject({ ok: true, created: true });
    expect((await store.getProcess(key))?.lastTurn).toEqual(record("mem_1"));
    expect((await store.listMessages(key, { limit: 10 })).items.map((m) => m.id)).toEqual([message.id]);
  });

  it("gets its place on an older META from a turn that appends nothing", async () => {
    await olderProcess("o-2");
    const key = { tenantId: "acme", processId: "o-2" };
    expect(await store.recordTurn(key, record(null, 8000))).toBe(true);
    expect((await store.getProcess(key))?.lastTurn).toEqual(record(null, 8000));
    expect(await store.recordTurn(key, record(null, 9000))).toBe(true);
    expect((await rawMeta("o-2")).metadata).toEqual({ lastTurn: record(null, 9000) });
  });

  it("is not written for a process that does not exist, and gives it no META", async () => {
    const key = { tenantId: "acme", processId: "missing" };
    expect(await store.recordTurn(key, record(null))).toBe(false);
    expect(await store.appendMessage(key, makeMessage("missing"), undefined, undefined, record(null))).toEqual({ ok: false, reason: "process_not_found" });
    expect(await store.getProcess(key)).toBeNull();
  });

  it("leaves a revert hold in the same map alone", async () => {
    await store.upsertProcess("acme", { processId: "h-1", projectId: "p" }, at);
    await table.client.send(new UpdateCommand({ TableName: table.tableName, Key: metaKey("h-1"), UpdateExpression: "SET metadata.revertHoldTokens = :h", ExpressionAttributeValues: { ":h": 500 } }));
    const key = { tenantId: "acme", processId: "h-1" };
    expect(await store.recordTurn(key, record(null))).toBe(true);
    expect(await store.getProcess(key)).toMatchObject({ revertHoldTokens: 500, lastTurn: record(null) });
  });
});
