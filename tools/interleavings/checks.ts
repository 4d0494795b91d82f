/**
 * The checks after one schedule: no actor failed with anything but a service answer (an AppError),
 * a fresh caller that is not held settles the process, and then the stored data keeps the shared
 * invariants (tools/invariants.ts, settled, no lease left) and the scenario's own.
 */
import { AppError } from "../../core/domain/errors.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { findViolations, readAll } from "../invariants.js";
import type { Ready } from "./scenario.js";
import type { ScheduleRun } from "./scheduler.js";
import type { Stage } from "./setup.js";

const describe = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

export async function checkSchedule(stage: Stage, ready: Ready, run: ScheduleRun): Promise<string[]> {
  const v: string[] = [];
  for (const [name, outcome] of run.outcomes) {
    // A service answers trouble with an AppError (a 409, a retry-later); anything else is a bug.
    if (!outcome.ok && !(outcome.error instanceof AppError)) v.push(`actor ${name} failed: ${describe(outcome.error)}`);
  }
  const deps = stage.deps();
  if (ready.ownChecksOnly) {
    const snapshot = await readAll(deps.store, stage.key);
    return [...v, ...((await ready.check?.({ stage, snapshot, run })) ?? [])];
  }
  try {
    await settledView(deps, stage.key);
  } catch (e) {
    v.push(`a fresh caller could not settle the process: ${describe(e)}`);
  }
  const snapshot = await readAll(deps.store, stage.key);
  v.push(...findViolations(snapshot, { settled: true, noLease: true }));
  v.push(...((await ready.check?.({ stage, snapshot, run })) ?? []));
  return v;
}
