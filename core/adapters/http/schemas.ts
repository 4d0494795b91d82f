/**
 * The HTTP request shapes (docs/api.md): bodies, query strings with their string coercions, and
 * the body size limit. The field rules they are built from (ids, tags, text, message and process
 * input) are domain rules and live in core/domain/fields.ts.
 */
import * as z from "../../domain/zod.js";
import { ContextWindow, Id, Instructions, IsoTime, MessageInput, ProcessInput, Tag, Text, TopicLabel, Unicode } from "../../domain/fields.js";
import { FoldMode } from "../../domain/model.js";
import { ReplayFormat } from "../../domain/native/formats.js";
import { MAX_CONTEXT_WINDOW, MAX_PROMPT_CHARS } from "../../domain/model-windows.js";
import { STRENGTHS } from "../../domain/strength.js";

/** Largest request body accepted (bytes); DynamoDB's item limit is 400 KB. */
export const MAX_BODY_BYTES = 400 * 1024;

/**
 * Largest body of an append or a turn (bytes): a message with native content (screenshots, long
 * tool results) keeps its large parts as blobs, so only Lambda's 6 MB request limit bounds it.
 */
export const MAX_MESSAGE_BODY_BYTES = 5 * 1024 * 1024;

export const PutProcessBody = ProcessInput;
export type PutProcessBody = ProcessInput;

export const AppendMessageBody = MessageInput;
export type AppendMessageBody = MessageInput;

const Limit = (max: number, dflt: number) => z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(max)), dflt);

export const ListProcessesQuery = z.object({
  projectId: z.optional(Id),
  limit: Limit(100, 25),
  cursor: z.optional(z.string().check(z.maxLength(2048))),
});

export const ListMessagesQuery = z.object({
  view: z._default(z.enum(["active", "all"]), "all"),
  limit: Limit(1000, 100),
  cursor: z.optional(z.string().check(z.maxLength(2048))),
});

export const ModelRef = z.strictObject({
  provider: z.optional(Text(64)),
  name: z.optional(Text(256)),
  contextWindow: z.optional(ContextWindow),
});

/**
 * Longest `prompt.text` (characters, as JavaScript counts them): the service only estimates its
 * tokens (chars/4); a longer prompt sends its size as `prompt.chars` or `prompt.tokens` instead.
 */
export const MAX_PROMPT_TEXT_CHARS = 100_000;

/** What the engine is about to send; `tokens` at most the largest window, `chars` at 4 a token. */
export const PromptSize = z.strictObject({
  tokens: z.optional(z.number().check(z.int(), z.nonnegative(), z.lte(MAX_CONTEXT_WINDOW, `must be <= ${MAX_CONTEXT_WINDOW}`))),
  chars: z.optional(z.number().check(z.int(), z.nonnegative(), z.lte(MAX_PROMPT_CHARS, `must be <= ${MAX_PROMPT_CHARS}`))),
  text: z.optional(
    z.string().check(z.maxLength(MAX_PROMPT_TEXT_CHARS, `at most ${MAX_PROMPT_TEXT_CHARS} characters; send prompt.chars or prompt.tokens for a longer prompt`)),
  ),
});

export const CompactionBody = z.strictObject({
  model: ModelRef,
  prompt: z.optional(PromptSize),
  force: z.optional(FoldMode),
  instructions: z.optional(Instructions),
});
export type CompactionBody = z.infer<typeof CompactionBody>;

export const RangeCompactionBody = z
  .strictObject({ from: IsoTime, to: IsoTime, topicLabel: TopicLabel })
  .check(z.refine((b) => Date.parse(b.from) <= Date.parse(b.to), { message: "from must not be after to", path: ["from"] }));

export const TurnBody = z.strictObject({
  message: z.optional(AppendMessageBody),
  model: ModelRef,
  prompt: z.optional(PromptSize),
  query: z.optional(Text(4000)),
  /** The engine's request format: the answer then carries `request` (docs/turns.md). */
  format: z.optional(ReplayFormat),
  /** The provider refused the block a request led with: replay the readable summary (docs/turns.md, "The provider's block"). */
  blockRefused: z.optional(z.strictObject({ memoryId: Id, error: z.optional(Text(1000)) })),
});

/** A query-string switch, `true` or `false`, read as a boolean. */
const Flag = (dflt: "true" | "false") =>
  z.pipe(
    z._default(z.enum(["true", "false"]), dflt),
    z.transform((v: "true" | "false") => v === "true"),
  );

export const MemoriesQuery = z.object({
  kind: z._default(z.enum(["ARCHIVED_CHAT"]), "ARCHIVED_CHAT"),
  includeSuperseded: Flag("true"),
  includeFailed: Flag("false"),
  includePrepared: Flag("false"),
  includeReverted: Flag("false"),
});

export const ExportQuery = z.strictObject({ cursor: z.optional(z.string().check(z.maxLength(2048))) });
export const ImportQuery = z.strictObject({ remapIds: Flag("false") });

export const InboxQuery = z.object({
  processId: z.optional(Id),
  status: z.optional(z.enum(["OPEN", "ACCEPTED", "DECLINED"])),
});

export const AnswerBody = z.strictObject({ accepted: z.boolean() });

export const SettingsQuery = z.object({ projectId: z.optional(Id) });

export const SearchQuery = z.object({
  q: Unicode.check(z.minLength(1), z.maxLength(1000)),
  tag: z.optional(Tag),
  limit: Limit(100, 20),
});

/** `GET /context?query=`: the recall query, at most 4000 characters. */
export const ContextQuery = z.object({ query: z.optional(z.string().check(z.maxLength(4000))) });

/** PATCH of one message: its one STRENGTH tag (`null` removes it, so the trivial patterns apply again). */
export const PatchMessageBody = z.strictObject({
  strength: z.nullable(z.enum(STRENGTHS)),
});
export type PatchMessageBody = z.infer<typeof PatchMessageBody>;
