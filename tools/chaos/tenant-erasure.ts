/**
 * The end of a run (tools/chaos/README.md, "Copies, expiries and erasure"): the second tenant
 * leaves. Its erasure (`npm run keys -- erase-tenant`'s service) meets what a busy tenant leaves
 * behind: an import that crashed before it went live, a deletion that stopped after its tombstone,
 * a fold whose usage write is held until the erasure ran, and its own calls held (a process's
 * tombstone, the tenant's records). Afterwards nothing of the tenant may be in the table but bare
 * tombstones, its erasure mark and its rate counters (which expire), no blob of it may be left,
 * and the first tenant's items must be exactly as they were.
 */
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { TENANT_ERASED_SK, usagePk } from "../../core/adapters/dynamodb/keys.js";
import type { Store } from "../../core/ports/store.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { eraseTenant } from "../../core/services/tenant-erasure.js";
import { createStallingStore } from "../stalling-store.js";
import { describe } from "./attempt.js";
import { GONE_FROM_TOMBSTONE } from "./deletion-checks.js";
import { exportAll, importText } from "./ops-lifecycle.js";
import { CHAOS_TENANTS } from "./plan.js";
import { countFault, violate } from "./report.js";
import { newContainer, sleep, type ChaosRun, type Engine } from "./run-state.js";

type Item = Record<string, unknown> & { pk: string; sk: string };

/** How long the erasure waits for the held fold to reach its usage write. */
const REACH_MS = 5_000;

export async function eraseLeavingTenant(run: ChaosRun, engines: readonly Engine[]) {
  const [stays, leaves] = CHAOS_TENANTS;
  const before = await itemsOf(run, stays);
  const live = engines.filter((e) => e.key.tenantId === leaves && !e.deletion);
  const clean = newContainer(run);
  const { deps } = clean;
  try {
    // An import that crashed at its last step: every item written, the process never live.
    if (live[0]) {
      const text = await exportAll(deps, live[0].key, 64_000);
      const store = { ...deps.store, activateImportedProcess: () => Promise.reject(new Error("the container died")) } as Store;
      await importText({ ...deps, store }, { tenantId: leaves, processId: `${live[0].key.processId}-hidden` }, text).catch(() => undefined);
    }
    // A deletion that stopped after its tombstone.
    if (live[1]) {
      const store = { ...deps.store, eraseItems: () => Promise.reject(new Error("the container died")) } as Store;
      await deleteProcess({ ...deps, store }, live[1].key).catch(() => undefined);
    }
  } catch (err) {
    violate(run.stats, [`${leaves}: preparing the erasure failed: ${describe(err)}`]);
    return;
  }
  // A fold in flight: its model usage is written only after the erasure ran.
  let reached!: () => void;
  const atUsage = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const hold = () => (reached(), countFault(run.stats, "stall:addUsage:before"), run.stats.stalls.held++, released);
  const fold = live[2]
    ? compactIfNeeded({ ...deps, store: createStallingStore(run.inner, { method: "addUsage", nth: 1, at: "before", write: 0 }, hold) }, live[2].key, {
        model: { contextWindow: 100_000 },
        force: "EMERGENCY",
      }).catch(() => undefined)
    : Promise.resolve();
  await Promise.race([atUsage, fold, sleep(REACH_MS)]);
  // The erasure's own calls held: the second process's tombstone, and the tenant's records.
  const held = (label: string) => async () => {
    countFault(run.stats, label);
    run.stats.stalls.held++;
    await sleep(run.leaseMs);
  };
  let store = createStallingStore(run.inner, { method: "markDeleted", nth: 2, at: "after", write: 0 }, held("stall:markDeleted:after"));
  store = createStallingStore(store, { method: "eraseTenantRecords", nth: 1, at: "before", write: 0 }, held("stall:eraseTenantRecords:before"));
  try {
    const out = await eraseTenant(store, leaves, deps.clock.now().toISOString(), run.blobs);
    release();
    await fold;
    run.stats.lifecycle.erasures++;
    run.stats.lifecycle.erasedItems += out.items;
    if (out.left.length > 0) violate(run.stats, out.left.map((l) => `${leaves}: the erasure's own check found ${l}`));
    violate(run.stats, await leftovers(run, leaves, engines));
  } catch (err) {
    release();
    violate(run.stats, [`${leaves}: the erasure failed: ${describe(err)}`]);
  }
  const after = await itemsOf(run, stays);
  for (const [k, v] of before) if (after.get(k) !== v) violate(run.stats, [`${stays}: item ${k} changed while another tenant was erased`]);
  for (const k of after.keys()) if (!before.has(k)) violate(run.stats, [`${stays}: item ${k} appeared while another tenant was erased`]);
}

/** What is left of an erased tenant besides bare tombstones, its erasure mark and its rate counters. */
async function leftovers(run: ChaosRun, tenantId: string, engines: readonly Engine[]): Promise<string[]> {
  const v: string[] = [];
  const processPrefix = `T#${tenantId}#P#`;
  for (const item of (await itemsOf(run, tenantId)).keys()) {
    const [pk, sk] = item.split(" ") as [string, string];
    if (pk.startsWith(`T#${tenantId}#RATE#`) || (pk === usagePk(tenantId) && sk === TENANT_ERASED_SK)) continue;
    if (pk.startsWith(processPrefix) && sk === "META") continue;
    v.push(`${tenantId}: erased, yet item ${item} is left`);
  }
  for (const item of await scan(run, `T#${tenantId}#`)) {
    if (!item.pk.startsWith(processPrefix) || item.sk !== "META") continue;
    if (item.deletion !== "DELETED") v.push(`${tenantId}: erased, yet the tombstone of ${item.pk} is ${String(item.deletion)}`);
    for (const field of GONE_FROM_TOMBSTONE) if (field in item) v.push(`${tenantId}: erased, yet the tombstone of ${item.pk} still has ${field}`);
  }
  for (const e of engines.filter((x) => x.key.tenantId === tenantId)) {
    const blobs = await run.blobs.list(e.key);
    if (blobs.length > 0) v.push(`${tenantId}: erased, yet ${blobs.length} blobs of ${e.key.processId} are left`);
  }
  return v;
}

/** Every item of the tenant, by `pk sk`, as JSON. */
async function itemsOf(run: ChaosRun, tenantId: string): Promise<Map<string, string>> {
  return new Map((await scan(run, `T#${tenantId}#`)).map((i) => [`${i.pk} ${i.sk}`, JSON.stringify(canonical(i))]));
}

/** `value` with every object's keys in order, so two reads of the same item compare equal. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value && typeof value === "object" && !(value instanceof Uint8Array) && !(value instanceof Set)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)]))
      : value instanceof Set
        ? [...value].sort()
        : value;

async function scan(run: ChaosRun, prefix: string): Promise<Item[]> {
  const { client, tableName } = run.table;
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: tableName, FilterExpression: "begins_with(pk, :p)", ExpressionAttributeValues: { ":p": prefix }, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
