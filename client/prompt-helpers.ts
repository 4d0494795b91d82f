/**
 * Turns a `Turn` (memory block + active messages) into the request shapes of the OpenAI Chat
 * Completions, OpenAI Responses, Anthropic Messages and Gemini APIs, with the memory block placed
 * for prompt caching. A message whose native content is in the helper's format is sent exactly as
 * stored; any other is converted from its text, so another provider's reasoning is never sent.
 * Plain types only: no dependency on any SDK (their request types accept these shapes).
 */
import type { Message, NativeFormat, ToolCall, Turn } from "./types.js";

/** What the helpers read of a turn; `getContext` + `listMessages(view=active)` give the same. */
export type TurnLike = Pick<Turn, "context" | "messages">;

export interface PromptOptions {
  /** The engine's own system prompt; it goes first, before the memory block. */
  system?: string;
  /**
   * Where the recall section (`## Recalled From History`, the block's dynamic part) goes.
   * `"system"` (default): in the system prompt, after the static part. `"message"`: a user
   * message of its own right before the newest user message (first in the conversation when there
   * is none), so that recalled text, quoted as data in the block, does not speak with the system
   * role's authority. The static part stays in the system prompt either way.
   */
  recall?: "system" | "message";
}

/**
 * The block's static part (before the prompt-cache breakpoint) and its dynamic rest (the recall
 * section).
 */
export function splitBlock(context: TurnLike["context"]): { staticBlock: string; dynamicBlock: string } {
  const { block, staticBlock } = context;
  const dynamicBlock = block.startsWith(staticBlock) ? block.slice(staticBlock.length).trim() : "";
  return { staticBlock, dynamicBlock };
}

/** The newest USER message, before which `recall: "message"` puts the recall section. */
function newestUserMessage(messages: readonly Message[]): Message | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "USER") return messages[i];
  return undefined;
}

// ------------------------------------------------------------------------------------- OpenAI

export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type OpenAIChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: OpenAIToolCall[] }
  | { role: "tool"; content: string; tool_call_id: string };

/**
 * One system message (the engine's system prompt, then the memory block), then the active
 * messages in order. OpenAI caches the longest previously seen prefix automatically, and that
 * prefix stays byte-identical until the next compaction because the block comes first. With
 * `recall: "message"` the recall section is a user message before the newest user message instead.
 *
 * Each ASSISTANT message with tool calls is followed by exactly one `tool` message per call id:
 * its result wherever it sits in the history, or a placeholder when it has none. A TOOL message
 * whose call is not in the list (no `toolCallId`, or its ASSISTANT call is gone) becomes a user
 * message that says it is a tool result: OpenAI rejects such tool messages.
 *
 * @example
 * const completion = await openai.chat.completions.create({
 *   model: "gpt-4o",
 *   messages: toOpenAIMessages(turn, { system: "You are Frankie, a coding agent." }),
 * });
 */
export function toOpenAIMessages(turn: TurnLike, options: PromptOptions = {}): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  const { staticBlock, dynamicBlock } = splitBlock(turn.context);
  const recallAsMessage = options.recall === "message" && dynamicBlock !== "";
  const block = recallAsMessage ? staticBlock : turn.context.block;
  const head = [options.system, block].filter((s): s is string => !!s && s.trim() !== "").join("\n\n");
  if (head) out.push({ role: "system", content: head });
  const beforeUser = recallAsMessage ? newestUserMessage(turn.messages) : undefined;
  if (recallAsMessage && !beforeUser) out.push({ role: "user", content: dynamicBlock });
  for (const { message: m, answers } of pairToolResults(turn.messages)) {
    switch (m.role) {
      case "SYSTEM":
        out.push({ role: "system", content: m.content });
        break;
      case "USER":
        if (m === beforeUser) out.push({ role: "user", content: dynamicBlock });
        out.push({ role: "user", content: m.content });
        break;
      case "ASSISTANT": {
        const calls = uniqueCalls(m);
        if (calls.length > 0) {
          out.push({
            role: "assistant",
            content: m.content === "" ? null : m.content,
            tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
          });
          for (const a of answers ?? []) out.push({ role: "tool", content: a.content, tool_call_id: a.toolCallId });
        } else {
          out.push({ role: "assistant", content: m.content });
        }
        break;
      }
      case "TOOL":
        // Only results whose call is not in the list get here: OpenAI rejects such tool messages.
        out.push({ role: "user", content: orphanToolResult(m) });
        break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------- Anthropic

export interface AnthropicCacheControl {
  type: "ephemeral";
}

export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string;
  cache_control?: AnthropicCacheControl;
}

/**
 * The blocks the helper writes. A message's native content (thinking with its signature,
 * redacted_thinking, images, server tools, …) is passed on as stored, under this type so that the
 * SDK's request types accept the request: they accept those blocks too.
 */
export type AnthropicContentBlock = AnthropicTextBlock | AnthropicToolUseBlock | AnthropicToolResultBlock;

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicContentBlock[];
}

