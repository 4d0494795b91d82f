/**
 * A fake clock for the summarizer's retry loop (core/adapters/llm/retry.ts): time moves only when
 * the test fires a timer, so attempt timeouts, backoff waits and the deadline are exact and no
 * test waits on the wall clock.
 */
import type { RetryClock } from "../../core/adapters/llm/retry.js";

interface Timer {
  at: number;
  ms: number;
  resolve: () => void;
}

export function createFakeClock(start = 0) {
  let now = start;
  const pending: Timer[] = [];
  let changed: Array<() => void> = [];
  const notify = () => {
    const waiting = changed;
    changed = [];
    for (const wake of waiting) wake();
  };
  const clock = {
    now: () => now,
    /** Every wait asked for, in ms, in order (attempt timers and backoff waits alike). */
    requested: [] as number[],
    sleep(ms: number, cancel?: AbortSignal): Promise<void> {
      clock.requested.push(ms);
      return new Promise<void>((resolve) => {
        if (cancel?.aborted) return resolve();
        const timer: Timer = { at: now + ms, ms, resolve };
        pending.push(timer);
        cancel?.addEventListener(
          "abort",
          () => {
            pending.splice(pending.indexOf(timer), 1);
            resolve();
          },
          { once: true },
        );
        notify();
      });
    },
    /** The durations of the timers still pending. */
    pending: () => pending.map((t) => t.ms),
    /**
     * Waits until a timer of `ms` is pending, moves time to its end and fires it. Only timers the
     * code under test has set count, so the test never runs ahead of the work. `lateBy` plays a
     * timer that wakes late, as a busy event loop's does.
     */
    async fire(ms: number, lateBy = 0): Promise<void> {
      let timer = pending.find((t) => t.ms === ms);
      while (!timer) {
        await new Promise<void>((wake) => changed.push(wake));
        timer = pending.find((t) => t.ms === ms);
      }
      pending.splice(pending.indexOf(timer), 1);
      now = timer.at + lateBy;
      timer.resolve();
    },
  } satisfies RetryClock & Record<string, unknown>;
  return clock;
}
