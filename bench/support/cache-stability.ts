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

/** The key of the one list a request of each format grows by (docs/turns.md, "Append-only between folds"). */
const GROWING = ["messages", "input", "contents", "prompt"] as const;

/** JSON with object keys sorted and `cache_control` left out: a breakpoint marks where to cache, it is not content. */
function contentJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(contentJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([k, v]) => v !== undefined && k !== "cache_control")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${contentJson(v)}`).join(",")}}`;
}

/**
 * Where `now` first differs from `previous`, or null when `now` starts with `previous`: every
 * member but the growing list (`messages`, `input`, `contents`, `prompt`) equal, and the previous
 * list the start of the new one, element for element (JSON-equal, key order and `cache_control`
 * aside). Works on a turn's `request` in every format and on `{ block, messages }` of the plain answer.
 *
 * @example requestBreak({ system: [], messages: [a] }, { system: [], messages: [a, b] }) // null
 */
export function requestBreak(previous: Record<string, unknown>, now: Record<string, unknown>): string | null {
  for (const key of new Set([...Object.keys(previous), ...Object.keys(now)])) {
    const a = previous[key];
    const b = now[key];
    if ((GROWING as readonly string[]).includes(key) && Array.isArray(a) && Array.isArray(b)) {
      if (a.length > b.length) return `${key}: ${a.length} elements before, ${b.length} now`;
      const i = a.findIndex((e, n) => contentJson(e) !== contentJson(b[n]));
      if (i >= 0) return `${key}.${i} changed`;
    } else if (contentJson(a) !== contentJson(b)) {
      return `${key} changed`;
    }
  }
  return null;
}

/** What an engine sends from a plain answer (no `format`): the block and each message's role, text, tool calls and native content. */
export function plainPrompt(answer: {
  context: { block: string };
  messages: ReadonlyArray<{ role: string; content: string; toolCalls?: unknown; toolCallId?: string | undefined; native?: unknown }>;
}): Record<string, unknown> {
  return {
    block: answer.context.block,
    messages: answer.messages.map((m) => ({ role: m.role, content: m.content, toolCalls: m.toolCalls, toolCallId: m.toolCallId, native: m.native })),
  };
}
