/**
 * Taking the process lease for the state a view was read at: the first step of the commit
 * protocol (docs/compaction.md), shared by folds, prepared folds, the worker and undo.
 */
import type { ActiveView, ProcessKey } from "../ports/store.js";
import type { ServiceDeps } from "./deps.js";

export async function takeLease(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  options: { owner?: string; replayTokens?: number } = {},
) {
  const owner = options.owner ?? deps.ids.token();
  const now = deps.clock.now();
  const lease = await deps.store.acquireLease(key, {
    owner,
    now: now.toISOString(),
    until: new Date(now.getTime() + deps.leaseMs).toISOString(),
    expectedVersion: view.state.version,
    ...(options.replayTokens !== undefined ? { replayTokens: options.replayTokens } : {}),
  });
  return { owner, now, lease };
}
