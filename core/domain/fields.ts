/**
 * The rules every caller-supplied value follows, wherever it enters (an HTTP body, an event):
 * ids in a safe alphabet so they can never break a storage key, text that DynamoDB can store,
 * tags in one spelling, and the process and message input the services take. Limits are
 * documented in docs/configuration.md ("Limits"); the HTTP request shapes built from these live in the HTTP adapter.
 */
import * as z from "./zod.js";
import { RoleInput, type Role, type ToolCall } from "./model.js";
import { MAX_CONTEXT_WINDOW } from "./model-windows.js";
import { jsonDepth, NATIVE_MAX_DEPTH } from "./native/blob-parts.js";
import { NativeContent } from "./native/formats.js";
import { projectMessage } from "./native/message-input.js";
import { ANALYZER_MARK_PREFIX, isAnalyzerMark, malformedStrengthTags, parseStrengthTag, strengthTag } from "./strength.js";

/**
 * Largest message, in UTF-8 bytes of everything the caller sends in it (see {@link messageBytes}):
 * an ASCII character counts 1, "é" 2, "中" 3, an emoji 4. This is what the store can hold: an
 * active message is on the replay index, and DynamoDB counts the item and its index entry
 * together against its 400 KB item limit, so everything in it is paid for twice. With the longest
 * ids, 50 tags, 128 tool calls, the tags the service adds and a cleared result's placeholder
 * fields, 200,000 bytes still fit (core/adapters/dynamodb/item-size.ts; the derivation is
 * test/unit/message-size.test.ts). docs/configuration.md, "Limits".
 */
export const MAX_MESSAGE_BYTES = 200_000;
export const MAX_TAGS = 50;
export const MAX_TAG_CHARS = 128;
export const MAX_TOOL_CALLS = 128;

export const Id = z
  .string()
  .check(z.minLength(1), z.maxLength(128), z.regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]*$/, "use letters, digits and . _ : @ - (max 128)"));

export { ToolRef, printableToolRef } from "./tool-ref.js";
import { LONE_SURROGATES, ToolRef } from "./tool-ref.js";

/** One tool call as a caller sends it (stored as `ToolCall`, core/domain/model.ts). */
export const ToolCallInput = z.object({
  id: ToolRef,
  name: ToolRef,
  arguments: z.string().check(z.maxLength(100_000)),
});

/** Lone UTF-16 surrogates cannot be stored as UTF-8 (DynamoDB rejects them): a 400, not a 500. */
export const Unicode = z.string().check(
  z.refine((s) => s.search(LONE_SURROGATES) < 0, { message: "must be valid Unicode (no lone surrogates)" }),
);

/** Storable text of at most `max` characters. */
export const Text = (max: number) => Unicode.check(z.maxLength(max));

/** A time, ISO 8601 with its offset (`Z` as the service writes it). */
export const IsoTime = z.iso.datetime({ offset: true });

/** A model's context window, in tokens. */
export const ContextWindow = z.number().check(z.int(), z.gte(1000), z.lte(MAX_CONTEXT_WINDOW, `must be <= ${MAX_CONTEXT_WINDOW}`));

/** A manual compaction's instructions to the summarizer. */
export const Instructions = Text(2000);

/** What a caller says about a process when it creates or updates it. */
/** Largest `conversation` of a process, as JSON: tool schemas and a system prompt, not a history. */
export const MAX_CONVERSATION_BYTES = 64 * 1024;

/** The engine's `system` and `tools` (docs/summarizers.md, "Provider folds"), bounded in size and depth. */
export const Conversation = z
  .strictObject({ system: z.optional(z.unknown()), tools: z.optional(z.array(z.unknown())) })
  .check(
    z.refine((c) => jsonDepth(c, NATIVE_MAX_DEPTH) <= NATIVE_MAX_DEPTH && Buffer.byteLength(JSON.stringify(c)) <= MAX_CONVERSATION_BYTES, {
      message: `at most ${MAX_CONVERSATION_BYTES} bytes of JSON, ${NATIVE_MAX_DEPTH} levels deep`,
    }),
  );

export const ProcessInput = z.strictObject({
  projectId: Id,
  sessionId: z.optional(Id),
  parentProcessId: z.optional(Id),
  name: z.optional(Text(256)),
  recipe: z.optional(Text(256)),
  engine: z.optional(Text(256)),
  title: z.optional(Text(1024)),
  allowsCrossProjectSpawn: z.optional(z.boolean()),
  conversation: z.optional(Conversation),
});
export type ProcessInput = z.infer<typeof ProcessInput>;

/**
 * A tag. Strength tags are stored in one spelling only, `STRENGTH:<strength>` (docs/api.md): any
 * other case or surrounding blanks (`strength:Pinned `) are rewritten to it here, so the selector
 * needs to match only that form; a `STRENGTH:` tag in any case that names no strength is a 400
 * that quotes it.
 */
/** A tag's own rules, without the rewrite of {@link Tag}. */
export const TagText = Unicode.check(
  z.minLength(1),
  z.maxLength(MAX_TAG_CHARS),
  z.regex(/^[^\p{Cc}]+$/u, "tags hold no control characters"),
  z.superRefine((t, ctx) => {
    if (malformedStrengthTags([t]).length > 0) {
      ctx.addIssue({ code: "custom", message: `'${t}' is not a strength tag: use STRENGTH:weak|normal|strong|pinned` });
    }
  }),
);

