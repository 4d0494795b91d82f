/**
 * The HTTP request shapes (docs/api.md): bodies, query strings with their string coercions, and
 * the body size limit. The field rules they are built from (ids, tags, text, message and process
 * input) are domain rules and live in core/domain/fields.ts.
 */
import * as z from "zod";
import { Id, MessageInput, ProcessInput, Tag, Text, TopicLabel, Unicode } from "../../domain/fields.js";
import { CompactionModeName } from "../../domain/model.js";
import { STRENGTHS } from "../../domain/strength.js";

/** Largest request body accepted (bytes); DynamoDB's item limit is 400 KB. */
export const MAX_BODY_BYTES = 400 * 1024;

export const PutProcessBody = ProcessInput;
export type PutProcessBody = ProcessInput;

export const AppendMessageBody = MessageInput;
export type AppendMessageBody = MessageInput;

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

/** `GET /context?query=`: the recall query, at most 4000 characters. */
export const ContextQuery = z.object({ query: z.string().max(4000).optional() });

/** PATCH of one message: its one STRENGTH tag (`null` removes it, so the trivial patterns apply again). */
export const PatchMessageBody = z.strictObject({
  strength: z.enum(STRENGTHS).nullable(),
});
export type PatchMessageBody = z.infer<typeof PatchMessageBody>;
