/**
 * Messages at the message limit (MAX_MESSAGE_BYTES) with every other field at its own limit: the
 * longest ids, 50 tags, 128 tool calls, the tags the service adds and a cleared result naming a
 * tool of 256 three-byte characters. Content is filled with 1-, 2-, 3- and 4-byte characters.
 */
import { MAX_TAGS, MAX_TAG_CHARS, messageBytes } from "../../core/domain/fields.js";
import type { Message, Role, ToolCall } from "../../core/domain/model.js";
import { analyzerMark } from "../../core/domain/strength-analyzer.js";
import type { ProcessKey } from "../../core/ports/store.js";

export const LONGEST_ID = 128;
export const MAX_TOOL_CALLS = 128;
/** A tool name of 256 UTF-16 units at 3 bytes each: the largest a cleared result repeats. */
export const LONGEST_TOOL_NAME = "中".repeat(256);

/** Exactly `bytes` UTF-8 bytes: about a quarter each of 4-, 3- and 2-byte characters, the rest ASCII. */
export function utf8Filler(bytes: number): string {
  const quarter = Math.floor(bytes / 4);
  const four = Math.floor(quarter / 4);
  const three = Math.floor(quarter / 3);
  const two = Math.floor(quarter / 2);
  const ascii = bytes - four * 4 - three * 3 - two * 2;
  return "😀".repeat(four) + "中".repeat(three) + "é".repeat(two) + "a".repeat(ascii);
}

/** The caller's 50 tags of 128 characters (three bytes each: 384 bytes a tag). */
export const callerTags = (): string[] =>
  Array.from({ length: MAX_TAGS }, (_, i) => `t${String(i).padStart(2, "0")}`.padEnd(MAX_TAG_CHARS, "中"));

export const toolCalls = (): ToolCall[] =>
  Array.from({ length: MAX_TOOL_CALLS }, (_, i) => ({ id: `call_${i}`, name: "tool", arguments: "{}" }));

/** What a caller sends at `bytes` in all, for `role`: tags, tool calls or a call id, content filling the rest. */
export function callerMessage(role: Role, bytes: number) {
  const fields = {
    role,
    tags: callerTags(),
    ...(role === "ASSISTANT" ? { toolCalls: toolCalls() } : {}),
    ...(role === "TOOL" ? { toolCallId: "c".repeat(256) } : {}),
  };
  const rest = bytes - messageBytes({ content: "", ...fields });
  if (rest < 0) throw new Error(`${bytes} bytes leave no room for the content`);
  return { ...fields, content: utf8Filler(rest) };
}

/**
 * The stored message at its largest for `bytes` of caller input: every optional field at once (tool
 * calls, a call id of 256 characters and a cleared result), the strength and analyzer tags the
 * service may add and the largest token count, so no real message of that size stores more.
 */
export function worstCaseMessage(key: ProcessKey, bytes: number): Message {
  const fields = { tags: callerTags(), toolCalls: toolCalls(), toolCallId: "c".repeat(256) };
  const rest = bytes - messageBytes({ content: "", ...fields });
  const at = new Date("2030-01-01T00:00:00.000Z").toISOString();
  return {
    id: "msg_01JZZZZZZZZZZZZZZZZZZZZZZZ",
    processId: key.processId,
    role: "ASSISTANT",
    content: utf8Filler(rest),
    ...fields,
    tags: [...fields.tags, "STRENGTH:pinned", analyzerMark("offline")],
    createdAt: at,
    archivedInMemoryId: null,
    tokens: 99_999_999,
    cleared: { at, toolName: LONGEST_TOOL_NAME, chars: 99_999_999, tokens: 99_999_999 },
  };
}
