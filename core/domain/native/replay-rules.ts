/**
 * What a turn's `request` does to the replay besides converting it (docs/turns.md, "What a fold
 * may keep" and "Prompt caching"): the per-model fold rules on reasoning, the cache breakpoint on
 * the newest Anthropic message, and each call's results right after it. Pure.
 */
import type { Message } from "../model.js";
import { toolGroups } from "../tool-groups.js";
import type { Json, JsonObject, NativeFormat } from "./formats.js";
import { isObject } from "./formats.js";

/** How the request treats turns a fold kept (core/domain/model-windows.ts, `foldRulesFor`). */
export interface ReplayOptions {
  /**
   * Leave out the thinking blocks (Anthropic) and reasoning items (OpenAI Responses) of assistant
   * turns created before this time (when the first turn at the replay epoch began: they answered
   * a prompt the epoch's fold or undo has changed since); in the Anthropic format not
   * the newest of them when it calls tools, since an unfinished tool loop's assistant turn must come
   * back with its thinking (docs/turns.md, "What a fold may keep").
   */
  stripReasoningBefore?: string;
  /**
   * In the `openai-responses` format, the memory block goes after the messages created before this
   * time (the turns the epoch's fold kept) instead of first: a custom compaction appended rather
   * than inserted before recent turns ("Use custom compaction",
   * https://developers.openai.com/api/docs/guides/keep-prefix-unchanged; docs/turns.md, "What a
   * fold may keep").
   */
  blockAfter?: string;
  /** OpenAI's `prompt_cache_key`: one per process, so its requests reach the same cache (docs/turns.md, "Prompt caching"). */
  cacheKey?: string;
  /**
   * In the `openai-responses` format, an explicit `prompt_cache_breakpoint` on the memory block's
   * static part, which holds until the next fold (docs/turns.md, "Prompt caching").
   */
  explicitBreakpoint?: boolean;
  /** false: no cache breakpoint on the newest message (a provider fold's request sends the turns as stored). */
  newestBreakpoint?: boolean;
}

const EPHEMERAL = { type: "ephemeral" };

/**
 * The newest message with a cache breakpoint on its last block that can carry one (not a thinking
 * block, not empty text): the next request reads everything up to it from the cache. Only the
 * request's copy is marked; the stored content is not.
 */
export function withNewestBreakpoint(messages: JsonObject[]): JsonObject[] {
  const last = messages[messages.length - 1];
  const content = last?.content;
  if (!last || !Array.isArray(content)) return messages;
  for (let j = content.length - 1; j >= 0; j--) {
    const b = content[j];
    if (!isObject(b) || isReasoning(b) || (b.type === "text" && b.text === "")) continue;
    const marked = [...content.slice(0, j), { ...b, cache_control: EPHEMERAL }, ...content.slice(j + 1)];
    return [...messages.slice(0, -1), { ...last, content: marked }];
  }
  return messages;
}

/** Whether an element of native content is reasoning the fold rules may leave out. */
export const isReasoning = (b: Json) => isObject(b) && (b.type === "thinking" || b.type === "redacted_thinking" || b.type === "reasoning");

/**
 * The unfinished tool loop's turn a fold kept (docs/turns.md, "What a fold may keep"): in the
 * Anthropic format, the newest assistant turn created before `before` when it calls tools. It
 * goes with its thinking, which the loop needs; the fold was cut before it, never between it and
 * its results (tool groups fold whole).
 */
export function openLoopTurn(messages: readonly Message[], format: NativeFormat, before: string | undefined): Message | undefined {
  if (!before || format !== "anthropic") return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "ASSISTANT" && m.createdAt < before && m.native?.format === format) return (m.toolCalls?.length ?? 0) > 0 ? m : undefined;
  }
  return undefined;
}

/** The assistant messages in `format` whose reasoning {@link ReplayOptions.stripReasoningBefore} leaves out: all but {@link openLoopTurn}. */
export function reasoningStripped(messages: readonly Message[], format: NativeFormat, before: string | undefined): Set<string> {
  const out = new Set<string>();
  if (!before) return out;
  const open = openLoopTurn(messages, format, before);
  for (const m of messages) if (m.role === "ASSISTANT" && m.createdAt < before && m.native?.format === format && m !== open) out.add(m.id);
  return out;
}

/** The native content of `m` as sent: without its reasoning when the fold rules leave it out. */
export const withoutReasoning = (native: Json[], m: Message, strip: ReadonlySet<string>) => (strip.has(m.id) ? native.filter((b) => !isReasoning(b)) : native);

/**
 * The replay with each call's results (placeholders included) right after the call: the API
 * combines consecutive user messages into one turn and wants a turn's tool results first, so a
 * user message written between a call and its result goes after the result. A history in order
 * comes back as it is.
 */
export function resultsAfterCalls(messages: readonly Message[]): Message[] {
  const { group } = toolGroups(messages);
  const results = new Map<number, Message[]>();
  messages.forEach((m, i) => {
    const owner = group[i]!;
    if (owner !== i) results.set(owner, [...(results.get(owner) ?? []), m]);
  });
  return messages.flatMap((m, i) => (group[i] === i ? [m, ...(results.get(i) ?? [])] : []));
}

