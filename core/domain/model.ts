/**
 * The public shapes of the service (api.md), as zod schemas with their inferred types. Storage
 * items are separate types (core/adapters/dynamodb/items.ts).
 */
import * as z from "./zod.js";
import { NativeContent, NativeFormat } from "./native/formats.js";
import type { StoredNative } from "./native/blob-parts.js";
import { NativeBlob } from "./native/memory-block.js";
import { LedgerSection, StoredLedger } from "./ledger/section.js";

export const Role = z.enum(["USER", "ASSISTANT", "SYSTEM", "TOOL"]);
export type Role = z.infer<typeof Role>;

/** A role as callers send it: upper case, or lower case as the model SDKs write it; stored upper case. */
export const RoleInput = z.pipe(
  z.enum(["USER", "ASSISTANT", "SYSTEM", "TOOL", "user", "assistant", "system", "tool"]),
  z.transform((r) => r.toUpperCase() as Role),
);

export const ToolCall = z.object({
  id: z.string().check(z.minLength(1), z.maxLength(256)),
  name: z.string().check(z.minLength(1), z.maxLength(256)),
  arguments: z.string().check(z.maxLength(100_000)),
});
export type ToolCall = z.infer<typeof ToolCall>;

/**
 * A TOOL result whose content the replay no longer shows (docs/compaction.md, "Tool-result
 * clearing"): the stored content stays whole; these fields make the placeholder stable.
 */
export const ClearedResult = z.object({
  at: z.string(),
  /** The tool whose result this is, from its call when it was cleared. */
  toolName: z.string(),
  /** Size of the full content, in characters and in estimated tokens (what it cost before). */
  chars: z.int().check(z.nonnegative()),
  tokens: z.int().check(z.nonnegative()),
  /** The replay epoch the placeholder shows from (docs/compaction.md, "Tool-result clearing"); absent: at once. */
  epoch: z.optional(z.int().check(z.nonnegative())),
  /** Its first error lines, kept in the placeholder (docs/evidence-ledger.md, "What it keeps": at most 3 of 200 characters). */
  errors: z.optional(z.array(z.string())),
});
export type ClearedResult = z.infer<typeof ClearedResult>;

export const Message = z.object({
  id: z.string(),
  processId: z.string(),
  role: Role,
  content: z.string(),
  tags: z.array(z.string()),
  createdAt: z.string(),
  archivedInMemoryId: z.nullable(z.string()),
  toolCallId: z.optional(z.string()),
  toolCalls: z.optional(z.array(ToolCall)),
  /**
   * What the message costs in the replay: estimated once at append (see core/domain/tokens.ts),
   * and the placeholder's estimate once the result is cleared.
   */
  tokens: z.int().check(z.nonnegative()),
  /** Set once a TOOL result is cleared; the replay then shows a placeholder instead of `content`. */
  cleared: z.optional(ClearedResult),
  /** Only in a replay: a placeholder result for a call whose result never arrived (never stored). */
  missingResult: z.optional(z.literal(true)),
  /**
   * An archived original under a retention: when it stops being kept (docs/configuration.md,
   * "Retention"). Never on an active message.
   */
  expiresAt: z.optional(z.string()),
  /**
   * What the model API returned, or the engine sent, exactly (docs/api.md, "Native content").
   * Carried by the answers that return a message whole; `content`, `toolCalls` and `toolCallId`
   * are then its text projection.
   */
  native: z.optional(NativeContent),
  /** Every call a TOOL (or USER) message answers, when its native content answers more than one. */
  toolCallIds: z.optional(z.array(z.string())),
});

export type Message = z.infer<typeof Message>;

/**
 * The native content as the store keeps it (large parts as blobs) rides on the message under a
 * symbol: copied with the message (spread), never serialized into an answer, which carries
 * `native` instead.
 */
const STORED_NATIVE = Symbol("storedNative");

/** The native content as stored, when the message has one. */
export const storedNative = (m: Message): StoredNative | undefined => (m as { [STORED_NATIVE]?: StoredNative })[STORED_NATIVE];

/** Sets the native content as stored on `m` (and returns `m`). */
export function setStoredNative<M extends Message>(m: M, stored: StoredNative): M {
  (m as { [STORED_NATIVE]?: StoredNative })[STORED_NATIVE] = stored;
  return m;
}

export const MemoryKind = z.enum(["ARCHIVED_CHAT"]);
export type MemoryKind = z.infer<typeof MemoryKind>;

/**
 * OK and FAILED are summaries and failures; REVERTED is an undone compaction kept for audit;
 * QUEUED, PREPARED and DISCARDED are background folds (docs/compaction.md, "Off the turn's
 * critical path"). Only OK is ever replayed.
 */
export const MemoryStatus = z.enum(["OK", "FAILED", "REVERTED", "QUEUED", "PREPARED", "DISCARDED"]);
export type MemoryStatus = z.infer<typeof MemoryStatus>;

