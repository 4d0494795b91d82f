/**
 * Native content in a chaos run: the engines whose index is 1 or 2 modulo 3 speak Anthropic's
 * Messages or OpenAI's Responses format, so their tool calls (with thinking or reasoning), tool
 * results and assistant appends carry native content, and every third tool result a part past the
 * inline size (a blob). Built from the plan's drafts at run time: the plan and its digest stay as
 * they were. The text stays the draft's, so the run compacts as it did.
 */
import { MessageInput } from "../../core/domain/fields.js";
import type { ToolCall } from "../../core/domain/model.js";
import { nativeHash } from "../../core/domain/native/blob-parts.js";
import type { NativeContent } from "../../core/domain/native/formats.js";
import type { MessageDraft } from "./plan.js";
import { appendBody, type Engine } from "./run-state.js";

export type ChaosNativeFormat = "anthropic" | "openai-responses";

export const nativeFormatOf = (e: Engine): ChaosNativeFormat | null => ([null, "anthropic", "openai-responses"] as const)[e.plan.index % 3]!;

/**
 * The Anthropic engines fold with the provider too (a summarizer that answers a `compaction`
 * block, tools/chaos/summarizer.ts): their memories keep the block, inline or as a blob.
 */
export const foldsWithProvider = (e: Engine) => nativeFormatOf(e) === "anthropic";

/** About 12 KB: past the inline part size, so the part is kept as a blob. */
const large = (nonce: string) => `${nonce}: ${"rows 0-9999 of the report, every one of them 🧾; ".repeat(250)}`;
/** Every third result (by its nonce) carries a large part. */
const isLarge = (nonce: string) => [...nonce].reduce((n, c) => n + c.charCodeAt(0), 0) % 3 === 0;

function assistantContent(format: ChaosNativeFormat, m: MessageDraft, calls: readonly ToolCall[]): unknown[] {
  if (format === "anthropic") {
    return [
      { type: "thinking", thinking: `Which tools does ${m.nonce} need? "quoted" \\ and ünïcødé`, signature: `sig-${m.nonce}-${"Eq".repeat(40)}` },
      { type: "text", text: m.content },
      ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.arguments) })),
    ];
  }
  return [
    { type: "reasoning", id: `rs_${m.nonce}`, summary: [{ type: "summary_text", text: `Plan for ${m.nonce}` }], encrypted_content: `gAAAA${m.nonce}${"x".repeat(80)}` },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: m.content }] },
    ...calls.map((c) => ({ type: "function_call", call_id: c.id, name: c.name, arguments: c.arguments })),
  ];
}

function resultContent(format: ChaosNativeFormat, m: MessageDraft, callId: string): unknown[] {
  const output = isLarge(m.nonce) ? `${m.content}\n${large(m.nonce)}` : m.content;
  if (format === "anthropic") return [{ type: "tool_result", tool_use_id: callId, content: [{ type: "text", text: output }] }];
  return [{ type: "function_call_output", call_id: callId, output }];
}

/**
 * The body of a planned message as the engine sends it: plain for an engine without a native
 * format (or a message it has no native form for), else native content with the tool calls and
 * call ids derived from it as the HTTP layer derives them. Records the hash of what was sent.
 */
export function engineBody(e: Engine, m: MessageDraft, tool: { calls?: ToolCall[]; answers?: string } = {}) {
  const format = nativeFormatOf(e);
  const plain = appendBody(m, { ...(tool.calls ? { toolCalls: tool.calls } : {}), ...(tool.answers ? { toolCallId: tool.answers } : {}) });
  if (!format) return plain;
  let native: NativeContent;
  if (m.role === "ASSISTANT") native = { format, content: assistantContent(format, m, tool.calls ?? []) };
  else if (m.role === "TOOL" && tool.answers) native = { format, content: resultContent(format, m, tool.answers) };
  else return plain;
  const { toolCalls: _derived, toolCallId: _alsoDerived, ...rest } = plain;
  const body = MessageInput.parse({ ...rest, native });
  e.native.set(m.nonce, nativeHash(native));
  // The tags as planned (the nonce tag included), as a plain append sends them.
  return { ...body, tags: plain.tags };
}
