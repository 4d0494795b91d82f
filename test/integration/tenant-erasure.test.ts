/**
 * `npm run keys -- erase-tenant` against DynamoDB Local: the tenant's keys revoked, every process
 * erased down to its tombstone, its settings, model usage, inbox and blobs (S3, against s3rver)
 * gone; another tenant's items and blobs untouched.
 */
import { createHash } from "node:crypto";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { createApiKeyStore, type ApiKeyStore } from "../../core/adapters/dynamodb/api-keys.js";
import { createS3BlobStore } from "../../core/adapters/blobs/s3-blob-store.js";
import type { BlobStore } from "../../core/ports/blob-store.js";
import type { ImportingStore, Store } from "../../core/ports/store.js";
import { runKeysCli } from "../../scripts/api-keys.js";
import { createServiceStore } from "../../core/adapters/dynamodb/store.js";
import { eraseTenant } from "../../core/services/tenant-erasure.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { processPk } from "../../core/adapters/dynamodb/keys.js";
import { PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { freshTable } from "../support/dynamo.js";
import { freshBucket } from "../support/s3.js";
import { makeMessage } from "../support/fixtures.js";

let table: Awaited<ReturnType<typeof freshTable>>;
let store: Store;
let keys: ApiKeyStore;
let blobs: BlobStore;
const now = () => new Date().toISOString();

beforeAll(async () => {
  table = await freshTable("erase");
  store = table.store;
  keys = createApiKeyStore({ client: table.client, tableName: table.tableName });
  blobs = createS3BlobStore(await freshBucket("erase"));
});

/** Puts two blobs under the process, as an append of large native parts would. */
async function putBlobs(tenantId: string, processId: string) {
  for (const text of [`${processId} part one`, `${processId} part two`]) {
    const bytes = new TextEncoder().encode(text);
    await blobs.put({ tenantId, processId }, createHash("sha256").update(bytes).digest("hex"), bytes);
  }
}

async function seedTenant(tenantId: string, processes: number) {
  const { key } = await keys.create({ tenantId, label: "engine" });
  for (let p = 0; p < processes; p++) {
    const processKey = { tenantId, processId: `proc-${p}` };
    await store.upsertProcess(tenantId, { processId: processKey.processId, projectId: "proj", name: "secret plan" }, now());
    for (let m = 0; m < 4; m++) await store.appendMessage(processKey, makeMessage(processKey.processId, { content: `note ${m}` }), `idem-${m}`);
    await putBlobs(tenantId, processKey.processId);
    await store.putInboxItem(tenantId, {
      id: `offer-${p}`,
      processId: processKey.processId,
      type: "APPROVAL",
      tags: [],
      status: "OPEN",
      payload: { from: now(), to: now(), topicLabel: "plan" },
      createdAt: now(),
    });
  }
  await store.putSettings(tenantId, undefined, { softThreshold: 0.5 }, now());
  await store.putSettings(tenantId, "proj", { hardThreshold: 0.8 }, now());
  await store.addUsage(tenantId, "2026-12-01", { tokens: 100, calls: 1 });
  return key;
}

/** Every item whose partition belongs to the tenant (a test may scan; the service never does). */
async function itemsOf(tenantId: string) {
  const out = await table.client.send(
    new ScanCommand({ TableName: table.tableName, FilterExpression: "begins_with(pk, :t)", ExpressionAttributeValues: { ":t": `T#${tenantId}#` }, ConsistentRead: true }),
  );
  return out.Items ?? [];
}

function io() {
  const lines: string[] = [];
  return { lines, io: { env: {}, out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), store: keys, data: store, blobs } };
}

describe("keys erase-tenant", () => {
  it("revokes the tenant's keys and erases its processes, settings, usage, inbox and blobs; another tenant keeps everything", async () => {
    const goneKey = await seedTenant("gone", 3);
    const stayKey = await seedTenant("stay", 2);
    const stayBefore = await itemsOf("stay");
    expect((await itemsOf("gone")).length).toBeGreaterThan(20);
    // A blob no process item leads to (a put that raced an earlier deletion): the tenant's sweep takes it.
    await putBlobs("gone", "proc-orphan");

    const refused = io();
    expect(await runKeysCli(["erase-tenant", "--tenant", "gone"], refused.io)).toBe(2);
    expect(await keys.resolve(goneKey)).not.toBeNull();

    const run = io();
    expect(await runKeysCli(["erase-tenant", "--tenant", "gone", "--confirm", "gone", "--json"], run.io)).toBe(0);
    expect(JSON.parse(run.lines[0]!)).toMatchObject({ tenantId: "gone", revokedKeys: 1, processes: 3, blobs: 8, left: [] });

    expect(await keys.resolve(goneKey)).toBeNull();
    const all = await itemsOf("gone");
    // Only the bare tombstones remain, so the ids are never used again, and the tenant's erasure mark.
    expect(all.filter((i) => i.sk === "ERASED")).toHaveLength(1);
    const left = all.filter((i) => i.sk !== "ERASED");
    expect(left.map((i) => i.sk)).toEqual(["META", "META", "META"]);
    for (const meta of left) {
      expect(meta).toMatchObject({ deletion: "DELETED" });
      expect(meta).not.toHaveProperty("name");
    }
    expect(await store.getSettings("gone")).toBeNull();
    expect((await store.getUsage("gone", "2026-12-01")).tokens).toBe(0);
    expect(await store.listInbox("gone", {})).toEqual([]);

    for (const processId of ["proc-0", "proc-1", "proc-2", "proc-orphan"]) expect(await blobs.list({ tenantId: "gone", processId })).toEqual([]);

    expect(await keys.resolve(stayKey)).not.toBeNull();
    expect(await itemsOf("stay")).toEqual(stayBefore);
    for (const processId of ["proc-0", "proc-1"]) expect(await blobs.list({ tenantId: "stay", processId })).toHaveLength(2);
  });
});

