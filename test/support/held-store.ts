/**
 * A store whose `method` waits, on its first call, until the test releases it: a slow container
 * frozen at a chosen point, without a clock. Every other call passes straight through.
 */
import type { Store } from "../../core/ports/store.js";

/** `reached` resolves once the first call of `method` is waiting; `release()` lets it go on. */
export function holdFirst<M extends keyof Store>(store: Store, method: M) {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const released = new Promise<void>((r) => (release = r));
  let first = true;
  const held: Store = Object.create(store);
  held[method] = (async (...args: unknown[]) => {
    if (first) {
      first = false;
      reach();
      await released;
    }
    return (store[method] as (...a: unknown[]) => unknown).apply(store, args);
  }) as Store[M];
  return { store: held, reached, release };
}
