/**
 * `GET /context`: the memory block of a process as a turn would replay it, after rolling any
 * pending archive forward (docs/api.md). A read: it never compacts.
 */
import type { ProcessKey } from "../ports/store.js";
import { settledView } from "./settle.js";
import { composeContext, type ComposedContext } from "./context.js";
import type { ServiceDeps } from "./deps.js";

export async function getContext(deps: ServiceDeps, key: ProcessKey, query?: string): Promise<ComposedContext> {
  return composeContext(deps, key, await settledView(deps, key), { query });
}
