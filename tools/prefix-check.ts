/**
 * Whether a turn's prompt starts with the previous turn's (docs/turns.md, "Append-only between
 * folds"), judged on the two requests themselves: the oracle the tests, the chaos harness and the
 * benchmark hold the service's `prefix` answer to. Pure, and shares no code with the service's mark.
 */
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

/**
 * A request as a prompt cache reads it, front to back: each member but the growing list (sorted by
 * key, each with its name), then each element of the growing list, as JSON without `cache_control`.
 * Two requests share a cached prefix as far as their segments are equal.
 */
export function requestSegments(request: Record<string, unknown>): string[] {
  const growing = GROWING.find((k) => Array.isArray(request[k]));
  const fixed = Object.keys(request)
    .filter((k) => k !== growing && request[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${sentJson(request[k])}`);
  return growing ? [...fixed, ...(request[growing] as unknown[]).map(sentJson)] : fixed;
}

/** JSON as sent, `cache_control` left out: a cache compares bytes, so key order counts here (and the native serializer keeps a long session's replay fast). */
const sentJson = (value: unknown): string => JSON.stringify(value, (k, v: unknown) => (k === "cache_control" ? undefined : v)) ?? "null";

/**
 * How much of `now` an emulated prompt cache holding `previous` would read: the characters of the
 * leading segments both share (a segment that differs, and everything after it, is written anew),
 * and the characters of `now` in all. A changed segment is not read in part: caches match whole blocks.
 *
 * @example sharedPrefix(["s", "a"], ["s", "a", "b"]) // { read: 2, total: 3, kept: true }
 */
export function sharedPrefix(previous: readonly string[], now: readonly string[]): { read: number; total: number; kept: boolean } {
  let read = 0;
  let i = 0;
  for (; i < previous.length && i < now.length && previous[i] === now[i]; i++) read += now[i]!.length;
  let total = read;
  for (let j = i; j < now.length; j++) total += now[j]!.length;
  return { read, total, kept: i === previous.length };
}
