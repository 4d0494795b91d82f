/**
 * `npm run keys -- erase-tenant` against DynamoDB Local: the tenant's keys revoked, every process
 * erased down to its tombstone, its settings, model usage and inbox gone; another tenant's
 * items untouched.
 */
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { createApiKeyStore, type ApiKeyStore } from "../../core/adapters/dynamodb/api-keys.js";
import type { Store } from "../../core/ports/store.js";
import { runKeysCli } from "../../scripts/api-keys.js";
import { freshTable } from "../support/dynamo.js";
import { makeMessage } from "../support/fixtures.js";

let table: Awaited<ReturnType<typeof freshTable>>;
let store: Store;
let keys: ApiKeyStore;
const now = () => new Date().toISOString();

beforeAll(async () => {
  table = await freshTable("erase");
  store = table.store;
  keys = createApiKeyStore({ client: table.client, tableName: table.tableName });
});

async function seedTenant(tenantId: string, processes: number) {
  const { key } = await keys.create({ tenantId, label: "engine" });
  for (let p = 0; p < processes; p++) {
    const processKey = { tenantId, processId: `proc-${p}` };
    await store.upsertProcess(tenantId, { processId: processKey.processId, projectId: "proj", name: "secret plan" }, now());
    for (let m = 0; m < 4; m++) await store.appendMessage(processKey, makeMessage(processKey.processId, { content: `note ${m}` }), `idem-${m}`);
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
  return { lines, io: { env: {}, out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), store: keys, data: store } };
}

describe("keys erase-tenant", () => {
  it("revokes the tenant's keys and erases its processes, settings, usage and inbox; another tenant keeps everything", async () => {
    const goneKey = await seedTenant("gone", 3);
    const stayKey = await seedTenant("stay", 2);
    const stayBefore = await itemsOf("stay");
    expect((await itemsOf("gone")).length).toBeGreaterThan(20);

    const refused = io();
    expect(await runKeysCli(["erase-tenant", "--tenant", "gone"], refused.io)).toBe(2);
    expect(await keys.resolve(goneKey)).not.toBeNull();

    const run = io();
    expect(await runKeysCli(["erase-tenant", "--tenant", "gone", "--confirm", "gone", "--json"], run.io)).toBe(0);
    expect(JSON.parse(run.lines[0]!)).toMatchObject({ tenantId: "gone", revokedKeys: 1, processes: 3 });

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

    expect(await keys.resolve(stayKey)).not.toBeNull();
    expect(await itemsOf("stay")).toEqual(stayBefore);
  });
});
