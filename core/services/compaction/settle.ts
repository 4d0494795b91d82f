/** Settling the replay: the first step of every path that reads the active view to act on it. */
import { notFound } from "../../domain/errors.js";
import type { Metrics } from "../../ports/metrics.js";
import { clearsAt } from "../../domain/replay.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { CoreDeps } from "../deps.js";
import { AGAIN_NOW, AT_ONCE, retrying } from "./lease.js";

/** The metric goes out where the caller has metrics (a record-only path such as a PATCH logs it only). */
type SettleDeps = Pick<CoreDeps, "store" | "log"> & { metrics?: Metrics };

/**
 * Reads the active view, finishing a pending roll-forward first so later steps see settled state,
 * and shows each result cleared for a later replay epoch whole until then ({@link atReplayEpoch}).
 */
export async function settledView(deps: SettleDeps & Pick<CoreDeps, "clock" | "sleep">, key: ProcessKey, view?: ActiveView): Promise<ActiveView> {
  let current = view ?? (await read(deps, key));
  // Again: another compaction may commit (and leave its own pending archive) while we roll forward.
  return retrying(
    deps,
    AT_ONCE,
    async () => {
      if (!current.state.pendingArchive) return atReplayEpoch(current);
      await finishRollForward(deps, key, current.state.pendingArchive);
      current = await read(deps, key);
      return current.state.pendingArchive ? AGAIN_NOW : atReplayEpoch(current);
    },
    () => new Error(`process ${key.processId}: pending archive did not settle`),
  );
}

async function read(deps: Pick<CoreDeps, "store">, key: ProcessKey): Promise<ActiveView> {
  const view = await deps.store.activeView(key);
  if (!view) throw notFound("process", key.processId);
  return view;
}

/**
 * Finishes the roll-forward that names `memoryId`. An original it found missing is reported (an
 * error in the log, the `originalsMissing` metric: docs/reliability.md, "The invariants"),
 * never skipped in silence: it means a message left both the replay and its summary's
 * originals.
 */
export async function finishRollForward(deps: SettleDeps, key: ProcessKey, memoryId: string): Promise<void> {
  const { missing } = await deps.store.finishPendingArchive(key, memoryId);
  if (missing.length === 0) return;
  deps.metrics?.originalsMissing(missing.length);
  deps.log.error("roll-forward found originals missing", { processId: key.processId, memoryId, missing: missing.slice(0, 100), count: missing.length });
}

/**
 * The view as the replay stands at its epoch: a result cleared for a later epoch shows whole until
 * a fold moves the epoch (docs/compaction.md, "Tool-result clearing"). Idempotent.
 */
export function atReplayEpoch(view: ActiveView): ActiveView {
  if (view.waitingClears) return view;
  const { messages, waiting } = clearsAt(view.messages, view.state.replayEpoch);
  return { ...view, messages, waitingClears: waiting };
}
