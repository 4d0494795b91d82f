/**
 * Trimming a turn's answer while its fold is still queued (docs/compaction.md, "Off the turn's
 * critical path"): the answer, never the stored history, leaves out the oldest messages that an
 * EMERGENCY fold could take (never pinned ones, never the triggering turn, tool groups whole) until
 * the prompt is below the emergency threshold.
 */
import type { Message } from "./model.js";
import { foldOldestUntil, selectForCompaction, type SelectorTunables } from "./selector.js";

export interface Trim {
  /** The messages to answer with, oldest first. */
  kept: Message[];
  /** What was left out: messages, and their tokens in the caller's unit. */
  trimmed: { messages: number; tokens: number };
  /** The answer's prompt in the caller's unit: what recall may add to stays measured on this. */
  tokens: number;
}

/**
 * @param tokens the prompt size in the caller's unit
 * @param limit the largest prompt allowed, in the caller's unit (below the emergency threshold)
 * @param scale caller tokens per token of our own estimate (`tokens / replay estimate`)
 * @param own our own estimate of the whole replay (summary block included)
 */
export function trimToFit(
  messages: Message[],
  tunables: SelectorTunables,
  o: { tokens: number; limit: number; scale: number; own: number },
): Trim {
  // An engine that follows the answers holds what the last turn returned, so while a fold is queued
  // its prompt can leave out messages trimmed before: measured against the whole view, that prompt
  // would make our tokens look cheaper than they are, and the answer would grow past the limit turn
  // after turn. So an own token never counts for less than one of the caller's, and the prompt is at
  // least the whole view at that rate.
  const perOwn = Math.max(o.scale, 1);
  const tokens = Math.max(o.tokens, Math.ceil(o.own * perOwn));
  const untrimmed = { kept: messages, trimmed: { messages: 0, tokens: 0 }, tokens };
  if (tokens <= o.limit) return untrimmed;
  // keepRecent does not apply: a prompt that overflows the window is worse than a short answer.
  const candidates = selectForCompaction(messages, "EMERGENCY", { ...tunables, keepRecent: 0 }).fold;
  if (candidates.length === 0) return untrimmed;
  const ownToFree = Math.ceil((tokens - o.limit) / perOwn);
  const left = new Set(foldOldestUntil(candidates, ownToFree).map((m) => m.id));
  const freed = Math.ceil(messages.reduce((n, m) => n + (left.has(m.id) ? m.tokens : 0), 0) * perOwn);
  return {
    kept: messages.filter((m) => !left.has(m.id)),
    trimmed: { messages: left.size, tokens: freed },
    tokens: tokens - freed,
  };
}
