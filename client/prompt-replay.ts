/**
 * What the prompt helpers share: the turn they read, the memory block's split at its cache
 * breakpoint, native content in a helper's format (a cleared result with its placeholder), and the
 * pairing of each tool call with its result. Plain types only.
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
export function newestUserMessage(messages: readonly Message[]): Message | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "USER") return messages[i];
  return undefined;
}

/** Tool input as the object providers take (`tool_use.input`, `functionCall.args`): JSON arguments that are not one are wrapped. */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    return { value };
  } catch {
    return args.trim() === "" ? {} : { raw: args };
  }
}

// ------------------------------------------------------------------------------- native content

/**
 * The message's native content when it is in `format`, as the replay sends it: a cleared result
 * with its placeholder as the result's output (the rest as stored). Undefined for another format
 * or none: the message is then converted from its text.
 */
export function nativeOf(m: Message, format: NativeFormat): unknown[] | undefined {
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

export interface Answer {
  toolCallId: string;
  content: string;
  /** The TOOL message the result is from; `first` on the first call it answers (a message may answer several). */
  message?: Message;
  first?: boolean;
  /** The result is in a USER message that is sent where it stands. */
  inPlace?: boolean;
}

/** A message to send, and for an ASSISTANT message with tool calls, one answer per call id. */
export interface Paired {
  message: Message;
  answers?: Answer[];
}

/** An ASSISTANT message's tool calls, a repeated call id only once (providers reject duplicates). */
export function uniqueCalls(m: Message): ToolCall[] {
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
export function pairToolResults(messages: readonly Message[]): Paired[] {
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

export function orphanToolResult(m: Message): string {
  return `[tool result${m.toolCallId ? ` for call ${m.toolCallId}` : ""}]\n${m.content}`;
}
