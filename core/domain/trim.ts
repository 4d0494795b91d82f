/**
 * Trimming a turn's answer while its fold is still queued (docs/compaction.md, "What a turn does
 * (background mode)", step 5): the answer, never the stored history, leaves out the oldest
 * messages that an EMERGENCY fold could take (never pinned ones, never the triggering turn or the
 * anchor, tool groups whole) until the prompt is below the emergency threshold, freeing whole
 * blocks so that the cut stays put while the prompt grows.
 */
import type { Message } from "./model.js";
import { foldOldestUntil, selectForCompaction, type SelectorTunables } from "./selector.js";
import type { Tunables } from "./tunables.js";
import type { FoldUnit } from "./tool-groups.js";

export interface Trim {
  /** The messages to answer with, oldest first. */
  kept: Message[];
  /**
   * What was left out: messages, and their tokens in the caller's unit; with any left out, the
   * oldest and the newest of them (pinned messages and whole tool groups may sit between, kept).
   */
  trimmed: { messages: number; tokens: number; fromMessageId?: string; toMessageId?: string };
  /** The answer's prompt in the caller's unit: what recall may add to stays measured on this. */
  tokens: number;
}

/** The largest prompt a trimmed answer may have, in the caller's unit: just below the emergency threshold. */
export function trimLimit(tunables: Pick<Tunables, "emergencyThreshold">, contextWindow: number): number {
  return Math.ceil(tunables.emergencyThreshold * contextWindow) - 1;
}

/**
 * How much a trim frees at a time, in the caller's unit: the band between the hard and the
 * emergency thresholds (docs/compaction.md, step 5). Rounding what must be freed up to whole bands
 * keeps the same oldest messages out while the prompt grows across one band, so the start of the
 * message list, and with it the provider's prompt cache, changes once per band rather than on
 * every turn; and the answer lands between the two thresholds, where a HARD fold is due anyway,
 * never lower than one band below the emergency threshold.
 */
export function trimBlock(tunables: Pick<Tunables, "hardThreshold" | "emergencyThreshold">, contextWindow: number): number {
  return Math.max(1, Math.round((tunables.emergencyThreshold - tunables.hardThreshold) * contextWindow));
}

/**
 * @param tokens the prompt size in the caller's unit
 * @param limit the largest prompt allowed, in the caller's unit (below the emergency threshold)
 * @param scale caller tokens per token of our own estimate (`tokens / replay estimate`)
 * @param own our own estimate of the whole replay (summary block included)
 * @param block free whole multiples of this many caller tokens when the candidates hold them
 *   ({@link trimBlock}); absent or 0: exactly what the limit needs
 * @param unit what a cut may not split, by the model's fold rules (docs/turns.md, "What a fold may
 *   keep"): a Gemini answer that began inside a turn would start with a function call
 */
export function trimToFit(
  messages: Message[],
  tunables: SelectorTunables,
  o: { tokens: number; limit: number; scale: number; own: number; block?: number; unit?: FoldUnit },
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
  const candidates = selectForCompaction(messages, "EMERGENCY", { ...tunables, keepRecent: 0 }, o.unit).fold;
  if (candidates.length === 0) return untrimmed;
  const needed = tokens - o.limit;
  const block = o.block ?? 0;
  const rounded = block > 0 ? Math.ceil(needed / block) * block : needed;
  // Whole blocks only when the candidates hold them: otherwise taking them all would move the cut
  // with every new candidate anyway, so the answer keeps what it can.
  const available = candidates.reduce((n, m) => n + m.tokens, 0);
  const ownToFree = Math.ceil((Math.ceil(rounded / perOwn) <= available ? rounded : needed) / perOwn);
  const taken = foldOldestUntil(candidates, ownToFree, o.unit);
  const left = new Set(taken.map((m) => m.id));
  const freed = Math.ceil(taken.reduce((n, m) => n + m.tokens, 0) * perOwn);
  const out = messages.filter((m) => left.has(m.id));
  return {
    kept: messages.filter((m) => !left.has(m.id)),
    trimmed: { messages: left.size, tokens: freed, fromMessageId: out[0]!.id, toMessageId: out[out.length - 1]!.id },
    tokens: tokens - freed,
  };
}