export interface AnthropicRequest {
  system: AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

export interface AnthropicOptions extends PromptOptions {
  /**
   * Also put a breakpoint on the last block of the last message, so the next turn reads the whole
   * conversation so far from the cache (Anthropic allows four breakpoints). Default false.
   */
  cacheConversation?: boolean;
}

/** Stands in as the first user message when the active view starts with the assistant. */
export const CONTINUATION_TEXT = "(The conversation continues; earlier turns are summarized in the system prompt.)";

/**
 * `system`: the engine's system prompt and the static part of the memory block, the last of them
 * carrying `cache_control: { type: "ephemeral" }`; after the breakpoint, the dynamic part of the
 * block and the chat's SYSTEM messages. `messages`: USER and ASSISTANT text, ASSISTANT tool calls
 * as `tool_use` blocks, each answered by a `tool_result` block in the very next user message
 * (its result wherever it sits in the history, or a placeholder when it has none); consecutive
 * messages of one role are merged (Anthropic requires alternation, tool results first in a user
 * message), and a conversation that starts with the assistant gets {@link CONTINUATION_TEXT}.
 * With `recall: "message"` the dynamic part opens the user message of the newest user turn
 * instead of following the breakpoint in `system`.
 *
 * @example
 * const { system, messages } = toAnthropicRequest(turn, { system: "You are Arthur." });
 * const reply = await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, system, messages });
 */
export function toAnthropicRequest(turn: TurnLike, options: AnthropicOptions = {}): AnthropicRequest {
  const { staticBlock, dynamicBlock } = splitBlock(turn.context);
  const recallAsMessage = options.recall === "message" && dynamicBlock !== "";

  const system: AnthropicTextBlock[] = [];
  for (const text of [options.system, staticBlock]) if (text && text.trim() !== "") system.push({ type: "text", text });
  const last = system[system.length - 1];
  if (last) last.cache_control = { type: "ephemeral" };
  if (dynamicBlock && !recallAsMessage) system.push({ type: "text", text: dynamicBlock });

  // A native message is sent whole, never merged with a neighbour (the API joins consecutive turns itself).
  const out: Array<{ message: AnthropicMessage; native: boolean }> = [];
  const push = (role: AnthropicMessage["role"], blocks: AnthropicContentBlock[], native = false) => {
    if (blocks.length === 0) return;
    const prev = out[out.length - 1];
    if (!native && prev && !prev.native && prev.message.role === role) prev.message.content.push(...blocks);
    else out.push({ message: { role, content: [...blocks] }, native });
  };
  const beforeUser = recallAsMessage ? newestUserMessage(turn.messages) : undefined;
  const recall: AnthropicTextBlock[] = recallAsMessage ? [{ type: "text", text: dynamicBlock }] : [];
  if (recallAsMessage && !beforeUser) push("user", recall);
  for (const { message: m, answers } of pairToolResults(turn.messages)) {
    const native = nativeOf(m, "anthropic") as AnthropicContentBlock[] | undefined;
    if (native && m.role !== "SYSTEM") {
      if (m === beforeUser) push("user", recall);
      push(m.role === "ASSISTANT" ? "assistant" : "user", native, true);
    } else {
      switch (m.role) {
        case "SYSTEM":
          if (m.content.trim() !== "") system.push({ type: "text", text: m.content });
          break;
        case "USER":
          push("user", [...(m === beforeUser ? recall : []), ...textBlocks(m.content)]);
          break;
        case "ASSISTANT": {
          const calls = uniqueCalls(m).map((c): AnthropicToolUseBlock => ({ type: "tool_use", id: c.id, name: c.name, input: toolInput(c.arguments) }));
          push("assistant", [...textBlocks(m.content), ...calls]);
          break;
        }
        case "TOOL":
          push("user", textBlocks(orphanToolResult(m)));
          break;
      }
    }
    // The results go in the very next user message, so a call is never left unanswered.
    const results: AnthropicContentBlock[] = [];
    for (const a of answers ?? []) {
      const whole = a.message && nativeOf(a.message, "anthropic");
      if (whole) {
        if (a.first && !a.inPlace) push("user", whole as AnthropicContentBlock[], true);
      } else results.push({ type: "tool_result", tool_use_id: a.toolCallId, ...(a.content !== "" ? { content: a.content } : {}) });
    }
    push("user", results);
  }
  const messages = out.map((o) => o.message);
  for (const o of out) {
    // Anthropic wants a user message's tool_result blocks before its text.
    if (!o.native && o.message.role === "user") o.message.content.sort((a, b) => rank(a) - rank(b));
  }
  if (messages[0]?.role === "assistant") messages.unshift({ role: "user", content: [{ type: "text", text: CONTINUATION_TEXT }] });
  if (options.cacheConversation) {
    const lastMessage = messages[messages.length - 1];
    const lastBlock = lastMessage?.content.at(-1);
    // A copy: the stored native block stays as it is.
    if (lastMessage && lastBlock) lastMessage.content = [...lastMessage.content.slice(0, -1), { ...lastBlock, cache_control: { type: "ephemeral" } }];
  }
  return { system, messages };
}

const rank = (b: AnthropicContentBlock) => (b.type === "tool_result" ? 0 : 1);

/** Anthropic rejects empty text blocks. */
const textBlocks = (text: string): AnthropicTextBlock[] => (text.trim() === "" ? [] : [{ type: "text", text }]);

/** `tool_use.input` must be an object: JSON arguments that are not one are wrapped. */
function toolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    return { value };
  } catch {
    return args.trim() === "" ? {} : { raw: args };
  }
}

