/**
 * Turns a `Turn` (memory block + active messages) into the request shapes of the OpenAI Chat
 * Completions and Anthropic Messages APIs, with the memory block placed for prompt caching.
 * Plain types only: no dependency on either SDK (their request types accept these shapes).
 */
import type { Message, ToolCall, Turn } from "./types.js";

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

  const messages: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage["role"], blocks: AnthropicContentBlock[]) => {
    if (blocks.length === 0) return;
    const prev = messages[messages.length - 1];
    if (prev && prev.role === role) prev.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };
  const beforeUser = recallAsMessage ? newestUserMessage(turn.messages) : undefined;
  const recall: AnthropicTextBlock[] = recallAsMessage ? [{ type: "text", text: dynamicBlock }] : [];
  if (recallAsMessage && !beforeUser) push("user", recall);
  for (const { message: m, answers } of pairToolResults(turn.messages)) {
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
        // The results go in the very next user message, so a call is never left unanswered.
        push(
          "user",
          (answers ?? []).map((a) => ({ type: "tool_result", tool_use_id: a.toolCallId, ...(a.content !== "" ? { content: a.content } : {}) })),
        );
        break;
      }
      case "TOOL":
        push("user", textBlocks(orphanToolResult(m)));
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

// ------------------------------------------------------------------------- tool-call pairing

/** Stands in for the result of a call that has none in the list (the service's replay words it alike). */
export function missingResultText(call: Pick<ToolCall, "id" | "name">): string {
  return `[no result was recorded for the ${call.name} call ${call.id}]`;
}

interface Answer {
  toolCallId: string;
  content: string;
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

/**
 * Both providers want each tool call answered right after it, once per call id. So each
 * ASSISTANT message with tool calls takes, for every call, the first later TOOL message that
 * answers it (before another call reuses the id), wherever it sits in the history; a call with no
 * such result gets {@link missingResultText}. TOOL messages left over (their call is gone, or a
 * second result for one call) come back on their own, for the caller to send as plain text.
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
    const answers = calls.map((call): Answer => {
      for (let j = i + 1; j < messages.length; j++) {
        const n = messages[j]!;
        if (n.role === "ASSISTANT" && n.toolCalls?.some((c) => c.id === call.id)) break;
        if (n.role === "TOOL" && n.toolCallId === call.id && !taken.has(j)) {
          taken.add(j);
          return { toolCallId: call.id, content: n.content };
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
