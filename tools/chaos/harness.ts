/**
 * The chaos harness: many simulated engines run a seeded plan (chaos/plan.ts) against the real
 * store on DynamoDB Local and the real services, concurrently, while faults are injected: store
 * writes that fail before or after they apply (a crash kills the "container": its store calls stop
 * and the next operation runs in a fresh one, with new caches and a new id factory), summarizer
 * errors, throws and timeouts, duplicated and concurrent event deliveries, duplicated appends.
 * After every operation it checks the invariants of the process it touched; at the end it lets
 * leases expire, rolls every process forward and checks everything again, plus that nothing the
 * engines saw acknowledged was lost or stored twice, that the replay (composeContext and GET
 * context over the HTTP app) is the newest OK summary plus the active messages, that events and
 * inbox items are consistent, and that no process is left blocked.
 *
 * This file is the entry point (`runChaos`, `formatReport`). The run itself is run-plan.ts; the
 * operations are the ops-*.ts files, event deliveries deliveries.ts, the checks process-checks.ts
 * and global-checks.ts, the shared state run-state.ts and the report report.ts.
 *
 * Used by `npm run chaos` (scripts/chaos.ts) and test/integration/chaos.test.ts.
 */
import { createMemoryBlobStore } from "../../core/adapters/blobs/memory-blob-store.js";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createTable } from "../../core/adapters/dynamodb/create-table.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import { gateWrites } from "../stalling-store.js";
import { planChaos } from "./plan.js";
import { emptyStats, toReport, type ChaosReport } from "./report.js";
import { runPlan } from "./run-plan.js";
import type { ChaosOptions, ChaosRun } from "./run-state.js";

export { formatReport, type ChaosReport } from "./report.js";
export type { ChaosOptions } from "./run-state.js";

/** Runs the plan of `options.seed` and returns what happened, including every violation found. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const plan = planChaos({
    seed: options.seed,
    turns: options.turns,
    stalls: options.stalls ?? true,
    ...(options.engines ? { engines: options.engines } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  const tableName = options.tableName ?? `chaos-${plan.seed}-${Date.now().toString(36)}`;
  // Writes can be held inside a store call (a roll-forward between its reads and its writes).
  const client = gateWrites(createDocumentClient({ endpoint: options.endpoint }));
  await createTable(client, tableName);
  const real = createDynamoStore({ client, tableName });
  const run: ChaosRun = {
    plan,
    inner: options.wrapStore ? options.wrapStore(real, { client, tableName }) : real,
    table: { client, tableName },
    blobs: createMemoryBlobStore(),
    options,
    leaseMs: plan.leaseMs,
    stats: emptyStats(),
    events: [],
    offers: new Map(),
    tunables: new Map(),
    rangeJobs: new Map(),
    containers: 0,
    workerDeliveries: 0,
    workerCrashDue: false,
    workerCrashes: 0,
    commitDeliveries: 0,
    commitCrashDue: false,
    commitCrashes: 0,
    stallsBegun: new WeakSet(),
    clockAheadMs: 0,
    heldAcrossJump: new Map(),
    copies: [],
  };
  await runPlan(run);
  return toReport(plan, tableName, run.stats, started);
}
