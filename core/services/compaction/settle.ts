/** Settling the replay: the first step of every path that reads the active view to act on it. */
import { notFound } from "../../domain/errors.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { CoreDeps } from "../deps.js";
import { AGAIN_NOW, AT_ONCE, retrying } from "./lease.js";

/** Reads the active view, finishing a pending roll-forward first so later steps see settled state. */
export async function settledView(deps: Pick<CoreDeps, "store" | "clock" | "sleep">, key: ProcessKey, view?: ActiveView): Promise<ActiveView> {
  let current = view ?? (await read(deps, key));
  // Again: another compaction may commit (and leave its own pending archive) while we roll forward.
  return retrying(
    deps,
    AT_ONCE,
    async () => {
      if (!current.state.pendingArchive) return current;
      await deps.store.finishPendingArchive(key, current.state.pendingArchive);
      current = await read(deps, key);
      return current.state.pendingArchive ? AGAIN_NOW : current;
    },
    () => new Error(`process ${key.processId}: pending archive did not settle`),
  );
}

async function read(deps: Pick<CoreDeps, "store">, key: ProcessKey): Promise<ActiveView> {
  const view = await deps.store.activeView(key);
  if (!view) throw notFound("process", key.processId);
  return view;
}
