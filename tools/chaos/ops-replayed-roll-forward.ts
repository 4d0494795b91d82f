/**
 * A roll-forward delivered twice: the store's markArchived called again for a memory whose
 * archives may already be settled, as a retried Lambda would. It must never re-point a message.
 */
import { withRetry } from "./attempt.js";
import type { OpPlan, OpSpec } from "./plan.js";
import { violate } from "./report.js";
import { where, type ChaosRun, type Engine } from "./run-state.js";

export async function runReplayArchive(run: ChaosRun, e: Engine, op: OpPlan, spec: Extract<OpSpec, { kind: "replayArchive" }>) {
  const ok = (await run.inner.listMemories(e.key)).filter((m) => m.status === "OK");
  if (ok.length === 0) return;
  const memory = ok[Math.floor(spec.memoryFrac * ok.length)]!;
  const pending = (await run.inner.getProcess(e.key))?.pendingArchive === memory.id;
  // A duplicated roll-forward: markArchived again with the same memory must never re-point a message.
  const out = await withRetry(run, e, op, "replayed roll-forward", true, (deps) => deps.store.markArchived(e.key, memory.sourceRefs, memory.id));
  if (out && !pending && out.archived.length > 0) {
    violate(run.stats, [`${where(e)}: a replayed roll-forward of settled memory ${memory.id} archived ${out.archived.length} more messages`]);
  }
}
