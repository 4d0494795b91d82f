/**
 * A turn's `request` in the engine's format (docs/turns.md, "The request in the engine's
 * format"): the part of that provider's request body the service owns, built from the replay.
 * Every active message whose native content is in the requested format is emitted exactly as
 * stored; any other is converted from its text projection, so another provider's reasoning is
 * never sent. Cleared results, missing-result placeholders and the memory block are written in the
 * format. Pure.
 */
import type { Message, ToolCall } from "../model.js";
import type { Json, JsonObject, NativeFormat, ReplayFormat } from "./formats.js";
import { isObject } from "./formats.js";
import { reasoningStripped, resultsAfterCalls, withNewestBreakpoint, withoutReasoning, type ReplayOptions } from "./replay-rules.js";

export type { ReplayOptions } from "./replay-rules.js";

/** The memory block split at its cache breakpoint: the static part, and the dynamic rest (recall). */
export interface ReplayBlock {
  staticBlock: string;
  dynamicBlock: string;
}

type Objects = Record<string, unknown>[];
export type ReplayRequest =
  | { system: Objects; messages: Objects }
  | { input: Objects; prompt_cache_key?: string }
  | { messages: Objects; prompt_cache_key?: string }
  | { contents: Objects; systemInstruction?: Record<string, unknown> }
  | { prompt: Objects };

/** Stands in as the first user message when the replay starts with the assistant (Anthropic requires a user turn first). */
export const CONTINUATION_TEXT = "(The conversation continues; earlier turns are summarized in the system prompt.)";

/** The block split as the context's `staticBlock` marks it. */
export function splitReplayBlock(context: { block: string; staticBlock: string }): ReplayBlock {
  const dynamicBlock = context.block.startsWith(context.staticBlock) ? context.block.slice(context.staticBlock.length).trim() : "";
  return { staticBlock: context.staticBlock, dynamicBlock };
}

/** The message's native content when it is in `format` (the format that is replayed as stored). */
function nativeIn(m: Message, format: NativeFormat): Json[] | undefined {
  return m.native?.format === format ? (m.native.content as Json[]) : undefined;
}

/** Tool-call arguments as the JSON object providers take; text that is not one is wrapped. */
function argumentsObject(args: string): JsonObject {
  try {
    const value = JSON.parse(args) as Json;
    return isObject(value) ? value : { value };
  } catch {
    return args.trim() === "" ? {} : { raw: args };
  }
}

/**
 * Native content with each tool result's output replaced by `text` (a cleared result's
 * placeholder): the rest of every block stays as stored.
 */
function withResultText(format: NativeFormat, content: Json[], text: string): Json[] {
  return content.map((e) => {
    if (!isObject(e)) return e;
    switch (format) {
      case "anthropic":
        return e.type === "tool_result" ? { ...e, content: text } : e;
      case "openai-responses":
        return e.type === "function_call_output" || e.type === "custom_tool_call_output" || e.type === "function_call_result" ? { ...e, output: text } : e;
      case "gemini":
        return isObject(e.functionResponse) ? { ...e, functionResponse: { ...e.functionResponse, response: { result: text } } } : e;
      case "ai-sdk":
        return e.type === "tool-result" ? { ...e, output: { type: "text", value: text } } : e;
    }
  });
}

/** What one message sends in `format`: as stored, as stored with a cleared result's placeholder, or converted. */
function nativeOrNull(m: Message, format: NativeFormat): Json[] | null {
  const content = nativeIn(m, format);
  if (!content) return null;
  return m.cleared ? withResultText(format, content, m.content) : content;
}

const toolNameOf = (messages: readonly Message[]) => {
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
  return (id: string | undefined) => (id !== undefined ? names.get(id) : undefined) ?? "unknown";
};

// ------------------------------------------------------------------------------------ Anthropic

