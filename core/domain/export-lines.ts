/**
 * The lines of an export (docs/api.md, "Export and import"): the header, and every line after it
 * told apart by its `kind`, each held to the rules the API applies to the same fields, with the
 * caps an import holds every line to. The scanner and the writers are in process-export.ts.
 */
import { ContextWindow, Id, Instructions, IsoTime, MAX_MESSAGE_BYTES, MAX_TAGS, MAX_TOOL_CALLS, messageBytes, ProcessInput, TagText, Text, ToolCallInput, ToolRef, TopicLabel, Unicode } from "./fields.js";
import { parseStrengthTag, strengthTag } from "./strength.js";
import { ClearedResult, LossUnit, Memory, MemoryMetadata, Message, Process } from "./model.js";
import { Ledger } from "./ledger/model.js";
import * as z from "./zod.js";
import { jsonDepth, NATIVE_MAX_DEPTH } from "./native/blob-parts.js";
import { blockBytes, NATIVE_BLOCK_MAX_BYTES } from "./native/memory-block.js";
import { NativeContent } from "./native/formats.js";

export const EXPORT_FORMAT = "vancetope-memory-export";
/** 2: message lines carry their native content whole. A version 1 file (no native content) still imports. */
export const EXPORT_VERSION = 2;

/** Most message and memory lines one HTTP import holds (docs/api.md, "Export and import"). */
export const MAX_IMPORT_ITEMS = 1000;

/** A stored message's tags: the caller's, plus the strength tag and the analyzer's mark the service adds. */
const MAX_STORED_TAGS = MAX_TAGS + 2;
/** Most ids, lines or units in each of a memory's lists. */
const MAX_MEMORY_LIST = 10_000;
/** Longest loss unit, kept unit or error text of a memory. */
const MAX_UNIT_CHARS = 4_000;
/**
 * Most array elements and object fields in one line, counted before its schema is checked: the
 * schema library collects every element's problem, and too many of them overflow its stack.
 */
export const MAX_LINE_VALUES = 50_000;
/** Problems named in a line's 400; the rest are counted (`details.problemCount`). */
export const MAX_REPORTED_PROBLEMS = 10;

const list = <T extends z.ZodMiniType>(item: T, max: number) => z.array(item).check(z.maxLength(max));

/** A tag as stored: the rules of {@link Tag}, a strength tag already in its one spelling. */
const StoredTag = TagText.check(
  z.refine((t) => {
    const strength = parseStrengthTag(t);
    return !strength || t === strengthTag(strength);
  }, `a strength tag is spelled STRENGTH:weak|normal|strong|pinned`),
);


export const ExportHeader = z.strictObject({
  format: z.literal(EXPORT_FORMAT),
  /** The versions this service reads: 1 (messages without native content) and 2. */
  version: z.literal([1, EXPORT_VERSION]),
  processId: Id,
  exportedAt: IsoTime,
});
export type ExportHeader = z.infer<typeof ExportHeader>;

/**
 * A stored message (`missingResult` exists only in a replay, never in an export); an archived
 * original's `expiresAt` is a time, since an import gives it back to the table as the TTL. Its
 * `native` is the content whole (blobs put back), so a file is self-contained.
 */
export const ExportedMessage = z
  .extend(z.omit(Message, { missingResult: true }), {
    // A line is held to the rules the API applies to the same fields (core/domain/fields.ts): what
    // an append or a PUT would refuse, an import refuses too.
    id: Id,
    processId: Id,
    content: Unicode,
    tags: list(StoredTag, MAX_STORED_TAGS),
    createdAt: IsoTime,
    archivedInMemoryId: z.nullable(Id),
    toolCallId: z.optional(ToolRef),
    toolCalls: z.optional(list(ToolCallInput, MAX_TOOL_CALLS)),
    toolCallIds: z.optional(list(ToolRef, MAX_TOOL_CALLS)),
    cleared: z.optional(z.extend(ClearedResult, { at: IsoTime, toolName: ToolRef, errors: z.optional(list(Text(200), 3)) })),
    expiresAt: z.optional(IsoTime),
  })
  .check(
    z.refine((m) => messageBytes(m) <= MAX_MESSAGE_BYTES, {
      message: `is larger than ${MAX_MESSAGE_BYTES} bytes (content, tags and tool calls in UTF-8, as an append counts them)`,
      path: ["content"],
    }),
  );

