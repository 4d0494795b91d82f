/**
 * One planned operation of an engine, sent to the module that runs its kind. A burst runs its
 * members at once, each in the container the plan names (other Lambda instances of the process).
 */
import { runReplayArchive, runSimple } from "./ops-simple.js";
import { runFlood, runGroup } from "./ops-appends.js";
import { runPin, runRevert } from "./ops-controls.js";
import { runPlanCompletion } from "./ops-plan-completion.js";
import { runDelete } from "./ops-delete.js";
import { runCopy, runExpire } from "./ops-lifecycle.js";
import type { RunningOp } from "./attempt.js";
import { restart, sibling, type ChaosRun, type Engine } from "./run-state.js";

export async function runOp(run: ChaosRun, e: Engine, op: RunningOp) {
  const spec = op.spec;
  switch (spec.kind) {
    case "append":
    case "turn":
    case "compact":
    case "range":
    case "context":
      return runSimple(run, e, op, spec, false);
    case "group":
      return runGroup(run, e, op, spec);
    case "plan":
      return runPlanCompletion(run, e, op, spec);
    case "replayArchive":
      return runReplayArchive(run, e, op, spec);
    case "flood":
      return runFlood(run, e, spec);
    case "restart":
      return restart(run, e, e.container);
    case "pin":
      return runPin(run, e, op, spec);
    case "revert":
      return runRevert(run, e, op);
    case "delete":
      return runDelete(run, e, op, spec);
    case "copy":
      return runCopy(run, e, op, spec);
    case "expire":
      return runExpire(run, e, spec);
    case "burst":
      await Promise.all(spec.members.map((m) => runSimple(run, e, m, m.spec, true, sibling(run, e, m.container))));
      return;
  }
}
