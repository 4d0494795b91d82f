/**
 * An export is one snapshot (docs/api.md, "Export and import"), against DynamoDB Local: it finishes
 * a pending roll-forward before it starts, and a fold, an undo or a pin between its pages is a 409
 * rather than a file that would lose messages or fold them twice once imported. The retention's end
 * and the TTL's sweep between pages are not a change: a page leaves out what is past its retention.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { setMessageStrength } from "../../core/services/messages.js";
import { exportPage } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import { upsertProcess } from "../../core/services/processes.js";
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { messageSk, processPk } from "../../core/adapters/dynamodb/keys.js";
import { expiredByRetention } from "../../tools/chaos/checks.js";
import { findViolations, readAll } from "../../tools/invariants.js";
import { testContainer } from "../support/container.js";
import { freshTable } from "../support/dynamo.js";
import { refusal } from "../support/refusal.js";
import { appendSteps, exportAll, foldHard } from "../support/steps.js";

const TENANT = "snap";
const WINDOW = 10_000;
const PAGED = { pageBytes: 1, readMessages: 5 };
let table: Awaited<ReturnType<typeof freshTable>>;
/** Ten items per transaction: a revert of about twenty originals leaves a restore roll-forward. */
let small: Store;
let deps: ServiceDeps;

const key = (processId: string): ProcessKey => ({ tenantId: TENANT, processId });

const depsOver = (store: Store): ServiceDeps => testContainer({ store, retryDelaysMs: [] }).deps;

/** A container that dies right after its revert's transaction: the restore's roll-forward never runs. */
function crashingAfterTransaction(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "finishPendingArchive") return async () => { throw new Error("container crashed after its transaction"); };
      return Reflect.get(target, prop, receiver);
    },
  });
}

async function seed(k: ProcessKey, n: number, from = 0) {
  await upsertProcess(deps, TENANT, k.processId, { projectId: "p" });
  await appendSteps(deps, k, n, from);
}

const fold = (k: ProcessKey) => foldHard(deps, k, WINDOW);
/** The export's text, read in the smallest pages; `between` runs after each page but the last. */
const exportPaged = async (k: ProcessKey, between?: (page: number) => Promise<void>, d = deps) =>
  (await exportAll(d, k, { limits: PAGED, ...(between ? { between } : {}) })).text;

beforeAll(async () => {
  table = await freshTable("snap");
  small = createDynamoStore({ client: table.client, tableName: table.tableName, transactionLimit: 10 });
  deps = depsOver(small);
});

it("finishes a crashed revert's restore before it starts: the copy replays every message the source does", async () => {
  const src = key("crashed-revert");
  await seed(src, 30);
  const f = await fold(src);
  await expect(revertMemory(depsOver(crashingAfterTransaction(small)), src, f)).rejects.toThrow(/crashed/);
  expect((await small.getProcess(src))!.pendingArchive).toBe(f);
  const text = (await exportPage(deps, src)).text;
  const copy = key("crashed-revert-copy");
  await importProcess(deps, copy, text, { remapIds: false });
  expect(findViolations(await readAll(small, copy), { settled: true })).toEqual([]);
  const [a, b] = [await settledView(deps, src), await settledView(deps, copy)];
  expect(b.messages.map((m) => m.id)).toEqual(a.messages.map((m) => m.id));
  expect(b.messages).toHaveLength(30);
});

describe("a change between pages is a 409, and the next export from the first page is whole", () => {
  const changes: Array<[string, (k: ProcessKey) => Promise<unknown>]> = [
    ["a fold", (k) => fold(k)],
    ["an undo", async (k) => revertMemory(deps, k, (await small.getProcess(k))!.activeSummaryId!)],
    ["a pin", async (k) => setMessageStrength(deps, k, (await settledView(deps, k)).messages.at(-1)!.id, "pinned")],
  ];
  for (const [name, change] of changes) {
    it(name, async () => {
      const src = key(`moved-${name.replace(/[^a-z]+/g, "-")}`);
      await seed(src, 24);
      await fold(src);
      await seed(src, 16, 24);
      let changed = false;
      const moved = refusal(
        exportPaged(src, async (page) => {
          if (page !== 2) return;
          await change(src);
          changed = true;
        }),
      );
      expect(await moved).toEqual({ kind: "conflict", code: "export.changed" });
      expect(changed).toBe(true);
      const copy = key(`${src.processId}-copy`);
      await importProcess(deps, copy, await exportPaged(src), { remapIds: false });
      expect(findViolations(await readAll(small, copy), { settled: true })).toEqual([]);
    });
  }
});

it("an export across the retention's end and the TTL's sweep is whole: the copy lacks only originals past their retention", async () => {
  let skippedMs = 0;
  const clocked = testContainer({ store: table.store, retryDelaysMs: [], clock: { now: () => new Date(Date.now() + skippedMs) } }).deps;
  const src = key("swept-between-pages");
  await table.store.putSettings(TENANT, "p-swept", { retentionDays: 1 }, new Date().toISOString());
  await upsertProcess(clocked, TENANT, src.processId, { projectId: "p-swept" });
  await appendSteps(clocked, src, 24);
  const memory = (await table.store.getMemory(src, await foldHard(clocked, src, WINDOW)))!;

  const text = await exportPaged(
    src,
    async (page) => {
      if (page !== 2) return;
      // Past the retention, and what DynamoDB's TTL then does: the originals are deleted, META is not touched.
      skippedMs = 86_400_000 + 1000;
      for (const id of memory.sourceRefs) await table.client.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: processPk(src), sk: messageSk(id) } }));
    },
    clocked,
  );

  const copy = key("swept-between-pages-copy");
  await importProcess(clocked, copy, text, { remapIds: false });
  const snapshot = await readAll(table.store, copy);
  const held = new Set(snapshot.messages.map((m) => m.id));
  const lacking = memory.sourceRefs.filter((id) => !held.has(id));
  // The first pages read some originals before the clock moved; the rest are left out.
  expect(lacking.length).toBeGreaterThan(0);
  expect(lacking.length).toBeLessThan(memory.sourceRefs.length);
  const expired = expiredByRetention(snapshot, clocked.clock.now());
  expect([...expired.keys()].sort()).toEqual([...lacking].sort());
  expect(findViolations(snapshot, { settled: true, noLease: true, expired })).toEqual([]);
  // Every message the source still has is in the copy, and what it lacks is missing only by retention.
  for (const m of (await readAll(table.store, src)).messages) expect(held.has(m.id)).toBe(true);
  expect(findViolations(snapshot, { settled: true })).toContain(`snap/${copy.processId}: memory ${memory.id} folded ${lacking[0]}, which does not exist`);
});
