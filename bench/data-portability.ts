/**
 * Data portability against DynamoDB Local (docs/api.md, "Export and import", "Deleting a
 * process"): the real export (every page), the import of that export into a new id (both passes)
 * and the deletion of the copy (the request's inline part, then the worker's erasure), on
 * processes of 1,000 and 10,000 archived messages (plus 40 active ones and a summary per 100).
 * Throughput in items per second; reads in RCU as DynamoDB Local reports them
 * (ReturnConsumedCapacity); writes in WCU from the items' sizes with AWS's rules (1 WCU per KB,
 * twice in a transaction, the sparse index's entry too), because DynamoDB Local under-reports
 * transactions.
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * Command: `npm run bench -- --only data-portability` (`bench/data-portability.ts`; a long section,
 * so not in the default run; `BENCH_PORTABILITY_SIZES=1000,10000` sets the sizes, `--quick` runs
 * 1,000 only). On a process seeded like the hot path's (1,000 or 10,000 archived messages in folds
 * of 100 with a summary each, then 40 active messages; 250 and 900 characters per user and
 * assistant message), it runs the real services in order (docs/api.md, "Export and import" and
 * "Deleting a process"): the **export** (`exportPage`, every page), the **import** of those lines
 * into a new id (`importExport`, both passes, ids kept), and the **delete** of the copy
 * (`deleteProcess`: the tombstone and 500 items in the request, then `eraseProcess`, the worker's
 * part, for the rest). Items per second count messages and memories (for the delete, every item
 * erased but META, which stays as the tombstone). Read units are the ones DynamoDB Local reports
 * (`ReturnConsumedCapacity` on every request: strongly consistent Queries at 1 RCU per 4 KB). Write
 * units are computed from the items' sizes with AWS's rules, because DynamoDB Local under-reports
 * transactions: 1 WCU per started KB, twice inside a transaction (the check on META too), and once
 * more for an item's entry in the sparse replay index (active messages, the active summary, META).
 */
import { deleteProcess, eraseProcess } from "../core/services/process-deletion.js";
import { exportPage, type ExportCursor } from "../core/services/process-export.js";
import { importExport } from "../core/services/process-import.js";
import { processPk } from "../core/adapters/dynamodb/keys.js";
import { tableIndexes } from "../core/adapters/dynamodb/table.js";
import type { ProcessKey } from "../core/ports/store.js";
import { type BenchContext, envInts, requireEndpoint } from "./support/context.js";
import { freshTable, itemSize, partitionItems, priceWrites, wcuFor, type BenchTable, type CommandRecord } from "./support/dynamo.js";
import { seedProcess } from "./support/hot-path-fixture.js";
import type { SectionResult, Table } from "./support/report.js";
import { benchDeps, observedStore } from "./support/service.js";
import { fmt, sum } from "./support/stats.js";

interface Step {
  items: number;
  seconds: number;
  /** RCU DynamoDB Local reported for the step's reads. */
  rcu: number;
  /** WCU by AWS's size rules for the step's writes. */
  wcu: number;
  roundTrips: number;
}

interface SizeResult {
  archived: number;
  messages: number;
  memories: number;
  exportBytes: number;
  exported: Step;
  imported: Step;
  deleted: Step;
}

const reads = (records: readonly CommandRecord[]) => sum(records.filter((r) => !r.write).map((r) => r.capacity));

async function measured(t: BenchTable, items: number, run: () => Promise<void>, wcu: (records: readonly CommandRecord[]) => number): Promise<Step> {
  t.recorder.reset();
  const start = performance.now();
  await run();
  const seconds = (performance.now() - start) / 1000;
  const records = t.recorder.records;
  return { items, seconds, rcu: reads(records), wcu: wcu(records), roundTrips: records.length };
}

/**
 * A deletion's writes: each DeleteItem costs the deleted item's size (and its index entry when
 * it had one), each update of META its size (and META's index entry).
 */
function priceDeletes(records: readonly CommandRecord[], before: ReadonlyMap<string, Record<string, unknown>>): number {
  let wcu = 0;
  for (const r of records) {
    if (!r.write || !r.ok) continue;
    for (const target of r.targets) {
      const item = before.get(`${target.pk}\n${target.sk}`);
      const size = wcuFor(item ? itemSize(item) : 0);
      const indexed = item?.[tableIndexes.lsi1.sortKey] !== undefined;
      wcu += size * (indexed ? 2 : 1);
    }
  }
  return wcu;
}