// ---------------------------------------------------------------------------- OpenAI Responses

/** An item of a Responses API `input`: a message, or a stored item (reasoning, function_call, …) as it is. */
export type OpenAIResponsesItem =
  | { role: "developer" | "user" | "assistant"; content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string }
  | { type: string; [field: string]: unknown };

/**
 * The Responses API `input`: the engine's prompt (when given), the memory block's static part and
 * its dynamic part as `developer` messages, then the active messages. A message stored with
 * `openai-responses` content is its items exactly (reasoning with `encrypted_content`, function
 * calls, hosted tool calls, compaction items); any other is converted: USER and ASSISTANT text as
 * messages, tool calls as `function_call` items, each answered by a `function_call_output` right
 * after (its result, or a placeholder when it has none). The recall option works as for
 * {@link toOpenAIMessages}. With a turn asked with `format: "openai-responses"`, this is
 * `turn.request.input` with the engine's prompt in front.
 *
 * Items the Agents SDK session stored are in the SDK's own shapes (`callId`): that session reads them.
 *
 * @example
 * const response = await openai.responses.create({ model: "gpt-5", instructions, input: toOpenAIResponsesInput(turn), store: false, include: ["reasoning.encrypted_content"] });
 * await memory.appendMessage(processId, { native: { format: "openai-responses", content: response.output } });
 */
export function toOpenAIResponsesInput(turn: TurnLike, options: PromptOptions = {}): OpenAIResponsesItem[] {
  const { staticBlock, dynamicBlock } = splitBlock(turn.context);
  const recallAsMessage = options.recall === "message" && dynamicBlock !== "";
  const input: OpenAIResponsesItem[] = [];
  for (const text of [options.system, staticBlock, recallAsMessage ? "" : dynamicBlock]) {
    if (text && text.trim() !== "") input.push({ role: "developer", content: text });
  }
  const beforeUser = recallAsMessage ? newestUserMessage(turn.messages) : undefined;
  if (recallAsMessage && !beforeUser) input.push({ role: "user", content: dynamicBlock });
  for (const { message: m, answers } of pairToolResults(turn.messages)) {
    if (m === beforeUser) input.push({ role: "user", content: dynamicBlock });
    const native = nativeOf(m, "openai-responses") as OpenAIResponsesItem[] | undefined;
    if (native) input.push(...native);
    else {
      switch (m.role) {
        case "SYSTEM":
          input.push({ role: "developer", content: m.content });
          break;
        case "USER":
          input.push({ role: "user", content: m.content });
          break;
        case "ASSISTANT":
          if (m.content !== "") input.push({ role: "assistant", content: m.content });
          for (const c of uniqueCalls(m)) input.push({ type: "function_call", call_id: c.id, name: c.name, arguments: c.arguments });
          break;
        case "TOOL":
          input.push({ role: "user", content: orphanToolResult(m) });
          break;
      }
    }
    for (const a of answers ?? []) {
      const whole = a.message && nativeOf(a.message, "openai-responses");
      if (whole) {
        if (a.first && !a.inPlace) input.push(...(whole as OpenAIResponsesItem[]));
      } else input.push({ type: "function_call_output", call_id: a.toolCallId, output: a.content });
    }
  }
  return input;
}

