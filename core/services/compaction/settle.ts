/** Settling the replay: the first step of every path that reads the active view to act on it. */
import { notFound } from "../../domain/errors.js";
import { clearsAt } from "../../domain/replay.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { CoreDeps } from "../deps.js";

/**
 * Reads the active view, finishing a pending roll-forward first so later steps see settled state,
 * and shows each result cleared for a later replay epoch whole until then ({@link clearsAt}).
 */
export async function settledView(deps: Pick<CoreDeps, "store">, key: ProcessKey, view?: ActiveView): Promise<ActiveView> {
  let current = view ?? (await deps.store.activeView(key));
  if (!current) throw notFound("process", key.processId);
  // Loop: another compaction may commit (and leave its own pending archive) while we roll forward.
  for (let rounds = 0; current.state.pendingArchive; rounds++) {
    if (rounds >= 5) throw new Error(`process ${key.processId}: pending archive did not settle`);
    await deps.store.finishPendingArchive(key, current.state.pendingArchive);
    current = await deps.store.activeView(key);
    if (!current) throw notFound("process", key.processId);
  }
  return atReplayEpoch(current);
}

/** The view as the replay stands at its epoch (idempotent: a view already shown so comes back as it is). */
export function atReplayEpoch(view: ActiveView): ActiveView {
  if (view.waitingClears) return view;
  const { messages, waiting } = clearsAt(view.messages, view.state.replayEpoch);
  return { ...view, messages, waitingClears: waiting };
}
