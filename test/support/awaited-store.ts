/**
 * A Store wrapper that lets a test await a port call that has finished (for work the test cannot
 * await directly, such as a fold a request abandoned), instead of sleeping. Every call passes
 * through to the real store.
 */
import type { Store } from "../../core/ports/store.js";

export interface FinishedCall {
  method: keyof Store;
  args: unknown[];
  /** The call's result, or undefined when it rejected. */
  result: unknown;
}

type Match = (call: FinishedCall) => boolean;

export function awaitedStore(inner: Store) {
  const finished: FinishedCall[] = [];
  const waiters: Array<{ match: Match; from: number; resolve: (call: FinishedCall) => void }> = [];
  const settle = (call: FinishedCall) => {
    finished.push(call);
    for (const w of [...waiters]) {
      if (finished.length - 1 >= w.from && w.match(call)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(call);
      }
    }
  };
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const call = { method: prop as keyof Store, args, result: undefined as unknown };
        try {
          call.result = await value.apply(target, args);
          return call.result;
        } finally {
          settle(call);
        }
      };
    },
  });
  return {
    store,
    /** How many calls have finished so far (a mark for `finished`'s `after`). */
    mark: () => finished.length,
    /** Resolves with the first call of `method` matching `match` that finished at or after the mark `after`. */
    finished(method: keyof Store, match: (call: FinishedCall) => boolean = () => true, after = 0): Promise<FinishedCall> {
      const matches: Match = (c) => c.method === method && match(c);
      const done = finished.slice(after).find(matches);
      if (done) return Promise.resolve(done);
      return new Promise((resolve) => waiters.push({ match: matches, from: after, resolve }));
    },
  };
}
