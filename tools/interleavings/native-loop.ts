/**
 * A native Anthropic tool loop for the checker's scenarios (docs/api.md, "Native content"): the
 * assistant turn (a signed `thinking` block, text and two `tool_use` blocks) and the user message
 * of two `tool_result` blocks that answers both calls (one TOOL message with `toolCallIds`), one
 * result past the inline part size so that it is kept as a blob. And the checks the scenarios make
 * of it: native content reads back exactly, a fold never separates the call from its results, and
 * a turn's `request` never holds a result without its call or a call without its result.
 */
import { storedNative, type Message } from "../../core/domain/model.js";
import { MessageInput } from "../../core/domain/fields.js";
import { NATIVE_INLINE_PART_BYTES, nativeHash, sha256Hex } from "../../core/domain/native/blob-parts.js";
import type { NativeContent } from "../../core/domain/native/formats.js";
import type { TurnResult } from "../../core/services/turn.js";
import { withNative } from "../../core/services/native-content.js";
import type { Outcome } from "./scheduler.js";
import type { Stage } from "./setup.js";

export const CALL_IDS = ["toolu_01Read", "toolu_01Grep"] as const;

/** The assistant turn: thinking (its signature byte-exact), text, two parallel calls. */
export const NATIVE_CALL: NativeContent = {
  format: "anthropic",
  content: [
    { type: "thinking", thinking: "Both files are needed: read the schema, grep the importer — ünïcødé 🧠.", signature: `EqQBCkYIARgCIkD${"s".repeat(240)}` },
    { type: "text", text: "Reading the schema and searching the importer." },
    { type: "tool_use", id: CALL_IDS[0], name: "read_file", input: { path: "schema.sql" } },
    { type: "tool_use", id: CALL_IDS[1], name: "grep", input: { pattern: "column", path: "importer/", flags: ["-n"] } },
  ],
};

/** The text of a result past the inline part size (kept as a blob); `variant` changes its bytes. */
export function largeResult(variant = "a"): string {
  const text = Array.from({ length: 400 }, (_, i) => `${variant}: column_${i} INTEGER NOT NULL, -- checked\n`).join("");
  if (Buffer.byteLength(text) <= NATIVE_INLINE_PART_BYTES) throw new Error("the large result must be past the inline part size");
  return text;
}

/** The user message of both results (one TOOL message answering both calls), the first one large. */
export function nativeResults(variant = "a"): NativeContent {
  return {
    format: "anthropic",
    content: [
      { type: "tool_result", tool_use_id: CALL_IDS[0], content: [{ type: "text", text: largeResult(variant) }] },
      { type: "tool_result", tool_use_id: CALL_IDS[1], content: `importer/load.ts:12: column ${variant}` },
    ],
  };
}

/** The SHA-256 of the blob a native content's large result is kept as (blob-parts.ts: the JSON text of the string). */
export const largeResultSha = (variant = "a") => sha256Hex(JSON.stringify(largeResult(variant)));

/** A message body as the HTTP layer hands it to the services (role, text and calls derived). */
export const nativeBody = (native: NativeContent, idempotencyKey?: string): MessageInput =>
  MessageInput.parse({ native, ...(idempotencyKey ? { idempotencyKey } : {}) });

/** The stored messages that carry `native`, found by its hash (what the item keeps). */
export const carrying = (messages: readonly Message[], native: NativeContent) =>
  messages.filter((m) => storedNative(m)?.hash === nativeHash(native));

/**
 * Every message of the history read back through `withNative` (blobs fetched): a message whose
 * blob is missing is half there. Each of `expected` must be stored exactly `count` times (by its
 * hash) and read back JSON-equal, archived or not.
 */
