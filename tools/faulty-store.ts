/**
 * A Store wrapper that fails on purpose: it throws before a chosen method call (the call never
 * reaches the store) or after it (the call was applied, the caller never hears so), the way a
 * crash or a lost response would. Fault-injection tests and the chaos harness use it.
 */
import type { Store } from "../core/ports/store.js";

export type StoreMethod = keyof Store;

/** The error a fault throws, so tests can tell an injected failure from a real one. */
export class InjectedFault extends Error {
  override readonly name = "InjectedFault";
  constructor(
    readonly method: StoreMethod,
    readonly when: "before" | "after",
  ) {
    super(`injected fault ${when} ${method}`);
  }
}

export interface Fault {
  method: StoreMethod;
  /** `before`: the call is not made. `after`: the call is applied, then the caller gets the error. */
  when: "before" | "after";
  /** Which call to that method fails, counted from when the fault was injected (1 = the next). */
  nth?: number;
  /** How many consecutive calls fail from `nth` on (default 1). */
  times?: number;
  /**
   * Runs against the real store right before the throw (e.g. half of a roll-forward, to model a
   * crash in the middle of it). Receives the call's arguments.
   */
  beforeThrow?: (inner: Store, args: unknown[]) => Promise<void>;
  /**
   * The process dies with this fault: every later call through the wrapper fails before it reaches
   * the store (no `finally` cleanup can write either), the way a killed Lambda container stops.
   */
  crash?: boolean;
}

export interface CallRecord {
  method: StoreMethod;
  /** `dead`: made after a `crash` fault fired, so it never reached the store. */
  outcome: "ok" | "error" | "fault-before" | "fault-after" | "dead";
}

export interface FaultyStore extends Store {
  /** The wrapped store, for reading state without faults. */
  readonly inner: Store;
  /** Every call made through the wrapper, in order. */
  readonly calls: CallRecord[];
  /** Faults that have thrown so far. */
  readonly fired: Fault[];
  /** True once a `crash` fault fired (or {@link FaultyStore.kill} was called). */
  readonly dead: boolean;
  inject(fault: Fault): void;
  /** Kills the "process" now: every later call fails without reaching the store. */
  kill(): void;
  /** Forgets pending faults (calls and fired stay). */
  clear(): void;
  /** How many calls of `method` went through the wrapper. */
  count(method: StoreMethod): number;
}

interface Armed {
  fault: Fault;
  /** Calls of the method seen since injection. */
  seen: number;
  remaining: number;
}

/**
 * Wraps every method of `inner`. Methods stay async, so a fault is always a rejected promise.
 *
 * @example
 * const store = createFaultyStore(real);
 * store.inject({ method: "commitCompaction", when: "after" });
 * await expect(compactIfNeeded(deps, key, request)).rejects.toBeInstanceOf(InjectedFault);
 */
export function createFaultyStore(inner: Store): FaultyStore {
  const armed: Armed[] = [];
  const calls: CallRecord[] = [];
  const fired: Fault[] = [];
  let dead = false;

  /** The fault that hits this call of `method` at `when`, if any (counting happens at `before`). */
  const due = (method: StoreMethod, when: "before" | "after", seenNow: Map<Armed, number>): Armed | undefined =>
    armed.find((a) => {
      if (a.fault.method !== method || a.fault.when !== when || a.remaining <= 0) return false;
      const n = seenNow.get(a) ?? a.seen;
      return n >= (a.fault.nth ?? 1);
    });

  const wrap = (method: StoreMethod) =>
    async (...args: unknown[]): Promise<unknown> => {
      if (dead) {
        calls.push({ method, outcome: "dead" });
        throw new InjectedFault(method, "before");
      }
      // Count this call against every fault on the method, remembering the count it got.
      const seenNow = new Map<Armed, number>();
      for (const a of armed) {
        if (a.fault.method === method) seenNow.set(a, ++a.seen);
      }
      const fire = async (a: Armed, when: "before" | "after") => {
        a.remaining -= 1;
        fired.push(a.fault);
        calls.push({ method, outcome: when === "before" ? "fault-before" : "fault-after" });
        if (a.fault.beforeThrow) await a.fault.beforeThrow(inner, args);
        if (a.fault.crash) dead = true;
        throw new InjectedFault(method, when);
      };
      const before = due(method, "before", seenNow);
      if (before) await fire(before, "before");
      let result: unknown;
      try {
        result = await (inner[method] as (...a: unknown[]) => Promise<unknown>)(...args);
      } catch (e) {
        calls.push({ method, outcome: "error" });
        throw e;
      }
      const after = due(method, "after", seenNow);
      if (after) await fire(after, "after");
      calls.push({ method, outcome: "ok" });
      return result;
    };

  const wrapped = Object.fromEntries(
    (Object.keys(inner) as StoreMethod[]).map((m) => [m, wrap(m)]),
  ) as unknown as Store;

  return {
    ...wrapped,
    inner,
    calls,
    fired,
    get dead() {
      return dead;
    },
    kill() {
      dead = true;
    },
    inject(fault) {
      armed.push({ fault, seen: 0, remaining: fault.times ?? 1 });
    },
    clear() {
      armed.length = 0;
    },
    count: (method) => calls.filter((c) => c.method === method).length,
  };
}