/** The modes a fold runs in; a manual compaction may force one of them. */
export const FoldMode = z.enum(["SOFT", "HARD", "EMERGENCY"]);
export const CompactionModeName = z.enum(["NONE", ...FoldMode.options]);
export type CompactionModeName = z.infer<typeof CompactionModeName>;
/** What a fold is for: a mode of the ladder, or an accepted offer's range. */
export const FoldTarget = z.enum([...FoldMode.options, "RANGE"]);
export type FoldTarget = z.infer<typeof FoldTarget>;
/** The job a queued fold is (docs/compaction.md, "The worker"). */
export const FoldJob = z.enum(["prepare", "manual", "range"]);
export type FoldJob = z.infer<typeof FoldJob>;

/** A salient unit (name, number, date, identifier, ...) of folded messages that a summary no longer carries. */
export const LossUnit = z.object({ text: z.string(), messageIds: z.array(z.string()) });
export type LossUnit = z.infer<typeof LossUnit>;

export const MemoryMetadata = z.object({
  compactedMessages: z.int().check(z.nonnegative()),
  provider: z.string(),
  model: z.string(),
  supersededMemoryId: z.optional(z.string()),
  recompaction: z.optional(z.boolean()),
  topicLabel: z.optional(z.string()),
  rangeFromAt: z.optional(z.string()),
  rangeToAt: z.optional(z.string()),
  error: z.optional(z.string()),
  mode: z.optional(FoldTarget),
  usage: z.optional(z.object({ inputTokens: z.optional(z.number()), outputTokens: z.optional(z.number()) })),
  tokensBefore: z.optional(z.number()),
  tokensAfter: z.optional(z.number()),
  summarizerCalls: z.optional(z.number()),
  /**
   * What the fold lost: how many salient units the folded messages held, how many the summary
   * still carries, and the most salient dropped ones (the full list: `GET .../memories/{id}`).
   */
  loss: z.optional(
    z.object({
      units: z.int(),
      kept: z.int(),
      dropped: z.array(LossUnit),
      /** Entries of the evidence ledger the folded messages made or updated, and how many of them its section lists. */
      ledger: z.optional(z.object({ items: z.int(), listed: z.int() })),
    }),
  ),
  /**
   * The evidence ledger's section of the memory block as rendered when the fold committed (the
   * block replays this text; docs/evidence-ledger.md, "The evidence ledger"), with its counts.
   */
  ledger: z.optional(LedgerSection),
  /** On a FAILED row written by the quality gate: which check failed, and on what. */
  qualityGate: z.optional(z.object({ check: z.string(), detail: z.optional(z.string()), attempts: z.int() })),
  /** The summary was cut to its budget: the summarizer wrote more, and the rest is lost. */
  truncated: z.optional(z.boolean()),
  /** An EMERGENCY fold committed the offline summarizer's summary instead, and why (the failure's code). */
  fallback: z.optional(z.object({ summarizer: z.string(), reason: z.string() })),
  /** Tags the strength analyzer wrote before this fold, and what its model call cost. */
  strengthAnalyzer: z.optional(
    z.object({
      analyzer: z.string(),
      tagged: z.int(),
      usage: z.optional(z.object({ inputTokens: z.optional(z.number()), outputTokens: z.optional(z.number()) })),
      /** Why the model's answer was not used (nothing was tagged then): a summarizer failure code. */
      error: z.optional(z.string()),
    }),
  ),
  /** Wall time of all summarizer calls of this fold (parallel chunks and the merge), in ms. */
  summarizerMs: z.optional(z.number()),
  /** How the fold was produced: summarized in the request, committed from a prepared fold, or by the worker. */
  producedBy: z.optional(z.enum(["inline", "prepared", "worker"])),
  /** Queued and prepared folds (never replayed): the mode they were prepared for and their life. */
  preparedFor: z.optional(FoldTarget),
  job: z.optional(FoldJob),
  /** A queued range job: the accepted inbox offer it runs (its range is in rangeFromAt/rangeToAt/topicLabel). */
  inboxItemId: z.optional(z.string()),
  queuedAt: z.optional(z.string()),
  preparedAt: z.optional(z.string()),
  /**
   * A prepared fold that covered too little when due, extended before its commit by one summary
   * call over the messages appended since: how many it added, and when.
   */
  extended: z.optional(z.object({ messages: z.int().check(z.nonnegative()), at: z.string() })),
  expiresAt: z.optional(z.string()),
  contextWindow: z.optional(z.number()),
  /**
   * What the fold keeps whole, by the chat model's fold rules when it was queued (docs/turns.md,
   * "What a fold may keep"): `turn` for a model whose folds end at turn boundaries. Absent: tool groups.
   */
  foldUnit: z.optional(z.enum(["tool_group", "turn"])),
  /** The META version a queued fold was queued at: the worker only runs it on that state. */
  queuedAtVersion: z.optional(z.number()),
  /** A queued manual compaction: whether it was forced, and its instructions. */
  forced: z.optional(z.boolean()),
  instructions: z.optional(z.string()),
  discardReason: z.optional(z.string()),
  discardedAt: z.optional(z.string()),
  /** The SYSTEM marker a range compaction inserted (archived into the memory if it is reverted). */
  markerMessageId: z.optional(z.string()),
  /** When the compaction was undone (status REVERTED). */
  revertedAt: z.optional(z.string()),
  /**
   * The retention in force when the fold committed: its originals expire this many days after
   * `createdAt` (docs/configuration.md, "Retention"). Absent: kept forever.
   */
  retentionDays: z.optional(z.int().check(z.positive())),
  /** A provider's fold (docs/summarizers.md, "Provider folds"): its block's format, whether `native` holds it, why not. */
  providerFold: z.optional(
    z.object({
      format: NativeFormat,
      block: z.boolean(),
      note: z.optional(z.string()),
      /** Messages the block stands for that stay active (pinned, the turn's own): a replay with the block leaves them out. */
      covered: z.optional(z.array(z.string())),
      /** The provider refused the block (docs/turns.md, "The provider's block"): replays read the summary instead. */
      refused: z.optional(z.object({ at: z.string(), error: z.optional(z.string()) })),
    }),
  ),
});
export type MemoryMetadata = z.infer<typeof MemoryMetadata>;