const Units = list(z.extend(LossUnit, { text: Text(MAX_UNIT_CHARS), messageIds: list(Id, MAX_MEMORY_LIST) }), MAX_MEMORY_LIST);

/** A stored memory, its ids, times and the fields a caller can set held to the API's rules. */
const ImportedMemory = z.extend(Memory, {
  // An export carries the block whole (`native`); the blob a stored memory names is the exporter's.
  nativeBlob: z.optional(z.never()),
  id: Id,
  processId: Id,
  content: Text(MAX_MESSAGE_BYTES),
  sourceRefs: list(Id, MAX_MEMORY_LIST),
  createdAt: IsoTime,
  supersededAt: z.nullable(IsoTime),
  supersededByMemoryId: z.optional(Id),
  citations: z.optional(list(list(Id, MAX_MEMORY_LIST), MAX_MEMORY_LIST)),
  droppedUnits: z.optional(Units),
  keepUnits: z.optional(list(Text(MAX_UNIT_CHARS), MAX_MEMORY_LIST)),
  ledger: z.optional(Ledger),
  // A provider fold's block: what a memory keeps, past the inline size as a blob (summarizers.md, "Provider folds").
  native: z.optional(
    NativeContent.check(
      z.refine((n) => jsonDepth(n, NATIVE_MAX_DEPTH) <= NATIVE_MAX_DEPTH && blockBytes(n) <= NATIVE_BLOCK_MAX_BYTES, {
        message: `a memory's native content is at most ${NATIVE_BLOCK_MAX_BYTES} bytes of JSON, ${NATIVE_MAX_DEPTH} levels deep`,
      }),
    ),
  ),
  metadata: z.extend(MemoryMetadata, {
    provider: Text(256),
    model: Text(256),
    supersededMemoryId: z.optional(Id),
    topicLabel: z.optional(TopicLabel),
    rangeFromAt: z.optional(IsoTime),
    rangeToAt: z.optional(IsoTime),
    error: z.optional(Text(MAX_UNIT_CHARS)),
    loss: z.optional(z.object({ units: z.int(), kept: z.int(), dropped: Units, ledger: z.optional(z.object({ items: z.int(), listed: z.int() })) })),
    inboxItemId: z.optional(Id),
    queuedAt: z.optional(IsoTime),
    preparedAt: z.optional(IsoTime),
    extended: z.optional(z.object({ messages: z.int().check(z.nonnegative()), at: IsoTime })),
    expiresAt: z.optional(IsoTime),
    contextWindow: z.optional(ContextWindow),
    instructions: z.optional(Instructions),
    discardReason: z.optional(Text(MAX_UNIT_CHARS)),
    discardedAt: z.optional(IsoTime),
    markerMessageId: z.optional(Id),
    revertedAt: z.optional(IsoTime),
  }),
});

/** The process as a PUT takes it, with its id and creation time. */
const ImportedProcess = z.extend(Process, { ...ProcessInput.shape, processId: Id, allowsCrossProjectSpawn: z.boolean(), createdAt: IsoTime });

const ProcessLine = z.strictObject({ kind: z.literal("process"), process: ImportedProcess, activeSummaryId: z.nullable(Id) });
const MessageLine = z.strictObject({ kind: z.literal("message"), message: ExportedMessage });
const MemoryLine = z.strictObject({ kind: z.literal("memory"), memory: ImportedMemory });
const SettingsLine = z.strictObject({
  kind: z.literal("settings"),
  projectId: Id,
  overrides: z.record(z.string(), z.unknown()),
});
const EndLine = z.strictObject({
  kind: z.literal("end"),
  messages: z.int().check(z.nonnegative()),
  memories: z.int().check(z.nonnegative()),
});
/** Every line of an export after the header, told apart by its `kind`. */
export const ExportEntryLine = z.discriminatedUnion("kind", [ProcessLine, MessageLine, MemoryLine, SettingsLine, EndLine]);
export type ExportLineEntry = z.infer<typeof ExportEntryLine>;
