/**
 * A revert that the retention cannot outrun (docs/compaction.md, "Undoing a compaction"), against
 * DynamoDB Local with a clock the test moves: a revert whose container dies after its transaction
 * is finished days later, past the originals' expiry, and still restores every original, none of
 * them with an expiry; an original found missing by a roll-forward is reported, not skipped.
 */
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, expect, it } from "vitest";
import { messageSk, processPk, TTL_ATTRIBUTE } from "../../core/adapters/dynamodb/keys.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { upsertProcess } from "../../core/services/processes.js";
import { findViolations, readAll } from "../../tools/invariants.js";
import { testContainer } from "../support/container.js";
import { freshTable } from "../support/dynamo.js";
import { appendSteps, foldHard } from "../support/steps.js";

const TENANT = "ret";
const DAY_MS = 86_400_000;
let table: Awaited<ReturnType<typeof freshTable>>;
/** Ten items per transaction: a revert of 24 originals restores most of them in its roll-forward. */
let small: Store;
/** How far the test moved the clock past the wall clock. */
let skippedMs = 0;

const key = (processId: string): ProcessKey => ({ tenantId: TENANT, processId });

const depsOver = (store: Store) => testContainer({ store, retryDelaysMs: [], clock: { now: () => new Date(Date.now() + skippedMs) } });

/** A container that dies right after its revert's transaction: the restore's roll-forward never runs. */
function crashingAfterTransaction(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "finishPendingArchive") return async () => { throw new Error("container crashed after its transaction"); };
      return Reflect.get(target, prop, receiver);
    },
  });
}

/** Deletes what DynamoDB's TTL would by `nowMs`: every item of the partition whose TTL attribute is due. */
async function sweepExpired(k: ProcessKey, nowMs: number) {
  const due = (await table.partition(k)).filter((i) => typeof i[TTL_ATTRIBUTE] === "number" && (i[TTL_ATTRIBUTE] as number) * 1000 <= nowMs);
  for (const i of due) await table.client.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: i.pk, sk: i.sk } }));
  return due.length;
}

/** A process of 30 messages under a one-day retention, folded once; its fold's id. */
async function foldedUnderRetention(deps: ServiceDeps, k: ProcessKey) {
  await small.putSettings(TENANT, `p-${k.processId}`, { retentionDays: 1 }, new Date().toISOString());
  await upsertProcess(deps, TENANT, k.processId, { projectId: `p-${k.processId}` });
  await appendSteps(deps, k, 30);
  return foldHard(deps, k);
}

beforeAll(async () => {
  table = await freshTable("ret");
  small = createDynamoStore({ client: table.client, tableName: table.tableName, transactionLimit: 10 });
});

it("a crashed revert finished after the originals' expiry, once the TTL has run, restores every original, none with an expiry", async () => {
  skippedMs = 0;
  const { deps } = depsOver(small);
  const k = key("late-restore");
  const f = await foldedUnderRetention(deps, k);
  const folded = (await small.getMemory(k, f))!.sourceRefs;
  skippedMs = DAY_MS - 3 * deps.leaseMs; // the expiry three leases away: the revert is allowed
  await expect(revertMemory({ ...depsOver(crashingAfterTransaction(small)).deps, clock: deps.clock }, k, f)).rejects.toThrow(/crashed/);
  skippedMs = DAY_MS + 60_000;
  await sweepExpired(k, Date.now() + skippedMs);
  await settledView(deps, k);
  const snap = await readAll(small, k);
  expect(snap.memories.find((m) => m.id === f)!.status).toBe("REVERTED");
  expect(findViolations(snap, { settled: true })).toEqual([]);
  const restored = snap.messages.filter((m) => folded.includes(m.id));
  expect(restored).toHaveLength(folded.length);
  expect(restored.filter((m) => m.archivedInMemoryId !== null || m.expiresAt !== undefined)).toEqual([]);
});

it("a revert that does not commit gives the originals it made safe their expiry back", async () => {
  skippedMs = 0;
  const { deps } = depsOver(small);
  const k = key("no-commit");
  const f = await foldedUnderRetention(deps, k);
  const before = (await readAll(small, k)).messages.filter((m) => m.archivedInMemoryId === f).map((m) => [m.id, m.expiresAt]);
  // The transaction is refused (a prior summary that is not there), after the originals were made safe.
  let tried = 0;
  const refusing: Store = { ...small, revertCompaction: (kk, r) => (tried++, small.revertCompaction(kk, { ...r, priorSummaryId: "mem_not_there" })) };
  await expect(revertMemory({ ...depsOver(refusing).deps, sleep: async () => {} }, k, f)).rejects.toMatchObject({ code: "process.busy" });
  const after = (await readAll(small, k)).messages.filter((m) => m.archivedInMemoryId === f).map((m) => [m.id, m.expiresAt]);
  expect(tried).toBeGreaterThan(0);
  expect(after).toEqual(before);
  expect(before.every(([, at]) => at !== undefined)).toBe(true);
});

it("a roll-forward that finds an original missing reports it (log and metric) and restores the rest", async () => {
  skippedMs = 0;
  const { deps, metrics, log } = depsOver(small);
  const k = key("missing-original");
  const f = await foldedUnderRetention(deps, k);
  await expect(revertMemory({ ...depsOver(crashingAfterTransaction(small)).deps }, k, f)).rejects.toThrow(/crashed/);
  const still = (await readAll(small, k)).messages.filter((m) => m.archivedInMemoryId === f);
  expect(still.length).toBeGreaterThan(1);
  await table.client.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: processPk(k), sk: messageSk(still[0]!.id) } }));
  await settledView(deps, k);
  expect(metrics.missingOriginals).toEqual([1]);
  expect(log.entries.find((e) => e.message === "roll-forward found originals missing")?.fields).toMatchObject({ memoryId: f, missing: [still[0]!.id], count: 1 });
  expect((await readAll(small, k)).messages.filter((m) => m.archivedInMemoryId === f)).toEqual([]);
});
