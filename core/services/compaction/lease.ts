/**
 * The process lease (docs/compaction.md, "The commit protocol"): taken for the state a view was
 * read at, held while `fn` runs, given back unless the write itself cleared it; and the one retry
 * policy of the protocol's waits, on `deps.clock` with an injected sleep.
 */
import type { LeaseRefusal } from "../../domain/fold/refusal.js";
import type { ActiveView, ProcessKey } from "../../ports/store.js";
import type { CoreDeps, ServiceDeps } from "../deps.js";

export async function takeLease(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  options: { owner?: string | undefined; replayTokens?: number | undefined } = {},
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

/**
 * Runs `fn` under the lease for the version of `view`, or answers the store's refusal. The lease is
 * released when `fn` ends, unless it reports that its write cleared it (a commit), also on a throw.
 */
export async function withLease<T>(
  deps: ServiceDeps,
  key: ProcessKey,
  view: ActiveView,
  options: { owner?: string | undefined; replayTokens?: number | undefined },
  fn: (lease: { owner: string; now: Date }) => Promise<{ value: T; cleared: boolean }>,
): Promise<{ ok: true; value: T } | { ok: false; refusal: LeaseRefusal }> {
  const { owner, now, lease } = await takeLease(deps, key, view, options);
  if (!lease.ok) return { ok: false, refusal: lease.reason };
  let cleared = false;
  try {
    const out = await fn({ owner, now });
    cleared = out.cleared;
    return { ok: true, value: out.value };
  } finally {
    if (!cleared) await releaseLease(deps, key, owner);
  }
}

/** How often, and how long, a step that met another holder tries again. */
export interface RetryPolicy {
  attempts: number;
  /** The wait before attempt `n + 1` (ms). */
  waitMs: (n: number) => number;
  /** Never start an attempt this long after the first (ms, on `deps.clock`). */
  withinMs?: number;
}

/** Up to 5 attempts, each at once after the last. */
export const AT_ONCE: RetryPolicy = { attempts: 5, waitMs: () => 0 };

/** What an attempt answers to be tried again, waiting (by the policy) or at once. */
export const AGAIN = { again: true, wait: true } as const;
export const AGAIN_NOW = { again: true, wait: false } as const;
type Again = typeof AGAIN | typeof AGAIN_NOW;

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `attempt` until it answers a value or the policy is used up; then throws `exhausted()`. */
export async function retrying<T>(
  deps: Pick<CoreDeps, "clock" | "sleep">,
  policy: RetryPolicy,
  attempt: (n: number) => Promise<T | Again>,
  exhausted: () => Error,
): Promise<T> {
  const deadline = deps.clock.now().getTime() + (policy.withinMs ?? Number.POSITIVE_INFINITY);
  for (let n = 1; ; n++) {
    const out = await attempt(n);
    if (out !== AGAIN && out !== AGAIN_NOW) return out as T;
    if (n >= policy.attempts || deps.clock.now().getTime() >= deadline) throw exhausted();
    if (out === AGAIN) await (deps.sleep ?? realSleep)(policy.waitMs(n));
  }
}
