/**
 * Whether a turn's answer keeps the provider's prompt cache (docs/turns.md, "Prompt caching"): a
 * turn is cache-stable when what stands before the cache breakpoint, the static part of the memory
 * block and then the messages before its newest append, is identical to the previous answer's.
 * The recall section stands after the breakpoint and may change. Pure: the benchmark and the tests
 * compare answers they already hold.
 */

/** What a prompt cache keys on in one answer: the static part of the memory block, then the messages in order. */
export interface CacheKey {
  /** The memory block without its dynamic sections: the answer's `context.staticBlock`. */
  memoryStatic: string;
  /** The ids of the answer's messages, oldest first. */
  messageIds: string[];
}

/** The {@link CacheKey} of a turn's answer (`POST .../turns`: `{ context, messages }`). */
export function answerCacheKey(answer: { context: { staticBlock: string }; messages: readonly { id: string }[] }): CacheKey {
  return { memoryStatic: answer.context.staticBlock, messageIds: answer.messages.map((m) => m.id) };
}

/**
 * True when `answer` starts with everything `previous` sent: the same static memory block, and
 * the previous message ids in the same order at its start, so that only appends follow. A trim
 * that moved the cut, a commit (a new summary) or a message that left the middle breaks it.
 *
 * @example isCacheStable({ memoryStatic: "s", messageIds: ["a", "b"] }, { memoryStatic: "s", messageIds: ["a", "b", "c"] }) // true
 */
export function isCacheStable(previous: CacheKey, answer: CacheKey): boolean {
  if (previous.memoryStatic !== answer.memoryStatic) return false;
  if (previous.messageIds.length > answer.messageIds.length) return false;
  return previous.messageIds.every((id, i) => answer.messageIds[i] === id);
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

