/**
 * One chaos run from start to end: set up the tenants and the engines' processes, run every
 * engine's operations concurrently (checking the touched process after each), then let leases
 * expire, deliver everything still pending, settle every process and check it all, including
 * that a forced compaction is never blocked by what crashed.
 */
import { EVENTS } from "../../core/domain/events.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { readAll } from "../invariants.js";
import { attempt, describe, withEngineSummarizer, NO_FAULTS, unexpected } from "./attempt.js";
import { deletionViolations } from "./deletion-checks.js";
import { deliverErasure } from "./ops-delete.js";
import type { OpPlan } from "./plan.js";
import { ack, emptyLedger } from "./checks.js";
import { deliverFolds, deliverPending } from "./deliveries.js";
import { checkGlobal } from "./global-checks.js";
import { CHAOS_TENANTS } from "./plan.js";
import { checkProcesses, snapshotViolations } from "./process-checks.js";
import { violate } from "./report.js";
import { runOp } from "./run-op.js";
import { eraseLeavingTenant } from "./tenant-erasure.js";
import {
  afterOps,
  appendBody,
  busy,
  inBackground,
  newContainer,
  progressed,
  QUIET,
  resumeAll,
  sameProcess,
  sleep,
  detailOf,
  where,
  type PublishedEvent,
  type ChaosRun,
  type Engine,
} from "./run-state.js";
import { handleCompactionRequested, handleInboxAnswered } from "../../core/adapters/events/handlers.js";

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
    background: new Set<Promise<void>>(),
    late: [],
    waiting: [],
    finished: false,
    deletion: null,
    expired: new Map(),
    native: new Map(),
    blocks: new Map(),
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
  // The first tenant has a daily budget it never reaches, so its folds reserve and count tokens (and can be held there).
  await setup.deps.store.putTenantBudget(CHAOS_TENANTS[0], 1_000_000_000_000, new Date().toISOString());
  for (const t of CHAOS_TENANTS) run.tunables.set(t, await newContainer(run).deps.tunables.forProcess(t));
  return engines;
}

/**
 * All engines at once, each one op at a time, as engines of one agent platform would. An op whose
 * stall detaches it runs on in the background once the stall began, and late deliveries start
 * when due: both meet the engine's next ops. The invariants of a process are checked after an op
 * only while nothing of its engine runs in the background (the reads are not one snapshot).
 */
async function runEngines(run: ChaosRun, engines: readonly Engine[]) {
  const { options } = run;
  await Promise.all(
    engines.map(async (e) => {
      for (const op of e.plan.ops) {
        startLate(run, e);
        // A tool call and its results are one agent step: no fold of this engine runs in between.
        if (op.spec.kind === "group") await quiet(e);
        if (op.stall?.detach) await runDetached(run, e, op);
        // A deleted process's reads refuse it too: its later ops may end in any way but one that leaves an item (attempt.ts).
        else await runOp(run, e, op).catch((err: unknown) => rethrowUnlessDeleted(e, err));
        // The worker gets the requests after every other op: the rest arrive late, after another op
        // (a turn, a forced compaction, a range offer) may have raced or outdated them.
        // (The engine waits for these: a detached stall of the op stays with the op.)
        if (options.execution === "background" && e.opsRun % 2 === 1) await deliverFolds(run, e, op.stall?.detach ? { ...op, stall: undefined } : op);
        progressed(e);
        if (e.opsRun % (options.checkEvery ?? 1) === 0 && !busy(e) && !e.deletion) violate(run.stats, snapshotViolations(e, await readAll(run.inner, e.key), false));
        if (e.opsRun % 50 === 0) options.progress?.(`  ${where(e)}: ${e.opsRun}/${e.plan.ops.length} operations`);
      }
      resumeAll(e);
      for (const job of e.late) job.due = 0;
      startLate(run, e);
      await quiet(e);
    }),
  );
}

function rethrowUnlessDeleted(e: Engine, err: unknown) {
  if (!e.deletion) throw err;
}

/**
 * Runs `op` with its detached stall: the engine waits until the held call began (or the op ended
 * without reaching it), then goes on; the call resumes once the engine ran `afterOps` more ops.
 */
async function runDetached(run: ChaosRun, e: Engine, op: OpPlan) {
  const stall = op.stall!;
  let began!: () => void;
  const stalled = new Promise<void>((r) => (began = r));
  const hold = async () => {
    began();
    // This op itself counts as one once the engine goes on.
    await afterOps(e, 1 + stall.afterOps, stall.ms);
  };
  const task = inBackground(e, () =>
    runOp(run, e, { ...op, hold }).catch((err: unknown) => violate(run.stats, [`${where(e)}: a detached ${op.spec.kind} threw: ${describe(err)}`])),
  );
  await Promise.race([task, stalled]);
}

