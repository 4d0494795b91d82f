/**
 * Prompt-cache stability of a session's answers (docs/benchmarks.md, "Compaction off the turn's
 * critical path"). What an engine puts before its cache breakpoint is the static part of the
 * memory block (docs/turns.md, "The memory block": the summary, without the recall section) and
 * then the answer's messages before its newest append. A turn is cache-stable when that prefix is
 * what the previous answer sent: the same static text, and the previous answer's message ids, in
 * order, at the start of this answer's.
 */

/** What of one answer stands before the cache breakpoint. */
export interface AnswerPrefix {
  staticBlock: string;
  messageIds: readonly string[];
}

/** True when `current` keeps the cached prefix of `previous` (linear in the two id lists). */
export function isCacheStable(previous: AnswerPrefix, current: AnswerPrefix): boolean {
  if (previous.staticBlock !== current.staticBlock) return false;
  if (previous.messageIds.length > current.messageIds.length) return false;
  return previous.messageIds.every((id, i) => current.messageIds[i] === id);
}

/** One turn of a session: was it cache-stable against the previous answer, and does it count. */
export interface StabilitySample {
  stable: boolean;
  /** False for the turns that commit a fold or clear results: a cache miss there is expected. */
  counted: boolean;
}

/** Cache-stable turns among the counted ones (`share` is NaN when none counts). */
export function cacheStableShare(samples: readonly StabilitySample[]): { stable: number; counted: number; share: number } {
  const counted = samples.filter((s) => s.counted);
  const stable = counted.filter((s) => s.stable).length;
  return { stable, counted: counted.length, share: counted.length === 0 ? Number.NaN : stable / counted.length };
}
