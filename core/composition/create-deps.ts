/**
 * The composition root of every function that may fold (and of the local runner, the tests and the
 * benchmarks): the dependencies of base-deps.ts plus the offline summarizer an EMERGENCY fold falls
 * back to when its summarizer keeps failing (docs/summarizers.md, "Quality gate").
 */
import { createOfflineSummarizer } from "../adapters/llm/offline-summarizer.js";
import type { ServiceDeps } from "../services/deps.js";
import { createDynamoStore } from "../adapters/dynamodb/store.js";
import { createBaseDeps, type RootOptions } from "./base-deps.js";

export type { RootOptions };

/**
 * @example
 * // A Lambda entry: everything from the environment.
 * const deps = createDeps();
 * // A test: a given store and a quiet log, no event bus.
 * const deps = createDeps({ env: {}, store, log: silentLog, events: { publish: async () => {} } });
 * await runTurn(deps, { tenantId: "t1", processId: "p1" }, { model: { contextWindow: 128_000 } });
 */
export function createDeps(options: RootOptions = {}): ServiceDeps {
  return { ...createBaseDeps({ createStore: createDynamoStore, ...options }), offlineSummarizer: (maxOutputTokens) => createOfflineSummarizer({ maxOutputTokens }) };
}
