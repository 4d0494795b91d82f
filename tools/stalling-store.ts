/**
 * A Store wrapper that is slow on purpose: it holds one chosen method call before it reaches the
 * store, after it applied (before the caller hears), or inside it, between its DynamoDB calls
 * (a roll-forward that read META and the memory, then waits before its writes). The chaos harness
 * uses it so slow walkers and late workers meet reverts and pins (docs/reliability.md).
 *
 * Holding inside a call needs the store to be built over a client from {@link gateWrites}: the
 * wrapper runs the chosen call in an async context that carries the gate, and the client holds
 * that context's writes from the chosen one on.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  BatchWriteCommand,
  DeleteCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from "@aws-sdk/lib-dynamodb";
import type { Store } from "../core/ports/store.js";

export type StoreMethod = keyof Store;

export interface StoreStall {
  method: StoreMethod;
  /** Which call of `method` through the wrapper is held (1 = the first). */
  nth: number;
  /**
   * `before`: the call waits before it reaches the store. `after`: it applied, the caller waits.
   * `inside`: its DynamoDB writes wait from the `write`-th one on (its reads before that ran).
   */
  at: "before" | "inside" | "after";
  /** For `inside`: the first write held (1 = every write of the call). */
  write: number;
}

/** Held writes of the current async context: from write number `from` on, each waits for `hold()`. */
interface WriteGate {
  from: number;
  sent: number;
  held: Promise<void> | null;
  hold: () => Promise<void>;
}

const gates = new AsyncLocalStorage<WriteGate>();
const WRITES = [TransactWriteCommand, UpdateCommand, PutCommand, DeleteCommand, BatchWriteCommand];

/**
 * Makes `client` honour write gates: a write sent inside {@link withWriteGate} from the gate's
 * chosen write on waits until the gate's hold resolves (once for all of them, so a wave of
 * parallel writes is held together). Everything else passes straight through.
 */
export function gateWrites(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const send = client.send.bind(client) as (command: unknown, ...rest: unknown[]) => Promise<unknown>;
  (client as { send: unknown }).send = async (command: unknown, ...rest: unknown[]) => {
    const gate = gates.getStore();
    if (gate && WRITES.some((c) => command instanceof c) && ++gate.sent >= gate.from) {
      gate.held ??= gate.hold();
      await gate.held;
    }
    return send(command, ...rest);
  };
  return client;
}

/** Runs `fn` so that its writes through a {@link gateWrites} client wait from the `from`-th on. */
export function withWriteGate<T>(from: number, hold: () => Promise<void>, fn: () => Promise<T>): Promise<T> {
  return gates.run({ from, sent: 0, held: null, hold }, fn);
}

/**
 * Wraps every method of `inner`; the `stall.nth` call of `stall.method` waits for `hold()` at the
 * chosen point. `hold` is called at most once.
 *
 * @example
 * const store = createStallingStore(real, { method: "finishPendingArchive", nth: 1, at: "inside", write: 1 }, () => released);
 */
export function createStallingStore(inner: Store, stall: StoreStall, hold: () => Promise<void>): Store {
  let seen = 0;
  const wrap = (method: StoreMethod) => {
    const call = (inner[method] as (...a: unknown[]) => Promise<unknown>).bind(inner);
    if (method !== stall.method) return call;
    return async (...args: unknown[]): Promise<unknown> => {
      if (++seen !== stall.nth) return call(...args);
      if (stall.at === "before") await hold();
      if (stall.at === "inside") return withWriteGate(stall.write, hold, () => call(...args));
      const result = await call(...args);
      if (stall.at === "after") await hold();
      return result;
    };
  };
  return Object.fromEntries((Object.keys(inner) as StoreMethod[]).map((m) => [m, wrap(m)])) as unknown as Store;
}
