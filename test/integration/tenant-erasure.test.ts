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
import type { Store } from "../../core/ports/store.js";
import { runKeysCli } from "../../scripts/api-keys.js";
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
    expect(JSON.parse(run.lines[0]!)).toMatchObject({ tenantId: "gone", revokedKeys: 1, processes: 3, blobs: 8 });

    expect(await keys.resolve(goneKey)).toBeNull();
    const left = await itemsOf("gone");
    // Only the bare tombstones remain, so the ids are never used again.
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