export const Tag = z.pipe(
  TagText,
  z.transform((t: string) => {
    const strength = parseStrengthTag(t);
    return strength ? strengthTag(strength) : t;
  }),
);

const MessageFields = z.strictObject({
  role: z.optional(RoleInput),
  content: z.optional(Unicode),
  tags: z.optional(z.array(Tag).check(z.maxLength(MAX_TAGS))),
  idempotencyKey: z.optional(Id),
  toolCallId: z.optional(ToolRef),
  toolCalls: z.optional(z.array(ToolCallInput).check(z.maxLength(MAX_TOOL_CALLS))),
  /** What the model API returned, or the engine sends, exactly (docs/api.md, "Native content"). */
  native: z.optional(NativeContent),
});

/** A message as the services take it: role and content always set (derived from `native` when it has one). */
export interface MessageInput {
  role: Role;
  content: string;
  tags?: string[];
  idempotencyKey?: string;
  toolCallId?: string;
  toolCalls?: ToolCall[];
  toolCallIds?: string[];
  native?: NativeContent;
  /** A native message's replay cost, from its whole projection (the stored text may be cut). */
  tokens?: number;
}

type MessageBody = z.infer<typeof MessageFields>;
type Issue = { code: "custom"; message: string; input: unknown; path: Array<string | number> };

/** The rules a message meets whatever it carries: who may carry tool calls, and which tags. */
function messageProblems(m: MessageInput): Array<{ path: Array<string | number>; message: string }> {
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  if (m.toolCalls && m.role !== "ASSISTANT") out.push({ path: ["toolCalls"], message: "toolCalls are only allowed on ASSISTANT messages" });
  if (m.toolCallId && m.role !== "TOOL") out.push({ path: ["toolCallId"], message: "toolCallId is only allowed on TOOL messages" });
  if ((m.tags ?? []).filter((t) => t.startsWith("STRENGTH:")).length > 1) out.push({ path: ["tags"], message: "at most one STRENGTH tag" });
  // The strength analyzer's mark says a rating is the analyzer's, not the caller's: never sent.
  if ((m.tags ?? []).some(isAnalyzerMark)) out.push({ path: ["tags"], message: `${ANALYZER_MARK_PREFIX}... tags are reserved for the strength analyzer` });
  return out;
}

function normalize(body: MessageBody, issues: Issue[]): MessageInput {
  const fail = (problems: Array<{ path: Array<string | number>; message: string }>) => {
    for (const p of problems) issues.push({ code: "custom", message: p.message, input: body, path: p.path });
    return z.NEVER as never;
  };
  const { native, ...rest } = body;
  let message: MessageInput;
  if (native === undefined) {
    const missing = (["role", "content"] as const).filter((f) => body[f] === undefined);
    if (missing.length > 0) return fail(missing.map((f) => ({ path: [f], message: "is required (unless the message has native content)" })));
    message = { ...rest, role: body.role!, content: body.content! };
  } else {
    const out = projectMessage({ ...rest, native });
    if (!out.ok) return fail(out.problems);
    message = { ...rest, ...out.message, native };
  }
  const problems = messageProblems(message);
  return problems.length > 0 ? fail(problems) : message;
}

/**
 * One message as a caller appends it (alone or as part of a turn): plain text and tool calls, or
 * native content with its projection derived (core/domain/native/message-input.ts).
 */
export const MessageInput = z.pipe(
  MessageFields,
  z.transform((body: MessageBody, ctx) => normalize(body, ctx.issues as unknown as Issue[])),
);

/** The tag of the SYSTEM marker a range compaction leaves: `RECOMPACTION:<topicLabel>`. */
export const RANGE_MARKER_PREFIX = "RECOMPACTION:";

/**
 * A topic label ends up in the tag `RECOMPACTION:<topicLabel>`, so it follows the tag rules: at
 * most 128 characters with the prefix, no control characters, and not blank. Checked where a
 * label enters (the range route, the PlanCompleted event), never later inside a compaction.
 */
export const TopicLabel = Unicode.check(
  z.minLength(1),
  z.maxLength(
    MAX_TAG_CHARS - RANGE_MARKER_PREFIX.length,
    `must be at most ${MAX_TAG_CHARS - RANGE_MARKER_PREFIX.length} characters (it becomes the tag ${RANGE_MARKER_PREFIX}<topicLabel>)`,
  ),
  z.regex(/^[^\p{Cc}]+$/u, "must hold no control characters (it becomes a tag)"),
  z.refine((t) => t.trim().length > 0, "must not be blank"),
);

const utf8Bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** What a message weighs against MAX_MESSAGE_BYTES: content, tags, toolCallId and each tool call's id, name and arguments. */
export function messageBytes(m: { content: string; tags?: readonly string[] | undefined; toolCallId?: string | undefined; toolCalls?: readonly ToolCall[] | undefined }): number {
  let bytes = utf8Bytes(m.content) + utf8Bytes(m.toolCallId ?? "");
  for (const tag of m.tags ?? []) bytes += utf8Bytes(tag);
  for (const call of m.toolCalls ?? []) bytes += utf8Bytes(call.id) + utf8Bytes(call.name) + utf8Bytes(call.arguments);
  return bytes;
}