async function runSize(t: BenchTable, archived: number, log: (m: string) => void): Promise<SizeResult> {
  const fixture = await seedProcess(t, archived);
  const { store } = observedStore(t);
  const deps = benchDeps({ store });
  const copy: ProcessKey = { tenantId: fixture.key.tenantId, processId: `${fixture.key.processId}-copy` };

  const pages: string[] = [];
  const stored = await partitionItems(t, fixture.pk);
  const messages = stored.filter((i) => String(i.sk).startsWith("M#")).length;
  const memories = stored.filter((i) => String(i.sk).startsWith("S#")).length;
  const exported = await measured(
    t,
    messages + memories,
    async () => {
      let cursor: ExportCursor | undefined;
      do {
        const page = await exportPage(deps, fixture.key, cursor);
        pages.push(page.text);
        cursor = page.next;
      } while (cursor);
    },
    () => 0,
  );
  log(`data-portability: exported ${fmt(messages)} messages in ${exported.seconds.toFixed(1)} s`);

  // The export's lines, as a file or an HTTP body would give them.
  const lines = pages.join("").split("\n").slice(0, -1);
  const exportBytes = sum(pages.map((p) => Buffer.byteLength(p)));
  const imported = await measured(
    t,
    messages + memories,
    async () => {
      await importExport(deps, copy, () => lines, { remapIds: false });
    },
    (records) => priceWrites(records, () => fixture.metaBytes).total,
  );
  log(`data-portability: imported them in ${imported.seconds.toFixed(1)} s`);

  const before = new Map((await partitionItems(t, processPk(copy))).map((i) => [`${i.pk}\n${i.sk}`, i]));
  const deleted = await measured(
    t,
    before.size - 1,
    async () => {
      const first = await deleteProcess(deps, copy);
      // What the worker does on ProcessEraseRequested.
      if (first.status === "deleting") await eraseProcess(deps, copy);
    },
    (records) => priceDeletes(records, before),
  );
  log(`data-portability: deleted the copy in ${deleted.seconds.toFixed(1)} s`);
  return { archived, messages, memories, exportBytes, exported, imported, deleted };
}

export async function runDataPortability(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const sizes = envInts("BENCH_PORTABILITY_SIZES", ctx.quick ? [1_000] : [1_000, 10_000]);
  const t = await freshTable(endpoint, "portability");
  const results: SizeResult[] = [];
  for (const size of sizes) results.push(await runSize(t, size, ctx.log));

  const perSecond = (s: Step) => fmt(s.items / s.seconds);
  const per = (value: number, n: number) => fmt(value / n, 2);
  const table: Table = {
    title: "Export, import and delete of one process (DynamoDB Local)",
    columns: ["archived", "messages", "memories", "export MB", "step", "seconds", "items/s", "RCU/message", "WCU/message", "round trips"],
    rows: results.flatMap((r) =>
      (
        [
          ["export", r.exported],
          ["import", r.imported],
          ["delete", r.deleted],
        ] as const
      ).map(([name, s]) => [
        fmt(r.archived),
        fmt(r.messages),
        fmt(r.memories),
        fmt(r.exportBytes / 1024 / 1024, 2),
        name,
        s.seconds.toFixed(1),
        perSecond(s),
        per(s.rcu, r.messages),
        per(s.wcu, r.messages),
        fmt(s.roundTrips),
      ]),
    ),
  };
  return {
    id: "data-portability",
    title: "Data portability: export, import, delete",
    command: "npm run bench -- --only data-portability",
    tables: [table],
    targets: [],
    notes: [
      "items = messages + memories; delete counts every item erased (idempotency records included), without META, which stays as the tombstone",
      "RCU as DynamoDB Local reports them (ReturnConsumedCapacity): strongly consistent Queries, 1 RCU per 4 KB read, so an export reads each item once",
      "WCU from item sizes with AWS's rules (1 WCU per KB; an import's transactions count twice, their check on META included; a message's or summary's entry in the sparse index counts again), since DynamoDB Local under-reports transactions",
      "the import is two passes over the lines (validate, then write 99 items per transaction, one transaction at a time: each checks META, so they would conflict in parallel)",
    ],
    data: results,
  };
}
