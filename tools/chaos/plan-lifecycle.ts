/**
 * The data-lifecycle operations of a chaos plan (tools/chaos/README.md, "Copies, expiries and
 * erasure"): every engine exports its process into a copy now and then, each engine of the
 * tenant with a retention moves the clock past it once (then undoes its newest fold), and a
 * delete's tombstone or erasure is held. Each takes the place of a planned append or context
 * read, so a plan still has `turns` operations. Drawn from the streams
 * `engine-<index>/lifecycle`, after the deletes.
 */
import { CHAOS_TENANTS, type EnginePlan, type OpPlan, type OpSpec, type StallPlan } from "./plan-model.js";
import type { Rng } from "./rng.js";

/** Days the clock jumps: past the second tenant's 30-day retention. */
export const EXPIRY_JUMP_DAYS = 31;
/** One copy per this many operations of an engine (at least one). */
const OPS_PER_COPY = 60;

export function addLifecycle(root: Rng, engines: EnginePlan[], stalls: boolean) {
  for (const e of engines.filter((x) => x.ops.length >= 10)) {
    const rng = root.fork(`engine-${e.index}/lifecycle`);
    const copies = Math.max(1, Math.round(e.ops.length / OPS_PER_COPY));
    for (let c = 0; c < copies; c++) {
      const at = replaceable(e.ops, rng.int(Math.floor(e.ops.length * 0.1), Math.floor(e.ops.length * 0.85)));
      if (at < 0) continue;
      // Small pages (down to one line each) so that an export spans many reads another call can come between.
      const copy = planned(e.ops[at]!, { kind: "copy", pageBytes: rng.pick([1, 2_000, 64_000]) });
      // Held between its pages half the time, the engine going on meanwhile.
      if (stalls && rng.chance(0.5)) copy.stall = { on: "store", method: "listMessages", nth: rng.int(1, 3), at: "after", write: 0, ms: 10_000, detach: true, afterOps: rng.int(1, 2) };
      e.ops[at] = copy;
    }
    if (e.tenantId === CHAOS_TENANTS[1]) {
      const at = replaceable(e.ops, rng.int(Math.floor(e.ops.length * 0.5), Math.floor(e.ops.length * 0.8)));
      if (at >= 0) {
        e.ops[at] = planned(e.ops[at]!, { kind: "expire", days: EXPIRY_JUMP_DAYS });
        // Right after it, undo the newest fold, whose originals are past their retention: refused, or whole.
        const next = e.ops[at + 1];
        if (next && next.spec.kind !== "delete") e.ops[at + 1] = planned(next, { kind: "revert" });
      }
    }
    if (stalls) holdDelete(rng, e.ops);
  }
}

/** A delete with no planned crash holds its tombstone's write or its erasure, briefly or past the lease. */
function holdDelete(rng: Rng, ops: OpPlan[]) {
  const del = ops.find((o) => o.spec.kind === "delete" && o.spec.crash === null);
  if (!del) return;
  const method = rng.pick(["markDeleted", "eraseItems"] as const);
  const stall: StallPlan = { on: "store", method, nth: 1, at: rng.pick(["before", "after"] as const), write: 0, ms: rng.int(20, 450), detach: false, afterOps: 0 };
  del.stall = stall;
}

/** The first op from `from` on that an operation of the lifecycle may take the place of: a plain append or context read. */
function replaceable(ops: readonly OpPlan[], from: number): number {
  for (let i = from; i < ops.length; i++) {
    const o = ops[i]!;
    if ((o.spec.kind === "append" || o.spec.kind === "context") && !o.stall && !o.lateBy && !o.redeliver) return i;
  }
  return -1;
}

const planned = (op: OpPlan, spec: OpSpec): OpPlan => ({ id: op.id, spec, fault: null, summarizer: [], deliveries: 1, concurrentDeliveries: false });