function anthropic(replay: readonly Message[], block: ReplayBlock, options: ReplayOptions = {}): ReplayRequest {
  const messages = resultsAfterCalls(replay);
  const strip = reasoningStripped(messages, "anthropic", options.stripReasoningBefore);
  const system: JsonObject[] = [];
  if (block.staticBlock.trim() !== "") system.push({ type: "text", text: block.staticBlock, cache_control: { type: "ephemeral" } });
  if (block.dynamicBlock !== "") system.push({ type: "text", text: block.dynamicBlock });
  // One request message per stored message, never merged: merging would change the last message
  // when the next one is appended, and the API combines consecutive turns of one role itself
  // (Messages API reference, `messages`). A SYSTEM message stays where it was written, as user
  // text: in `system` it would change what stands before every message.
  const result: JsonObject[] = [];
  const push = (role: "user" | "assistant", content: Json[]) => {
    if (content.length > 0) result.push({ role, content: [...content] });
  };
  for (const m of messages) {
    const native = nativeOrNull(m, "anthropic");
    if (native) {
      push(m.role === "ASSISTANT" ? "assistant" : "user", withoutReasoning(native, m, strip));
      continue;
    }
    switch (m.role) {
      case "SYSTEM":
      case "USER":
        push("user", m.content.trim() === "" ? [] : [{ type: "text", text: m.content }]);
        break;
      case "ASSISTANT":
        push("assistant", [
          ...(m.content.trim() === "" ? [] : [{ type: "text", text: m.content }]),
          ...(m.toolCalls ?? []).map((c: ToolCall) => ({ type: "tool_use", id: c.id, name: c.name, input: argumentsObject(c.arguments) })),
        ]);
        break;
      case "TOOL":
        push("user", [{ type: "tool_result", tool_use_id: m.toolCallId ?? "unknown", ...(m.content !== "" ? { content: m.content } : {}) }]);
        break;
    }
  }
  if (result[0]?.role === "assistant") result.unshift({ role: "user", content: [{ type: "text", text: CONTINUATION_TEXT }] });
  return { system, messages: options.newestBreakpoint === false ? result : withNewestBreakpoint(result) };
}

// ----------------------------------------------------------------------------- OpenAI Responses

function openaiResponses(messages: readonly Message[], block: ReplayBlock, options: ReplayOptions = {}): ReplayRequest {
  const strip = reasoningStripped(messages, "openai-responses", options.stripReasoningBefore);
  const input: JsonObject[] = [];
  const blockItems: JsonObject[] = [block.staticBlock, block.dynamicBlock].filter((t) => t.trim() !== "").map((text) => ({ role: "developer", content: text }));
  // The static part holds until the next fold: the prefix up to it is worth a breakpoint.
  if (options.explicitBreakpoint && block.staticBlock.trim() !== "") {
    blockItems[0] = { role: "developer", content: [{ type: "input_text", text: block.staticBlock, prompt_cache_breakpoint: { mode: "explicit" } }] };
  }
  // First, or right after the turns the fold kept (ReplayOptions.blockAfter) and the results of
  // their calls: never between a call and its output.
  const after = options.blockAfter;
  let blockAt = after === undefined ? 0 : messages.findIndex((m) => m.createdAt >= after);
  if (blockAt < 0) blockAt = messages.length;
  while (after !== undefined && blockAt < messages.length && messages[blockAt]!.role === "TOOL") blockAt++;
  messages.forEach((m, i) => {
    if (i === blockAt) input.push(...blockItems);
    const native = nativeOrNull(m, "openai-responses");
    if (native) {
      input.push(...(withoutReasoning(native, m, strip) as JsonObject[]));
      return;
    }
    switch (m.role) {
      case "SYSTEM":
        input.push({ role: "developer", content: m.content });
        break;
      case "USER":
        input.push({ role: "user", content: m.content });
        break;
      case "ASSISTANT":
        if (m.content !== "") input.push({ role: "assistant", content: m.content });
        for (const c of m.toolCalls ?? []) input.push({ type: "function_call", call_id: c.id, name: c.name, arguments: c.arguments });
        break;
      case "TOOL":
        input.push({ type: "function_call_output", call_id: m.toolCallId ?? "unknown", output: m.content });
        break;
    }
  });
  if (blockAt === messages.length) input.push(...blockItems);
  return { input, ...(options.cacheKey ? { prompt_cache_key: options.cacheKey } : {}) };
}

// ------------------------------------------------------------------------- OpenAI Chat Completions

function openaiChat(messages: readonly Message[], block: ReplayBlock, options: ReplayOptions = {}): ReplayRequest {
  const out: JsonObject[] = [];
  const head = [block.staticBlock, block.dynamicBlock].filter((t) => t.trim() !== "").join("\n\n");
  if (head) out.push({ role: "system", content: head });
  const callIds = new Set<string>();
  for (const m of messages) {
    switch (m.role) {
      case "SYSTEM":
        out.push({ role: "system", content: m.content });
        break;
      case "USER":
        out.push({ role: "user", content: m.content });
        break;
      case "ASSISTANT": {
        const calls = m.toolCalls ?? [];
        for (const c of calls) callIds.add(c.id);
        out.push(
          calls.length > 0
            ? {
                role: "assistant",
                content: m.content === "" ? null : m.content,
                tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
              }
            : { role: "assistant", content: m.content },
        );
        break;
      }
      case "TOOL":
        // Chat Completions refuses a tool message whose call it has not seen: such a result is text.
        if (m.toolCallId !== undefined && callIds.has(m.toolCallId)) out.push({ role: "tool", tool_call_id: m.toolCallId, content: m.content });
        else out.push({ role: "user", content: `[tool result${m.toolCallId ? ` for call ${m.toolCallId}` : ""}]\n${m.content}` });
        break;
    }
  }
  return { messages: out, ...(options.cacheKey ? { prompt_cache_key: options.cacheKey } : {}) };
}

