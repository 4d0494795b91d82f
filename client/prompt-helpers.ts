/**
 * Turns a `Turn` (memory block + active messages) into the request shapes of the OpenAI Chat
 * Completions and Anthropic Messages APIs, with the memory block placed for prompt caching (the
 * Responses API and Gemini: openai-responses-input.ts, gemini-contents.ts). A message whose native
 * content is in the helper's format is sent exactly as stored; any other is converted from its
 * text, so another provider's reasoning is never sent. Plain types only: no dependency on any SDK
 * (their request types accept these shapes).
 */
import { nativeOf, newestUserMessage, orphanToolResult, pairToolResults, splitBlock, toolInput, uniqueCalls, type PromptOptions, type TurnLike } from "./prompt-replay.js";

export { missingResultText, splitBlock, type PromptOptions, type TurnLike } from "./prompt-replay.js";

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