// -------------------------------------------------------------------------------------- Gemini

/** A Gemini `Part`: text, functionCall, functionResponse, or a stored part (thoughtSignature, inlineData, …) as it is. */
export interface GeminiPart {
  text?: string;
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
  [field: string]: unknown;
}

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
}

/**
 * Gemini's `contents` and `systemInstruction`: the engine's prompt, the memory block (its dynamic
 * part too, unless `recall: "message"`) and the chat's SYSTEM messages as system parts; the
 * active messages as contents. A message stored with `gemini` content is its parts exactly
 * (`thoughtSignature` included, which Gemini 3 requires on the calls of the current turn); any
 * other is converted: text parts, `functionCall` parts, and for each model content with calls one
 * user content right after with a `functionResponse` per call (its result, or a placeholder). With
 * a turn asked with `format: "gemini"`, this is `turn.request` with the engine's prompt first.
 *
 * @example
 * const { contents, systemInstruction } = toGeminiContents(turn, { system: "You are Frankie." });
 * const reply = await ai.models.generateContent({ model: "gemini-3-pro", contents, config: { systemInstruction } });
 * await memory.appendMessage(processId, { native: { format: "gemini", content: reply.candidates[0].content.parts } });
 */
export function toGeminiContents(turn: TurnLike, options: PromptOptions = {}): GeminiRequest {
  const { staticBlock, dynamicBlock } = splitBlock(turn.context);
  const recallAsMessage = options.recall === "message" && dynamicBlock !== "";
  const system = [options.system ?? "", staticBlock, recallAsMessage ? "" : dynamicBlock].filter((t) => t.trim() !== "");
  const contents: GeminiContent[] = [];
  const names = new Map<string, string>();
  const beforeUser = recallAsMessage ? newestUserMessage(turn.messages) : undefined;
  if (recallAsMessage && !beforeUser) contents.push({ role: "user", parts: [{ text: dynamicBlock }] });
  for (const { message: m, answers } of pairToolResults(turn.messages)) {
    for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
    if (m === beforeUser) contents.push({ role: "user", parts: [{ text: dynamicBlock }] });
    const native = nativeOf(m, "gemini") as GeminiPart[] | undefined;
    if (native) contents.push({ role: m.role === "ASSISTANT" ? "model" : "user", parts: native });
    else {
      switch (m.role) {
        case "SYSTEM":
          if (m.content.trim() !== "") system.push(m.content);
          break;
        case "USER":
          contents.push({ role: "user", parts: [{ text: m.content }] });
          break;
        case "ASSISTANT":
          contents.push({
            role: "model",
            parts: [
              ...(m.content !== "" ? [{ text: m.content }] : []),
              ...uniqueCalls(m).map((c) => ({ functionCall: { id: c.id, name: c.name, args: toolInput(c.arguments) } })),
            ],
          });
          break;
        case "TOOL":
          contents.push({ role: "user", parts: [{ text: orphanToolResult(m) }] });
          break;
      }
    }
    // All responses to one model content go in the one user content after it.
    const parts: GeminiPart[] = [];
    for (const a of answers ?? []) {
      const whole = a.message && nativeOf(a.message, "gemini");
      if (whole) {
        if (a.first && !a.inPlace) parts.push(...(whole as GeminiPart[]));
      } else parts.push({ functionResponse: { id: a.toolCallId, name: names.get(a.toolCallId) ?? "unknown", response: { result: a.content } } });
    }
    if (parts.length > 0) contents.push({ role: "user", parts });
  }
  return { contents, ...(system.length > 0 ? { systemInstruction: { parts: system.map((text) => ({ text })) } } : {}) };
}

// ------------------------------------------------------------------------------- native content

/**
 * The message's native content when it is in `format`, as the replay sends it: a cleared result
 * with its placeholder as the result's output (the rest as stored). Undefined for another format
 * or none: the message is then converted from its text.
 */
function nativeOf(m: Message, format: NativeFormat): unknown[] | undefined {
  if (m.native?.format !== format) return undefined;
  return m.cleared ? withResultText(format, m.native.content, m.content) : m.native.content;
}

function withResultText(format: NativeFormat, content: unknown[], text: string): unknown[] {
  return content.map((e) => {
    if (typeof e !== "object" || e === null) return e;
    const p = e as Record<string, unknown>;
    switch (format) {
      case "anthropic":
        return p.type === "tool_result" ? { ...p, content: text } : p;
      case "openai-responses":
        return p.type === "function_call_output" || p.type === "custom_tool_call_output" || p.type === "function_call_result" ? { ...p, output: text } : p;
      case "gemini": {
        const r = p.functionResponse as Record<string, unknown> | undefined;
        return r ? { ...p, functionResponse: { ...r, response: { result: text } } } : p;
      }
      case "ai-sdk":
        return p.type === "tool-result" ? { ...p, output: { type: "text", value: text } } : p;
    }
  });
}