// -------------------------------------------------------------------------------------- Gemini

function gemini(messages: readonly Message[], block: ReplayBlock): ReplayRequest {
  const contents: JsonObject[] = [];
  const nameOf = toolNameOf(messages);
  const system = [block.staticBlock, block.dynamicBlock].filter((t) => t.trim() !== "");
  for (const m of messages) {
    const role = m.role === "ASSISTANT" ? "model" : "user";
    const native = nativeOrNull(m, "gemini");
    if (native) {
      contents.push({ role, parts: native });
      continue;
    }
    switch (m.role) {
      case "SYSTEM": // where it was written: in systemInstruction it would change every turn's prefix
      case "USER":
        contents.push({ role: "user", parts: [{ text: m.content }] });
        break;
      case "ASSISTANT":
        contents.push({
          role: "model",
          parts: [
            ...(m.content !== "" ? [{ text: m.content }] : []),
            ...(m.toolCalls ?? []).map((c) => ({ functionCall: { id: c.id, name: c.name, args: argumentsObject(c.arguments) } })),
          ],
        });
        break;
      case "TOOL":
        contents.push({
          role: "user",
          parts: [{ functionResponse: { id: m.toolCallId ?? "unknown", name: nameOf(m.toolCallId), response: { result: m.content } } }],
        });
        break;
    }
  }
  return { contents, ...(system.length > 0 ? { systemInstruction: { parts: system.map((text) => ({ text })) } } : {}) };
}

// -------------------------------------------------------------------------------------- AI SDK

function aiSdk(messages: readonly Message[], block: ReplayBlock): ReplayRequest {
  const prompt: JsonObject[] = [];
  if (block.staticBlock.trim() !== "") {
    prompt.push({ role: "system", content: block.staticBlock, providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } });
  }
  if (block.dynamicBlock !== "") prompt.push({ role: "system", content: block.dynamicBlock });
  const nameOf = toolNameOf(messages);
  const stored = new WeakSet<JsonObject>();
  for (const m of messages) {
    const native = nativeOrNull(m, "ai-sdk");
    if (native) {
      const message: JsonObject = { role: m.role === "ASSISTANT" ? "assistant" : m.role === "TOOL" ? "tool" : "user", content: native };
      stored.add(message);
      prompt.push(message);
      continue;
    }
    switch (m.role) {
      case "SYSTEM":
        prompt.push({ role: "system", content: m.content });
        break;
      case "USER":
        prompt.push({ role: "user", content: [{ type: "text", text: m.content }] });
        break;
      case "ASSISTANT":
        prompt.push({
          role: "assistant",
          content: [
            ...(m.content !== "" ? [{ type: "text", text: m.content }] : []),
            ...(m.toolCalls ?? []).map((c) => ({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: argumentsObject(c.arguments) })),
          ],
        });
        break;
      case "TOOL": {
        const part = { type: "tool-result", toolCallId: m.toolCallId ?? "unknown", toolName: nameOf(m.toolCallId), output: { type: "text", value: m.content } };
        // Results of one step go in one tool message, as the SDK builds them.
        const prev = prompt[prompt.length - 1];
        if (prev?.role === "tool" && !stored.has(prev)) (prev.content as Json[]).push(part);
        else prompt.push({ role: "tool", content: [part] });
        break;
      }
    }
  }
  return { prompt };
}

const BUILDERS: Record<ReplayFormat, (messages: readonly Message[], block: ReplayBlock, options?: ReplayOptions) => ReplayRequest> = {
  anthropic,
  "openai-responses": openaiResponses,
  "openai-chat": openaiChat,
  gemini,
  "ai-sdk": aiSdk,
};

/**
 * The request for `format` from the replay (`replayMessages`, native content put back) and the
 * memory block.
 *
 * @example replayRequest("anthropic", replay, splitReplayBlock(context)) // { system: [...], messages: [...] }
 */
export function replayRequest(format: ReplayFormat, messages: readonly Message[], block: ReplayBlock, options: ReplayOptions = {}): ReplayRequest {
  return BUILDERS[format](messages, block, options);
}