export const Memory = z.object({
  id: z.string(),
  processId: z.string(),
  kind: MemoryKind,
  status: MemoryStatus,
  content: z.string(),
  sourceRefs: z.array(z.string()),
  metadata: MemoryMetadata,
  createdAt: z.string(),
  supersededAt: z.nullable(z.string()),
  supersededByMemoryId: z.optional(z.string()),
  /**
   * Token estimate of what the memory replays, `content` and its evidence ledger's section, so a
   * turn can sum the replay without re-counting.
   */
  tokens: z.int().check(z.nonnegative()),
  /**
   * Per line of `content`, the ids of the messages it came from. Stored beside the summary and
   * outside the replay index: the replayed text carries no citations.
   */
  citations: z.optional(z.array(z.array(z.string()))),
  /** Every dropped unit of the loss report (bounded), most salient first; not in the replay index. */
  droppedUnits: z.optional(z.array(LossUnit)),
  /**
   * Units of strong and pinned messages this summary was required to keep; the next fold requires
   * them again while the summary still carries them, so they survive recompaction. Not replayed.
   */
  keepUnits: z.optional(z.array(z.string())),
  /**
   * The evidence ledger of every message this summary stands for (docs/compaction.md, "The
   * evidence ledger"): carried forward by each fold, never summarized. Not in the replay index
   * (the block replays `metadata.ledger.text`); answered by `GET .../memories/{id}`.
   */
  ledger: z.optional(StoredLedger),
  /**
   * A provider fold's block, exactly as the provider returned it (docs/summarizers.md, "Provider
   * folds"): replayed to that provider's models; `content` is its readable summary.
   */
  native: z.optional(NativeContent),
  /**
   * A block past what the memory's item keeps inline: the blob it is kept in (`native` is then
   * absent). Put back only where the block is read: the turn that replays it, the memory's
   * detail, an export, the next fold's chain.
   */
  nativeBlob: z.optional(NativeBlob),
});
export type Memory = z.infer<typeof Memory>;

export const Process = z.object({
  processId: z.string(),
  projectId: z.string(),
  sessionId: z.optional(z.string()),
  parentProcessId: z.optional(z.string()),
  name: z.optional(z.string()),
  recipe: z.optional(z.string()),
  engine: z.optional(z.string()),
  title: z.optional(z.string()),
  allowsCrossProjectSpawn: z.boolean(),
  createdAt: z.string(),
  /**
   * The engine's own `system` and `tools`, as it sends them to its model: a provider fold sends
   * the same (docs/summarizers.md, "Provider folds").
   */
  conversation: z.optional(z.object({ system: z.optional(z.unknown()), tools: z.optional(z.array(z.unknown())) })),
});
export type Process = z.infer<typeof Process>;

export const InboxStatus = z.enum(["OPEN", "ACCEPTED", "DECLINED"]);
export type InboxStatus = z.infer<typeof InboxStatus>;

export const InboxItem = z.object({
  id: z.string(),
  processId: z.string(),
  type: z.literal("APPROVAL"),
  tags: z.array(z.string()),
  status: InboxStatus,
  payload: z.object({ from: z.string(), to: z.string(), topicLabel: z.string() }),
  createdAt: z.string(),
  answeredAt: z.optional(z.string()),
  /**
   * An accepted offer's range job (a memory id), recorded once before the job is stored: every
   * later delivery of the answer finds this job instead of queuing another (docs/compaction.md,
   * "Range jobs").
   */
  rangeJobId: z.optional(z.string()),
});
export type InboxItem = z.infer<typeof InboxItem>;

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
