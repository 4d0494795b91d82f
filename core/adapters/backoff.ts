/**
 * The one backoff rule of the adapters: exponential growth from `baseMs`, capped at `capMs`, with
 * jitter in the upper half. The jitter spreads retries of callers that failed together (a
 * throttled batch, a transaction conflict) so they do not collide again; the lower half stays
 * empty, so a retry is never a tight loop.
 */
export interface BackoffPolicy {
  /** Ceiling of the first wait, in ms. */
  baseMs: number;
  /** Largest ceiling, in ms. */
  capMs: number;
}

/**
 * Wait before retry number `retry` (1 for the first retry), in ms: between half and all of
 * `min(capMs, baseMs * 2^(retry-1))`.
 *
 * @example backoffDelay(3, { baseMs: 50, capMs: 1000 }, () => 1) // 200
 */
export function backoffDelay(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How a retry loop waits: tests pass their own `sleep` (to observe the waits) and `random`. */
export interface BackoffOptions {
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/**
 * The wait of every retry loop in the adapters: `await pause(retry)` sleeps `backoffDelay(retry)`.
 *
 * @example
 * const pause = backoff({ baseMs: 20, capMs: 500 });
 * for (let retry = 1; !(await tryOnce()); retry++) await pause(retry);
 */
export function backoff(policy: BackoffPolicy, options: BackoffOptions = {}): (retry: number) => Promise<void> {
  const wait = options.sleep ?? sleep;
  const random = options.random ?? Math.random;
  return (retry) => wait(backoffDelay(retry, policy, random));
}