/** Starts the engine's late deliveries that are due, in the background. */
function startLate(run: ChaosRun, e: Engine) {
  const due = e.late.filter((job) => job.due <= e.opsRun);
  e.late = e.late.filter((job) => job.due > e.opsRun);
  for (const job of due) {
    void inBackground(e, () => job.deliver().catch((err: unknown) => violate(run.stats, [`${where(e)}: a late delivery threw: ${describe(err)}`])));
  }
}

/**
 * Waits until nothing of the engine runs in the background. The engine makes no progress
 * meanwhile, so the calls held until it does resume now.
 */
async function quiet(e: Engine) {
  while (e.background.size > 0) {
    for (const w of e.waiting.splice(0)) w.resume();
    await Promise.race([Promise.all([...e.background]), sleep(50)]);
  }
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
  const deleted = engines.filter((e) => e.plan.ops.some((op) => op.spec.kind === "delete"));
  const kept = engines.filter((e) => !deleted.includes(e));
  await settleDeleted(run, deleted);
  // A turn with nothing to add rolls a pending archive forward, like an engine's next call.
  await Promise.all(
    kept.map(async (e) => {
      stats.operations++;
      await runTurn(clean.deps, e.key, QUIET).catch((err: unknown) => violate(stats, [`${where(e)}: the settling turn failed: ${describe(err)}`]));
    }),
  );
  await checkProcesses(run, kept, clean, "final");
  // Liveness: with the leases expired, a forced compaction is never blocked by what crashed.
  await Promise.all(
    kept.map(async (e) => {
      stats.operations++;
      try {
        const r = await compactIfNeeded(withEngineSummarizer(run, e, clean.deps), e.key, { model: { contextWindow: 100_000 }, force: "EMERGENCY" });
        if (r.memoryId) e.memories.add(r.memoryId);
        if (!r.compacted && !["keep_recent", "nothing_eligible"].includes(r.reason ?? "")) {
          violate(stats, [`${where(e)}: liveness: a forced compaction after recovery did not run (${r.reason})`]);
        }
      } catch (err) {
        violate(stats, [`${where(e)}: liveness: the forced compaction failed: ${describe(err)}`]);
      }
    }),
  );
  await checkProcesses(run, kept, clean, "after liveness");
  await checkGlobal(run, kept, clean);
  for (const e of deleted) violate(stats, await deletionViolations(run, e, "the end of the run"));
  await eraseLeavingTenant(run, engines);
}

/**
 * The deleted processes at the end: completed, their erasure, offer answers and fold requests
 * delivered once more, and a turn refused by the tombstone (each call followed by the deletion
 * check, attempt.ts).
 */
async function settleDeleted(run: ChaosRun, deleted: readonly Engine[]) {
  for (const e of deleted) {
    if (e.deletion !== "deleted") {
      violate(run.stats, [`deleted process ${where(e)}: its delete never completed (${e.deletion ?? "not started"})`]);
      continue;
    }
    await deliverErasure(run, e, true);
    const ofProcess = (ev: PublishedEvent) => run.offers.get(`${detailOf(ev).tenantId}/${detailOf(ev).itemId}`)?.processId === e.key.processId;
    for (const ev of run.events.filter((x) => x.detailType === EVENTS.InboxItemAnswered.detailType && detailOf(x).tenantId === e.key.tenantId && ofProcess(x))) {
      const r = await attempt(run, e, NO_FAULTS, (deps) => handleInboxAnswered(deps, ev.detail));
      if (!r.ok) unexpected(run, e, "InboxItemAnswered after the delete", r.error);
    }
    for (const ev of run.events.filter((x) => x.detailType === EVENTS.CompactionRequested.detailType && sameProcess(x, e))) {
      const r = await attempt(run, e, NO_FAULTS, (deps) => handleCompactionRequested(deps, ev.detail));
      if (!r.ok) unexpected(run, e, "CompactionRequested after the delete", r.error);
    }
    const r = await attempt(run, e, NO_FAULTS, (deps) => runTurn(deps, e.key, QUIET));
    if (r.ok) violate(run.stats, [`deleted process ${where(e)}: a turn after the delete succeeded`]);
    else unexpected(run, e, "turn after the delete", r.error);
  }
}

/** Late duplicates of every request the worker already handled change nothing. */
async function redeliverHandledFolds(run: ChaosRun, engines: readonly Engine[]) {
  const { inner } = run;
  for (const e of engines) {
    for (const ev of run.events.filter((x) => x.detailType === EVENTS.CompactionRequested.detailType && sameProcess(x, e))) {
      if (e.deletion) {
        // Redelivered after the delete: refused, and the deletion check follows (attempt.ts).
        await attempt(run, e, NO_FAULTS, (deps) => handleCompactionRequested(deps, ev.detail));
        continue;
      }
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
