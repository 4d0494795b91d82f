/**
 * Taking the process lease for the state a view was read at: the first step of the commit
 * protocol (docs/compaction.md), shared by folds, prepared folds, the worker and undo; and giving
 * it back when a run ends without a commit.
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

/** Lets the lease go; a failure only delays the next fold until the lease expires, so it is logged. */
export async function releaseLease(deps: ServiceDeps, key: ProcessKey, owner: string): Promise<void> {
  await deps.store.releaseLease(key, owner).catch((e) => deps.log.warn("lease release failed", { error: String(e) }));
}
