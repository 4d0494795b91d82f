// @ts-check
// What the page shows of a compaction, read from the fields the API gives (docs/api.md): the page
// computes no token counts of its own and recognises range markers by the id their compaction
// recorded (metadata.markerMessageId), not by the shape of an id.
import { fmt } from "./dom.js";

/**
 * @typedef {import("../client/types.js").Message} Message
 * @typedef {import("../client/types.js").Memory} Memory
 * @typedef {import("./state.js").View} View
 */

/** @param {string[]} ids */
export const maxId = (ids) => ids.reduce((a, b) => (b > a ? b : a), "");

/** The message's strength as stored (the service stores the canonical `STRENGTH:` spelling only). @param {Message} m */
export const strengthOf = (m) => m.tags.find((t) => t.startsWith("STRENGTH:"))?.slice(9) ?? null;

/** Queued, prepared and discarded folds of the background worker (docs/compaction.md): never replayed. @param {Memory} m */
export const isBackgroundFold = (m) => m.status === "QUEUED" || m.status === "PREPARED" || m.status === "DISCARDED";

/**
 * The newest active OK summary: the one the replay carries.
 * @param {View} v
 * @returns {Memory | null}
 */
export function activeSummary(v) {
  return v.memories
    .filter((m) => m.status === "OK" && m.supersededAt === null)
    .reduce((/** @type {Memory | null} */ a, b) => (!a || b.id > a.id ? b : a), null);
}

/** The range compaction whose marker `m` is, if it is one. @param {View} v @param {Message} m */
export const rangeOf = (v, m) => v.markers.get(m.id) ?? null;

/** @param {Memory} memory */
export function modeOf(memory) {
  return memory.metadata.mode ?? (memory.metadata.recompaction ? "RANGE" : "?");
}

/**
 * "12,000 → 3,400 tokens": the prompt before and after the fold, as the service recorded them at
 * commit time (the caller's units). Null when the row has no "before" (a failed fold).
 * @param {Memory} memory
 */
export function beforeAfterText(memory) {
  const { tokensBefore: before, tokensAfter: after } = memory.metadata;
  if (typeof before !== "number") return null;
  return `${fmt(before)} → ${typeof after === "number" ? fmt(after) : "…"} tokens`;
}
