/**
 * One chaos run from start to end: set up the tenants and the engines' processes, run every
 * engine's operations concurrently (checking the touched process after each), then let leases
 * expire, deliver everything still pending, settle every process and check it all, including
 * that a forced compaction is never blocked by what crashed.
 */
import { EVENTS } from "../../core/domain/events.js";
import { compactIfNeeded } from "../../core/services/compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { readAll } from "../invariants.js";
import { attempt, describe, NO_FAULTS } from "./attempt.js";
import { ack, emptyLedger } from "./checks.js";
import { deliverFolds, deliverPending } from "./deliveries.js";
import { checkGlobal } from "./global-checks.js";
import { CHAOS_TENANTS } from "./plan.js";
import { checkProcesses, snapshotViolations } from "./process-checks.js";
import { violate } from "./report.js";
import { runOp } from "./run-op.js";
import { appendBody, newContainer, QUIET, sameProcess, sleep, where, type ChaosRun, type Engine } from "./run-state.js";
import { handleCompactionRequested } from "../../core/adapters/events/handlers.js";

/** Runs `run.plan` against `run.inner` and fills `run.stats`. */
export async function runPlan(run: ChaosRun): Promise<void> {
  const engines = await setUp(run);
  run.options.progress?.(`chaos: plan ${run.plan.digest}, ${engines.length} engines, ${run.plan.turns} planned operations`);
  await runEngines(run, engines);
  await settleAndCheck(run, engines);
}

/** Tenant settings, one process per engine (parents first) with its starting messages. */
async function setUp(run: ChaosRun): Promise<Engine[]> {
  const { plan, stats } = run;
  const setup = newContainer(run);
  // The second tenant compacts with other tunables (saved once, like an admin would).
  for (const [tenantId, settings] of Object.entries(plan.tenantSettings)) {
    await setup.deps.tunables.save(tenantId, undefined, settings, new Date().toISOString());
  }
  const engines: Engine[] = plan.engines.map((p) => ({
    plan: p,
    key: { tenantId: p.tenantId, processId: p.processId },
    ledger: emptyLedger(),
    memories: new Set<string>(),
    container: newContainer(run),
    siblings: [],
    opsRun: 0,
    pinned: new Set<string>(),
    reweighed: new Set<string>(),
  }));
  // Parents first: the workers' context shows them.
  for (const e of [...engines].sort((a, b) => Number(a.plan.parentProcessId !== null) - Number(b.plan.parentProcessId !== null))) {
    await upsertProcess(setup.deps, e.key.tenantId, e.key.processId, {
      projectId: e.plan.projectId,
      name: `engine ${e.plan.index}`,
      recipe: "chaos",
      engine: "simulated",
      title: `Chaos engine ${e.plan.index}`,
      allowsCrossProjectSpawn: e.plan.allowsCrossProjectSpawn,
      ...(e.plan.parentProcessId ? { parentProcessId: e.plan.parentProcessId } : {}),
    });
    for (const m of e.plan.seed) {
      stats.operations++;
      ack(e.ledger, m.nonce, (await appendMessage(setup.deps, e.key, appendBody(m))).message.id);
    }
  }
  for (const t of CHAOS_TENANTS) run.tunables.set(t, await newContainer(run).deps.tunables.forProcess(t));
  return engines;
}

/** All engines at once, each one op at a time, as engines of one agent platform would. */
async function runEngines(run: ChaosRun, engines: readonly Engine[]) {
  const { options } = run;
  await Promise.all(
    engines.map(async (e) => {
      for (const op of e.plan.ops) {
        await runOp(run, e, op);
        // The worker gets the requests after every other op: the rest arrive late, after another op
        // (a turn, a forced compaction, a range offer) may have raced or outdated them.
        if (options.execution === "background" && e.opsRun % 2 === 1) await deliverFolds(run, e, op);
        if (++e.opsRun % (options.checkEvery ?? 1) === 0) violate(run.stats, snapshotViolations(e, await readAll(run.inner, e.key), false));
        if (e.opsRun % 50 === 0) options.progress?.(`  ${where(e)}: ${e.opsRun}/${e.plan.ops.length} operations`);
      }
    }),
  );
}

/** The end: leases expire, everything is delivered and settled, then checked. */
async function settleAndCheck(run: ChaosRun, engines: readonly Engine[]) {
  const { stats } = run;
  await sleep(run.leaseMs + 50);
  for (const e of engines) await deliverPending(run, e);
  if (run.options.execution === "background") {
    // The range jobs the last answers queued.
    for (const e of engines) await deliverFolds(run, e);
    await redeliverHandledFolds(run, engines);
  }
  const clean = newContainer(run);
  // A turn with nothing to add rolls a pending archive forward, like an engine's next call.
  await Promise.all(
    engines.map(async (e) => {
      stats.operations++;
      await runTurn(clean.deps, e.key, QUIET).catch((err: unknown) => violate(stats, [`${where(e)}: the settling turn failed: ${describe(err)}`]));
    }),
  );
  await checkProcesses(run, engines, clean, "final");
  // Liveness: with the leases expired, a forced compaction is never blocked by what crashed.
  await Promise.all(
    engines.map(async (e) => {
      stats.operations++;
      try {
        const r = await compactIfNeeded(clean.deps, e.key, { model: { contextWindow: 100_000 }, force: "EMERGENCY" });
        if (r.memoryId) e.memories.add(r.memoryId);
        if (!r.compacted && !["keep_recent", "nothing_eligible"].includes(r.reason ?? "")) {
          violate(stats, [`${where(e)}: liveness: a forced compaction after recovery did not run (${r.reason})`]);
        }
      } catch (err) {
        violate(stats, [`${where(e)}: liveness: the forced compaction failed: ${describe(err)}`]);
      }
    }),
  );
  await checkProcesses(run, engines, clean, "after liveness");
  await checkGlobal(run, engines, clean);
}

/** Late duplicates of every request the worker already handled change nothing. */
async function redeliverHandledFolds(run: ChaosRun, engines: readonly Engine[]) {
  const { inner } = run;
  for (const e of engines) {
    for (const ev of run.events.filter((x) => x.detailType === EVENTS.CompactionRequested.detailType && sameProcess(x, e))) {
      const before = await readAll(inner, e.key);
      const r = await attempt(run, e, NO_FAULTS, (deps) => handleCompactionRequested(deps, ev.detail));
      if (!r.ok) continue; // a fold still waiting for its lease; settled below
      if ("done" in r.value && r.value.done === "committed" && ev.delivered > 0) violate(run.stats, [`${where(e)}: a late CompactionRequested committed fold ${r.value.foldId} again`]);
      if ("skipped" in r.value && JSON.stringify(await readAll(inner, e.key)) !== JSON.stringify(before) && r.value.skipped.startsWith("fold is")) {
        violate(run.stats, [`${where(e)}: a late CompactionRequested for a handled fold changed the process`]);
      }
      ev.delivered++;
    }
  }
}