export async function nativeReadBack(stage: Stage, messages: readonly Message[], expected: readonly NativeContent[], count = 1): Promise<string[]> {
  const v: string[] = [];
  let whole: Message[];
  try {
    whole = await withNative(stage.deps(), stage.key, messages);
  } catch (e) {
    return [`the history does not read back whole: ${e instanceof Error ? e.message : String(e)}`];
  }
  for (const native of expected) {
    const found = whole.filter((m) => m.native !== undefined && nativeHash(m.native) === nativeHash(native));
    const stored = carrying(messages, native).length;
    if (stored !== count) v.push(`native content ${nativeHash(native).slice(0, 12)} is stored ${stored} times, expected ${count}`);
    for (const m of found) {
      if (JSON.stringify(m.native) !== JSON.stringify(native)) v.push(`message ${m.id} reads back native content other than was appended`);
    }
  }
  for (const m of whole) {
    const stored = storedNative(m);
    if (stored && (!m.native || nativeHash(m.native) !== stored.hash)) v.push(`message ${m.id} reads back native content whose hash is not the one stored`);
  }
  return v;
}

/** The call message and the message answering its calls are both active or both in one memory. */
export function pairViolations(messages: readonly Message[], call: NativeContent, results: NativeContent): string[] {
  const [a] = carrying(messages, call);
  const [r] = carrying(messages, results);
  if (!a || !r) return [];
  if (a.archivedInMemoryId !== r.archivedInMemoryId) {
    return [`call message ${a.id} (${a.archivedInMemoryId ?? "active"}) and its results ${r.id} (${r.archivedInMemoryId ?? "active"}) were separated`];
  }
  if (r.toolCallIds?.join() !== CALL_IDS.join()) return [`results message ${r.id} answers [${r.toolCallIds?.join() ?? r.toolCallId ?? ""}], not both calls`];
  return [];
}

type Block = { type?: unknown; id?: unknown; tool_use_id?: unknown };

/**
 * The problems of an Anthropic `request.messages`: a `tool_result` whose `tool_use` is not in it,
 * a `tool_use` with no result (a placeholder counts), and a result that is not in the user turn
 * right after its call (the Messages API refuses that too). Consecutive user messages are one
 * turn, as the API combines them (Messages API reference, `messages`).
 */
export function anthropicPairing(messages: ReadonlyArray<{ role?: unknown; content?: unknown }>): string[] {
  const v: string[] = [];
  const blocks = (m: { content?: unknown }): Block[] => (Array.isArray(m.content) ? (m.content as Block[]) : []);
  const uses = new Set<unknown>();
  for (const m of messages) for (const b of blocks(m)) if (b.type === "tool_use") uses.add(b.id);
  messages.forEach((m, i) => {
    for (const b of blocks(m)) {
      if (b.type === "tool_result" && !uses.has(b.tool_use_id)) v.push(`request.messages.${i} holds a tool_result for ${String(b.tool_use_id)} without its tool_use`);
      if (b.type !== "tool_use") continue;
      const turn: Block[] = [];
      for (let j = i + 1; j < messages.length && messages[j]!.role === "user"; j++) turn.push(...blocks(messages[j]!));
      const answered = turn.some((r) => r.type === "tool_result" && r.tool_use_id === b.id);
      if (!answered) v.push(`request.messages.${i} holds tool_use ${String(b.id)} without its tool_result in the next user turn`);
      const firstOther = turn.findIndex((r) => r.type !== "tool_result");
      if (firstOther >= 0 && turn.slice(firstOther).some((r) => r.type === "tool_result")) {
        v.push(`request.messages.${i + 1}: the user turn after tool_use ${String(b.id)} has a tool_result after other content`);
      }
    }
  });
  return v;
}

/** The checks of a turn actor's answer in format `anthropic`: it answered, and its request pairs every call. */
export function turnRequestViolations(name: string, outcome: Outcome | undefined, expected: readonly NativeContent[]): string[] {
  if (!outcome?.ok) return [`turn ${name} failed: ${outcome && !outcome.ok ? String((outcome.error as Error)?.message ?? outcome.error) : "no outcome"}`];
  const turn = outcome.value as TurnResult;
  const request = turn.request as { messages?: Array<{ role?: unknown; content?: unknown }> } | undefined;
  if (!request?.messages) return [`turn ${name} answered no anthropic request`];
  const v = anthropicPairing(request.messages).map((p) => `turn ${name}: ${p}`);
  // Its messages carry native content as appended, blobs resolved.
  for (const m of turn.messages) {
    if (!m.native) continue;
    if (!expected.some((n) => JSON.stringify(n) === JSON.stringify(m.native))) v.push(`turn ${name}: message ${m.id} answers native content other than was appended`);
  }
  return v;
}