describe("an erasure that says done is done", () => {
  it("the plain routes' store carries no erasure code: a call is an internal error naming the port", () => {
    const plain = createServiceStore({ client: table.client, tableName: table.tableName });
    expect(() => plain.markDeleted({ tenantId: "t", processId: "p" }, now())).toThrow(/no erasure port \(markDeleted\)/);
  });

  const stray = (tenantId: string, processId: string, sk: string) =>
    table.client.send(new PutCommand({ TableName: table.tableName, Item: { pk: processPk({ tenantId, processId }), sk, type: "MSG", content: "personal data" } }));

  it("finds and finishes processes a DELETE left half erased, and imports that stopped before going live", async () => {
    await seedTenant("stuck", 3);
    // A DELETE that stopped after its tombstone (a 500 or a timeout the caller never repeated).
    expect(await store.markDeleted({ tenantId: "stuck", processId: "proc-1" }, now())).toEqual({ ok: true, status: "deleting" });
    // An import that stopped after its hidden META and some items.
    const importing = store as ImportingStore;
    const hidden = { processId: "half-imported", projectId: "proj", createdAt: now(), allowsCrossProjectSpawn: false };
    expect(await importing.createImportedProcess("stuck", hidden, "tok-1")).toEqual({ ok: true });
    await importing.putImportedItems({ tenantId: "stuck", processId: "half-imported" }, "tok-1", { messages: [makeMessage("half-imported", { content: "imported secret" })], memories: [] });
    expect((await store.listProcesses("stuck", { limit: 10 })).items.map((p) => p.processId).sort()).toEqual(["proc-0", "proc-2"]);

    const erased = await eraseTenant(store, "stuck", now(), blobs);
    expect(erased).toMatchObject({ processes: 4, left: [] });
    const left = (await itemsOf("stuck")).filter((i) => i.sk !== "ERASED");
    expect(left.map((i) => [i.sk, i.deletion])).toEqual(Array(4).fill(["META", "DELETED"]));
  });

  it("erases an offer the process's index does not show yet, through the pointer in the process's partition", async () => {
    const tenantId = "lagging";
    const key = { tenantId, processId: "p-offer" };
    await store.upsertProcess(tenantId, { processId: key.processId, projectId: "proj" }, now());
    await store.putInboxItem(tenantId, { id: "offer-late", processId: key.processId, type: "APPROVAL", tags: [], status: "OPEN", payload: { from: now(), to: now(), topicLabel: "late plan" }, createdAt: now() });
    // As the index would be just after the write: the offer is not on it yet.
    await table.client.send(new UpdateCommand({ TableName: table.tableName, Key: { pk: `T#${tenantId}#I#offer-late`, sk: "INBOX" }, UpdateExpression: "REMOVE gsi1pk, gsi1sk, gsi2pk, gsi2sk" }));
    expect(await store.listInbox(tenantId, { processId: key.processId })).toEqual([]);
    const deps = { store, clock: { now: () => new Date() }, log: { info() {}, warn() {}, error() {} }, events: { publish: async () => {} } } as unknown as Parameters<typeof deleteProcess>[0];
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    expect(await store.getInboxItem(tenantId, "offer-late")).toBeNull();
    expect((await itemsOf(tenantId)).map((i) => i.sk)).toEqual(["META"]);
  });

  it("model usage written after the erasure (a fold in flight) is refused: the tenant's usage is not re-created", async () => {
    await seedTenant("late-usage", 1);
    expect((await eraseTenant(store, "late-usage", now())).left).toEqual([]);
    await store.addUsage("late-usage", "2026-12-02", { tokens: 500, calls: 1 });
    expect(await store.reserveTokens("late-usage", "2026-12-02", 10, 1_000)).toEqual({ ok: false, reason: "over_budget" });
    expect((await store.getUsage("late-usage", "2026-12-02")).tokens).toBe(0);
    expect((await itemsOf("late-usage")).map((i) => i.sk).sort()).toEqual(["ERASED", "META"]);
    // Another tenant's usage is recorded as before.
    await store.addUsage("stay", "2026-12-02", { tokens: 5, calls: 1 });
    expect((await store.getUsage("stay", "2026-12-02")).tokens).toBe(5);
  });

  it("ends with a check: anything but tombstones left is named, and the command exits 1", async () => {
    await seedTenant("leaky", 2);
    // A store whose erasure misses the tenant's settings and one stray item (as a write racing it would leave).
    const leaky: Store = {
      ...store,
      eraseTenantRecords: async () => 0,
      async finishDeletion(key) {
        await store.finishDeletion(key);
        if (key.processId === "proc-1") await stray("leaky", "proc-1", "M#late");
      },
    };
    const run = io();
    expect(await runKeysCli(["erase-tenant", "--tenant", "leaky", "--confirm", "leaky"], { ...run.io, data: leaky })).toBe(1);
    const report = run.lines.join("\n");
    expect(report).toContain("T#leaky#P#proc-1 / M#late");
    expect(report).toContain("T#leaky#SETTINGS / TENANT");
    expect(report).toMatch(/items of tenant 'leaky' are still stored; run the command again/);
  });
});
