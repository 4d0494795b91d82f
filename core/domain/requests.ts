/**
 * Validation of everything a caller sends, at the boundary. Limits are documented in the README;
 * ids use a safe alphabet so they can never break a storage key.
 */
import * as z from "zod";
import { CompactionModeName, Role, ToolCall } from "./model.js";
import { STRENGTHS, malformedStrengthTags, parseStrengthTag, strengthTag } from "./strength.js";

/** Largest request body accepted (bytes); DynamoDB's item limit is 400 KB. */
export const MAX_BODY_BYTES = 400 * 1024;
/** Largest message content (UTF-8 bytes), leaving room for tags, tool calls and keys in one item. */
export const MAX_CONTENT_BYTES = 256 * 1024;
export const MAX_TAGS = 50;
export const MAX_TAG_CHARS = 128;

export const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]*$/, "use letters, digits and . _ : @ - (max 128)");

/** Lone UTF-16 surrogates cannot be stored as UTF-8 (DynamoDB rejects them): a 400, not a 500. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const Unicode = z.string().refine((s) => !LONE_SURROGATE.test(s), {
  message: "must be valid Unicode (no lone surrogates)",
});

const Text = (max: number) => Unicode.max(max);

export const PutProcessBody = z.strictObject({
  projectId: Id,
  sessionId: Id.optional(),
  parentProcessId: Id.optional(),
  name: Text(256).optional(),
  recipe: Text(256).optional(),
  engine: Text(256).optional(),
  title: Text(1024).optional(),
  allowsCrossProjectSpawn: z.boolean().optional(),
});
export type PutProcessBody = z.infer<typeof PutProcessBody>;

/**
 * A tag. Strength tags are stored in one spelling only, `STRENGTH:<strength>` (docs/api.md): any
 * other case or surrounding blanks (`strength:Pinned `) are rewritten to it here, so the selector
 * needs to match only that form; a `STRENGTH:` tag in any case that names no strength is a 400
 * that quotes it.
 */
export const Tag = Unicode.min(1)
  .max(MAX_TAG_CHARS)
  .regex(/^[^\p{Cc}]+$/u, "tags hold no control characters")
  .superRefine((t, ctx) => {
    if (malformedStrengthTags([t]).length > 0) {
      ctx.addIssue({ code: "custom", message: `'${t}' is not a strength tag: use STRENGTH:weak|normal|strong|pinned` });
    }
  })
  .transform((t) => {
    const strength = parseStrengthTag(t);
    return strength ? strengthTag(strength) : t;
  });

const MessageFields = z.strictObject({
  role: Role,
  content: Unicode,
  tags: z.array(Tag).max(MAX_TAGS).optional(),
  idempotencyKey: Id.optional(),
  toolCallId: Text(256).min(1).optional(),
  toolCalls: z.array(ToolCall).max(128).optional(),
});

export const AppendMessageBody = MessageFields.refine((b) => !b.toolCalls || b.role === "ASSISTANT", {
  message: "toolCalls are only allowed on ASSISTANT messages",
  path: ["toolCalls"],
})
  .refine((b) => !b.toolCallId || b.role === "TOOL", {
    message: "toolCallId is only allowed on TOOL messages",
    path: ["toolCallId"],
  })
  .refine((b) => (b.tags ?? []).filter((t) => t.startsWith("STRENGTH:")).length <= 1, {
    message: "at most one STRENGTH tag",
    path: ["tags"],
  });
export type AppendMessageBody = z.infer<typeof AppendMessageBody>;

const Limit = (max: number, dflt: number) => z.coerce.number().int().min(1).max(max).default(dflt);

export const ListProcessesQuery = z.object({
  projectId: Id.optional(),
  limit: Limit(100, 25),
  cursor: z.string().max(2048).optional(),
});

export const ListMessagesQuery = z.object({
  view: z.enum(["active", "all"]).default("all"),
  limit: Limit(1000, 100),
  cursor: z.string().max(2048).optional(),
});

export const ModelRef = z.strictObject({
  provider: Text(64).optional(),
  name: Text(256).optional(),
  contextWindow: z.number().int().min(1000).max(100_000_000).optional(),
});

export const PromptSize = z.strictObject({
  tokens: z.number().int().nonnegative().optional(),
  chars: z.number().int().nonnegative().optional(),
  text: z.string().optional(),
});

export const CompactionBody = z.strictObject({
  model: ModelRef,
  prompt: PromptSize.optional(),
  force: CompactionModeName.exclude(["NONE"]).optional(),
  instructions: Text(2000).optional(),
});
export type CompactionBody = z.infer<typeof CompactionBody>;

const IsoTime = z.iso.datetime({ offset: true });

/** The tag of the SYSTEM marker a range compaction leaves: `RECOMPACTION:<topicLabel>`. */
export const RANGE_MARKER_PREFIX = "RECOMPACTION:";

/**
 * A topic label ends up in the tag `RECOMPACTION:<topicLabel>`, so it follows the tag rules: at
 * most 128 characters with the prefix, no control characters, and not blank. Checked where a
 * label enters (the range route, the PlanCompleted event), never later inside a compaction.
 */
export const TopicLabel = Unicode.min(1)
  .max(MAX_TAG_CHARS - RANGE_MARKER_PREFIX.length, `must be at most ${MAX_TAG_CHARS - RANGE_MARKER_PREFIX.length} characters (it becomes the tag ${RANGE_MARKER_PREFIX}<topicLabel>)`)
  .regex(/^[^\p{Cc}]+$/u, "must hold no control characters (it becomes a tag)")
  .refine((t) => t.trim().length > 0, "must not be blank");

export const RangeCompactionBody = z
  .strictObject({ from: IsoTime, to: IsoTime, topicLabel: TopicLabel })
  .refine((b) => Date.parse(b.from) <= Date.parse(b.to), { message: "from must not be after to", path: ["from"] });

export const TurnBody = z.strictObject({
  message: AppendMessageBody.optional(),
  model: ModelRef,
  prompt: PromptSize.optional(),
  query: Text(4000).optional(),
});

export const MemoriesQuery = z.object({
  kind: z.enum(["ARCHIVED_CHAT"]).default("ARCHIVED_CHAT"),
  includeSuperseded: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
  includeFailed: z.enum(["true", "false"]).default("false").transform((v) => v === "true"),
  includePrepared: z.enum(["true", "false"]).default("false").transform((v) => v === "true"),
  includeReverted: z.enum(["true", "false"]).default("false").transform((v) => v === "true"),
});

export const InboxQuery = z.object({
  processId: Id.optional(),
  status: z.enum(["OPEN", "ACCEPTED", "DECLINED"]).optional(),
});

export const AnswerBody = z.strictObject({ accepted: z.boolean() });

export const SettingsQuery = z.object({ projectId: Id.optional() });

export const SearchQuery = z.object({
  q: Unicode.min(1).max(1000),
  tag: Tag.optional(),
  limit: Limit(100, 20),
});

export const contentBytes = (s: string) => Buffer.byteLength(s, "utf8");

/** PATCH of one message: its one STRENGTH tag (`null` removes it, so the trivial patterns apply again). */
export const PatchMessageBody = z.strictObject({
  strength: z.enum(STRENGTHS).nullable(),
});
export type PatchMessageBody = z.infer<typeof PatchMessageBody>;
