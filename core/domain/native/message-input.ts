/**
 * A message appended with native content, made whole (docs/api.md, "Native content"): the role the
 * content decides, and the text projection the service reads, within the sizes a message item
 * holds. The native content itself is never changed.
 */
import type { Role, ToolCall } from "../model.js";
import { messageTokens } from "../tokens.js";
import { NATIVE_MAX_DEPTH, jsonDepth } from "./blob-parts.js";
import { nativeProblems, type NativeProblem } from "./checks.js";
import type { NativeContent } from "./formats.js";
import { projectNative } from "./projection.js";

/** Most UTF-8 bytes of a native message's text projection that are stored (the rest stays in `native`). */
export const NATIVE_PROJECTION_MAX_BYTES = 64 * 1024;
/** Most UTF-8 bytes of all projected tool-call arguments of one message, shared among its calls. */
export const NATIVE_PROJECTED_ARGUMENTS_MAX_BYTES = 32 * 1024;
/** Most tool calls one message's projection lists (a provider's parallel calls fit far below it). */
export const NATIVE_PROJECTED_CALLS_MAX = 128;
/** What an image, document or file costs in a turn's estimate, whatever its bytes (about a 1,000 px image). */
export const MEDIA_PART_TOKENS = 1_600;

export interface NativeMessageFields {
  role?: Role;
  content?: string;
  toolCallId?: string;
  toolCalls?: ToolCall[];
  native: NativeContent;
}

export interface ProjectedMessage {
  role: Role;
  content: string;
  toolCallId?: string;
  toolCalls?: ToolCall[];
  toolCallIds?: string[];
  /** The replay's cost of the whole message: its full projection, reasoning and media. */
  tokens: number;
}

const encoder = new TextEncoder();

/** `text` cut to at most `maxBytes` UTF-8 bytes at a character boundary, saying how much was left out. */
export function capText(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes || encoder.encode(text).byteLength <= maxBytes) return text;
  const note = (left: number) => `\n[… ${left} more characters are in the message's native content]`;
  const room = maxBytes - encoder.encode(note(text.length)).byteLength;
  // Bytes per character vary: cut by characters, then back off until the bytes fit.
  let end = Math.min(text.length, room);
  while (end > 0 && encoder.encode(text.slice(0, end)).byteLength > room) end = Math.floor(end * 0.9);
  if (end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
  return text.slice(0, end) + note(text.length - end);
}

/**
 * The problems of a message with native content, by path under the message, or its projection.
 *
 * @example projectMessage({ native: { format: "anthropic", content: [{ type: "tool_use", id: "t1", name: "ls", input: {} }] } })
 * // { ok: true, message: { role: "ASSISTANT", content: "", toolCalls: [{ id: "t1", name: "ls", arguments: "{}" }], tokens: 5 } }
 */
export function projectMessage(
  body: NativeMessageFields,
): { ok: true; message: ProjectedMessage } | { ok: false; problems: NativeProblem[] } {
  const { native } = body;
  if (jsonDepth(native.content, NATIVE_MAX_DEPTH) > NATIVE_MAX_DEPTH) {
    return { ok: false, problems: [{ path: ["native", "content"], message: `nests deeper than ${NATIVE_MAX_DEPTH} levels` }] };
  }
  const problems = nativeProblems(native.format, native.content);
  if (problems.length > 0) return { ok: false, problems: problems.map((p) => ({ ...p, path: ["native", "content", ...p.path] })) };

  const p = projectNative(native.format, native.content);
  const role = roleOf(body.role, p.role);
  if (typeof role !== "string") return { ok: false, problems: [role] };

  const text = body.content ?? p.text;
  const calls = body.toolCalls ?? (role === "ASSISTANT" ? p.toolCalls : []);
  const tokens =
    messageTokens({ content: text, toolCalls: calls }) + Math.ceil(p.reasoningChars / 4) + p.mediaParts * MEDIA_PART_TOKENS;
  const share = Math.floor(NATIVE_PROJECTED_ARGUMENTS_MAX_BYTES / Math.max(1, Math.min(calls.length, NATIVE_PROJECTED_CALLS_MAX)));
  const toolCalls = body.toolCalls ?? calls.slice(0, NATIVE_PROJECTED_CALLS_MAX).map((c) => ({ ...c, arguments: capText(c.arguments, share) }));
  const ids = role === "TOOL" || role === "USER" ? p.toolCallIds : [];
  const toolCallId = body.toolCallId ?? (role === "TOOL" ? ids[0] : undefined);
  return {
    ok: true,
    message: {
      role,
      content: capText(text, NATIVE_PROJECTION_MAX_BYTES),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(toolCallId !== undefined ? { toolCallId } : {}),
      ...(ids.length > 1 || (ids.length === 1 && role === "USER") ? { toolCallIds: ids } : {}),
      tokens,
    },
  };
}

/**
 * The message's role: the caller's, which must agree with the one the content decides. A provider
 * "user" message of tool results is a TOOL message here, whether the caller says USER or TOOL.
 */
function roleOf(given: Role | undefined, derived: Role | undefined): Role | NativeProblem {
  if (given === undefined) {
    return derived ?? { path: ["role"], message: "is required: the native content does not say whose message it is" };
  }
  if (derived === undefined || derived === given) return given;
  if (derived === "TOOL" && given === "USER") return "TOOL";
  return { path: ["role"], message: `must be ${derived}: that is the role the native content decides (or leave it out)` };
}
