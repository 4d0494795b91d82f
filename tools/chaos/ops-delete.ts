/**
 * Deleting an engine's process while its earlier work is still in flight (detached stalls, late
 * offer answers, folds the worker has not handled): DELETE until it answers 204, delivering the
 * worker's ProcessEraseRequested in between (docs/api.md, "Deleting a process"), its container
 * crashing once mid-erase when the plan says so. From the first call on, the process is out of
 * the other invariants; once a repeat answered 204, every later call touching it is followed by
 * the deletion check (attempt.ts), and the end of the run checks it again (run-plan.ts).
 */
import { handleProcessEraseRequested } from "../../core/adapters/events/handlers.js";
import { EVENTS } from "../../core/domain/events.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { attempt, NO_FAULTS, unexpected, type OpFaults, type RunningOp } from "./attempt.js";
import { deletionViolations } from "./deletion-checks.js";
import type { OpSpec } from "./plan.js";
import { violate } from "./report.js";
import { sameProcess, where, type ChaosRun, type Engine } from "./run-state.js";

/** A DELETE that has to be repeated more often than this is not converging. */
const MAX_CALLS = 20;
/** Items the worker erases between two checks of where it stands (small: several batches). */
const BATCH_ITEMS = 40;

export async function runDelete(run: ChaosRun, e: Engine, op: RunningOp, spec: Extract<OpSpec, { kind: "delete" }>) {
  if (e.deletion) return;
  e.deletion = "deleting";
  run.stats.excluded.add(where(e));
  run.stats.deletes.started++;
  // What of the engine is still in flight as the delete starts.
  run.stats.deletes.inFlight += e.background.size + e.late.length + e.waiting.length;
  const erasure = { inlineItems: spec.inlineItems, batchItems: BATCH_ITEMS };
  let faults: OpFaults = spec.crash ? { ...NO_FAULTS, fault: { ...spec.crash, nth: 1, crash: true } } : { ...NO_FAULTS, stall: op.stall, hold: op.hold };
  let answeredDeleted = 0;
  for (let calls = 0; calls < MAX_CALLS && answeredDeleted < 2; calls++) {
    const r = await attempt(run, e, faults, (deps) => deleteProcess({ ...deps, erasure }, e.key));
    faults = NO_FAULTS;
    if (!r.ok) {
      unexpected(run, e, "delete", r.error);
      continue;
    }
    if (r.value.status === "deleted") {
      answeredDeleted++;
      continue;
    }
    run.stats.deletes.background++;
    await deliverErasure(run, e);
  }
  if (answeredDeleted < 2) return violate(run.stats, [`deleted process ${where(e)}: DELETE did not answer 204 twice in ${MAX_CALLS} calls`]);
  e.deletion = "deleted";
  run.stats.deletes.completed++;
  violate(run.stats, await deletionViolations(run, e, "the repeated DELETE"));
}

/** The worker's erasure: every ProcessEraseRequested of the process nobody handled yet (a crash leaves it for the repeat). */
export async function deliverErasure(run: ChaosRun, e: Engine, again = false) {
  const mine = run.events.filter((ev) => ev.detailType === EVENTS.ProcessEraseRequested.detailType && sameProcess(ev, e) && (again || ev.delivered === 0));
  for (const ev of mine) {
    const r = await attempt(run, e, NO_FAULTS, (deps) => handleProcessEraseRequested({ ...deps, erasure: { batchItems: BATCH_ITEMS } }, ev.detail));
    if (r.ok) ev.delivered++;
    else unexpected(run, e, "ProcessEraseRequested", r.error);
  }
}
