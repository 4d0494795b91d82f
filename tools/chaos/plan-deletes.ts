/**
 * Which processes a chaos plan deletes: with four engines or more, the engines of the last pair
 * (the same process id in both tenants, a parent of no other engine) delete their process once
 * about nine tenths of their operations ran, so the other engines, and these ones before, still
 * exercise compaction (a plan of two engines deletes nothing: it would leave nothing else). The
 * delete takes the place of one planned op, so a plan still has `turns` operations. Their ops
 * after the delete run against the tombstone. With stalls, the delete comes right after a
 * forced compaction whose commit is held until after it, and the newest accepted offer before it has
 * its answer delivered after it. Drawn from the streams `engine-<index>/delete`, so the other
 * draws of a seed do not change.
 */
import type { EnginePlan, OpPlan, OpSpec } from "./plan-model.js";
import { DETACHED_CAP_MS } from "./plan-stalls.js";
import type { Rng } from "./rng.js";

type DeleteSpec = Extract<OpSpec, { kind: "delete" }>;

export function addDeletes(root: Rng, engines: EnginePlan[], stalls: boolean) {
  if (engines.length < 4) return;
  const pair = Math.floor((engines.length - 1) / 2);
  for (const e of engines.filter((x) => x.processId === `p${pair}` && x.ops.length > 0)) {
    const rng = root.fork(`engine-${e.index}/delete`);
    const crash = rng.weighted<DeleteSpec["crash"]>([
      [null, 1],
      [{ method: "eraseItems", when: "after" }, 1],
      [{ method: "finishDeletion", when: "before" }, 1],
    ]);
    const late = Math.floor(e.ops.length * 0.9);
    const compaction = lastBefore(e.ops, late, (o) => o.spec.kind === "compact");
    const at = compaction >= 0 ? compaction + 1 : late;
    const op: OpPlan = {
      id: e.ops[at]!.id,
      spec: { kind: "delete", inlineItems: rng.pick([25, 100, 10_000]), crash },
      fault: null,
      summarizer: [],
      deliveries: 1,
      concurrentDeliveries: false,
    };
    if (stalls) inFlightAt(e.ops, at, compaction);
    e.ops[at] = op;
  }
}

/** The compaction before the delete at `at` commits after it; the newest accepted offer before it is answered after it. */
function inFlightAt(ops: OpPlan[], at: number, compaction: number) {
  const fold = ops[compaction];
  if (fold?.spec.kind === "compact") {
    // Forced, with no fault and a summarizer that answers, so that it reaches its commit.
    fold.spec = { ...fold.spec, force: "EMERGENCY" };
    fold.fault = null;
    fold.summarizer = [];
    fold.stall = { on: "store", method: "commitCompaction", nth: 1, at: "before", write: 0, ms: DETACHED_CAP_MS, detach: true, afterOps: 2 };
  }
  const offer = lastBefore(ops, at, (o) => o.spec.kind === "plan" && o.spec.accept);
  // Delivered once the engine ran the ops up to the delete and the one after it.
  if (offer >= 0) ops[offer]!.lateBy = at - offer + 1;
}

/** The index of the last op before `end` that `match` accepts, or -1. */
function lastBefore(ops: readonly OpPlan[], end: number, match: (op: OpPlan) => boolean): number {
  for (let i = end - 1; i >= 0; i--) if (match(ops[i]!)) return i;
  return -1;
}
