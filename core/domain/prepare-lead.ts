/**
 * When a background fold is queued (docs/compaction.md, "Off the turn's critical path", "When a
 * fold is prepared"): early enough that the worker has it PREPARED before the prompt reaches the
 * threshold that commits it. From what the turn already read: how fast the replay grew (the
 * messages appended recently, their `createdAt` and tokens) and how long a fold took from queued to
 * prepared (the active summary's metadata). Pure: no read, no write.
 */
import type { Memory, Message } from "./model.js";

/** The prepare latency assumed while nothing was measured yet (no prepared or inline summary so far). */
export const DEFAULT_PREPARE_MS = 10_000;

/** Half again the measured latency: the queue's jitter, and the turn that finds the fold due before the worker commits it. */
export const PREPARE_MARGIN = 1.5;

/** How far back the growth is measured: long enough to smooth an engine's pauses, short enough to follow its pace. */
export const GROWTH_WINDOW_MS = 60_000;

/**
 * How many of the newest messages the growth is measured on: they are active whatever was folded
 * (the anchor and `keepRecent` keep them), so a fold that archived older ones cannot make the
 * process look slower than it is.
 */
export const GROWTH_SAMPLE = 10;

/**
 * Our tokens appended per millisecond: over the newest {@link GROWTH_SAMPLE} messages within the
 * last {@link GROWTH_WINDOW_MS}, the tokens of those after the oldest of them, over the time since
 * it. 0 with fewer than two such messages. Reads only those messages, from the newest.
 *
 * @param messages active messages, oldest first
 */
export function growthPerMs(messages: readonly Pick<Message, "createdAt" | "tokens">[], now: number, windowMs = GROWTH_WINDOW_MS): number {
  const since = now - windowMs;
  let tokens = 0;
  let oldest: number | null = null;
  for (let i = messages.length - 1; i >= 0 && i >= messages.length - GROWTH_SAMPLE; i--) {
    const at = Date.parse(messages[i]!.createdAt);
    if (!(at >= since)) break;
    if (oldest !== null) tokens += messages[i + 1]!.tokens;
    oldest = at;
  }
  if (oldest === null) return 0;
  const span = now - oldest;
  return span > 0 ? tokens / span : 0;
}

/**
 * How long the last fold took from queued to prepared (`preparedAt - queuedAt` of a summary the
 * worker prepared), or the summarizer's wall time of one a turn or the worker summarized itself;
 * {@link DEFAULT_PREPARE_MS} when the summary records neither (or there is none yet).
 */
export function observedPrepareMs(summary: Pick<Memory, "metadata"> | null | undefined): number {
  const m = summary?.metadata;
  if (m?.queuedAt && m.preparedAt) {
    const ms = Date.parse(m.preparedAt) - Date.parse(m.queuedAt);
    if (Number.isFinite(ms) && ms >= 0) return ms;
  }
  if (m?.summarizerMs !== undefined && m.summarizerMs >= 0) return m.summarizerMs;
  return DEFAULT_PREPARE_MS;
}

/**
 * The share of the window the prompt is expected to grow by while a fold is prepared: the growth
 * rate times the prepare latency (with {@link PREPARE_MARGIN}), in the caller's units (`scale`:
 * caller tokens per token of ours).
 */
export function prepareLead(o: { growthPerMs: number; prepareMs: number; scale: number; contextWindow: number }): number {
  if (!(o.contextWindow > 0)) return 0;
  const lead = (o.growthPerMs * o.prepareMs * PREPARE_MARGIN * o.scale) / o.contextWindow;
  return Number.isFinite(lead) && lead > 0 ? lead : 0;
}
