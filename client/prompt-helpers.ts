/**
 * Turns a `Turn` (memory block + active messages) into the request shapes of the OpenAI Chat
 * Completions and Anthropic Messages APIs, with the memory block placed for prompt caching.
 * Plain types only: no dependency on either SDK (their request types accept these shapes).
 */
import type { Message, Turn } from "./types.js";

/** What the helpers read of a turn; `getContext` + `listMessages(view=active)` give the same. */
export type TurnLike = Pick<Turn, "context" | "messages">;

export interface PromptOptions {
  /** The engine's own system prompt; it goes first, before the memory block. */
  system?: string;
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
 * prefix stays byte-identical until the next compaction because the block comes first.
 *
 * A TOOL message whose call is not in the list (no `toolCallId`, or its ASSISTANT call is
 * gone) becomes a user message that says it is a tool result: OpenAI rejects such tool messages.
 *
 * @example
 * const completion = await openai.chat.completions.create({
 *   model: "gpt-4o",
 *   messages: toOpenAIMessages(turn, { system: "You are Frankie, a coding agent." }),
 * });
 */
export function toOpenAIMessages(turn: TurnLike, options: PromptOptions = {}): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  const head = [options.system, turn.context.block].filter((s): s is string => !!s && s.trim() !== "").join("\n\n");
  if (head) out.push({ role: "system", content: head });
  const calls = new Set<string>();
  for (const m of turn.messages) {
    switch (m.role) {
      case "SYSTEM":
        out.push({ role: "system", content: m.content });
        break;
      case "USER":
        out.push({ role: "user", content: m.content });
        break;
      case "ASSISTANT": {
        if (m.toolCalls?.length) {
          for (const c of m.toolCalls) calls.add(c.id);
          out.push({
            role: "assistant",
            content: m.content === "" ? null : m.content,
            tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
          });
        } else {
          out.push({ role: "assistant", content: m.content });
        }
        break;
      }
      case "TOOL":
        if (m.toolCallId && calls.has(m.toolCallId)) out.push({ role: "tool", content: m.content, tool_call_id: m.toolCallId });
        else out.push({ role: "user", content: orphanToolResult(m) });
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
 * as `tool_use` blocks, TOOL results as user messages with `tool_result` blocks; consecutive
 * messages of one role are merged (Anthropic requires alternation, tool results first in a user
 * message), and a conversation that starts with the assistant gets {@link CONTINUATION_TEXT}.
 *
 * @example
 * const { system, messages } = toAnthropicRequest(turn, { system: "You are Arthur." });
 * const reply = await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, system, messages });
 */
export function toAnthropicRequest(turn: TurnLike, options: AnthropicOptions = {}): AnthropicRequest {
  const { block } = turn.context;
  // An answer without `staticBlock` (older service) has only static sections.
  const staticBlock = turn.context.staticBlock ?? block;
  const dynamicBlock = block.startsWith(staticBlock) ? block.slice(staticBlock.length).trim() : "";

  const system: AnthropicTextBlock[] = [];
  for (const text of [options.system, staticBlock]) if (text && text.trim() !== "") system.push({ type: "text", text });
  const last = system[system.length - 1];
  if (last) last.cache_control = { type: "ephemeral" };
  if (dynamicBlock) system.push({ type: "text", text: dynamicBlock });

  const messages: AnthropicMessage[] = [];
  const uses = new Set<string>();
  const push = (role: AnthropicMessage["role"], blocks: AnthropicContentBlock[]) => {
    if (blocks.length === 0) return;
    const prev = messages[messages.length - 1];
    if (prev && prev.role === role) prev.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };
  for (const m of turn.messages) {
    switch (m.role) {
      case "SYSTEM":
        if (m.content.trim() !== "") system.push({ type: "text", text: m.content });
        break;
      case "USER":
        push("user", textBlocks(m.content));
        break;
      case "ASSISTANT": {
        const calls = (m.toolCalls ?? []).map((c): AnthropicToolUseBlock => {
          uses.add(c.id);
          return { type: "tool_use", id: c.id, name: c.name, input: toolInput(c.arguments) };
        });
        push("assistant", [...textBlocks(m.content), ...calls]);
        break;
      }
      case "TOOL":
        if (m.toolCallId && uses.has(m.toolCallId)) {
          push("user", [{ type: "tool_result", tool_use_id: m.toolCallId, ...(m.content !== "" ? { content: m.content } : {}) }]);
        } else {
          push("user", textBlocks(orphanToolResult(m)));
        }
        break;
    }
  }
  for (const m of messages) {
    // Anthropic wants a user message's tool_result blocks before its text.
    if (m.role === "user") m.content.sort((a, b) => rank(a) - rank(b));
  }
  if (messages[0]?.role === "assistant") messages.unshift({ role: "user", content: [{ type: "text", text: CONTINUATION_TEXT }] });
  if (options.cacheConversation) {
    const lastBlock = messages[messages.length - 1]?.content.at(-1);
    if (lastBlock) lastBlock.cache_control = { type: "ephemeral" };
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

function orphanToolResult(m: Message): string {
  return `[tool result${m.toolCallId ? ` for call ${m.toolCallId}` : ""}]\n${m.content}`;
}