/** The text of the result for `callId` in a native message that answers several calls, or undefined. */
function nativeResultText(m: Message, callId: string): string | undefined {
  for (const e of m.native?.content ?? []) {
    if (typeof e !== "object" || e === null) continue;
    const p = e as Record<string, unknown>;
    const r = p.functionResponse as Record<string, unknown> | undefined;
    const value =
      p.type === "tool_result" && p.tool_use_id === callId
        ? p.content
        : p.type === "tool-result" && p.toolCallId === callId
          ? (p.output as { value?: unknown } | undefined)?.value
          : r && (r.id ?? r.name) === callId
            ? r.response
            : undefined;
    if (value === undefined) continue;
    if (typeof value === "string") return value;
    if (Array.isArray(value)) return value.map((v) => (typeof v?.text === "string" ? v.text : `[${v?.type ?? "part"}]`)).join("\n");
    return JSON.stringify(value);
  }
  return undefined;
}

// ------------------------------------------------------------------------- tool-call pairing

/** Stands in for the result of a call that has none in the list (the service's replay words it alike). */
export function missingResultText(call: Pick<ToolCall, "id" | "name">): string {
  return `[no result was recorded for the ${call.name} call ${call.id}]`;
}

interface Answer {
  toolCallId: string;
  content: string;
  /** The TOOL message the result is from; `first` on the first call it answers (a message may answer several). */
  message?: Message;
  first?: boolean;
  /** The result is in a USER message that is sent where it stands. */
  inPlace?: boolean;
}

/** A message to send, and for an ASSISTANT message with tool calls, one answer per call id. */
interface Paired {
  message: Message;
  answers?: Answer[];
}

/** An ASSISTANT message's tool calls, a repeated call id only once (providers reject duplicates). */
function uniqueCalls(m: Message): ToolCall[] {
  const seen = new Set<string>();
  return (m.toolCalls ?? []).filter((c) => !seen.has(c.id) && seen.add(c.id));
}

/** The calls a TOOL message answers: all of them when its native content answers several. */
const answeredIds = (m: Message): string[] => m.toolCallIds ?? (m.toolCallId !== undefined ? [m.toolCallId] : []);

/**
 * Providers want each tool call answered after it, once per call id. So each ASSISTANT message
 * with tool calls takes, for every call, the first later TOOL message that answers it (before
 * another call reuses the id), wherever it sits in the history; a call with no such result gets
 * {@link missingResultText}. TOOL messages left over (their call is gone, or a second result for
 * one call) come back on their own, for the caller to send as plain text.
 */
function pairToolResults(messages: readonly Message[]): Paired[] {
  const taken = new Set<number>();
  const out: Paired[] = [];
  messages.forEach((m, i) => {
    if (m.role === "TOOL") {
      if (!taken.has(i)) out.push({ message: m });
      return;
    }
    const calls = m.role === "ASSISTANT" ? uniqueCalls(m) : [];
    if (calls.length === 0) {
      out.push({ message: m });
      return;
    }
    const answered = new Set<number>();
    const answers = calls.map((call): Answer => {
      for (let j = i + 1; j < messages.length; j++) {
        const n = messages[j]!;
        if (n.role === "ASSISTANT" && n.toolCalls?.some((c) => c.id === call.id)) break;
        // A USER message that also answers calls (results beside its text) stays in its place;
        // sent natively it carries the results itself, converted the call gets its result here.
        if (n.role === "USER" && n.toolCallIds?.includes(call.id)) {
          return { toolCallId: call.id, content: nativeResultText(n, call.id) ?? n.content, message: n, inPlace: true };
        }
        // A message answering several calls serves each of them from this call message.
        if (n.role === "TOOL" && answeredIds(n).includes(call.id) && (!taken.has(j) || answered.has(j))) {
          const first = !answered.has(j);
          taken.add(j);
          answered.add(j);
          const content = answeredIds(n).length > 1 && !n.cleared ? (nativeResultText(n, call.id) ?? n.content) : n.content;
          return { toolCallId: call.id, content, message: n, first };
        }
      }
      return { toolCallId: call.id, content: missingResultText(call) };
    });
    out.push({ message: m, answers });
  });
  return out;
}

function orphanToolResult(m: Message): string {
  return `[tool result${m.toolCallId ? ` for call ${m.toolCallId}` : ""}]\n${m.content}`;
}
