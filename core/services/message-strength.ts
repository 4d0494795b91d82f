/** `PATCH` of one message's strength, on the settled active view (docs/api.md). */
import type { Message } from "../domain/model.js";
import type { Strength } from "../domain/strength.js";
import type { ProcessKey } from "../ports/store.js";
import { settledView } from "./settle.js";
import type { ServiceDeps } from "./deps.js";
import { setMessageStrength } from "./messages.js";

export function changeMessageStrength(deps: ServiceDeps, key: ProcessKey, messageId: string, strength: Strength | null): Promise<Message> {
  return setMessageStrength(deps, key, messageId, strength, (k) => settledView(deps, k));
}
