/**
 * The public shapes of the service (api.md), as zod schemas with their inferred types. Storage
 * items are separate types (core/adapters/dynamodb/items.ts).
 */
import * as z from "zod";

export const Role = z.enum(["USER", "ASSISTANT", "SYSTEM", "TOOL"]);
export type Role = z.infer<typeof Role>;

export const ToolCall = z.object({
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  arguments: z.string().max(100_000),
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
  chars: z.number().int().nonnegative(),
  tokens: z.number().int().nonnegative(),
});
export type ClearedResult = z.infer<typeof ClearedResult>;

export const Message = z.object({
  id: z.string(),
  processId: z.string(),
  role: Role,
  content: z.string(),
  tags: z.array(z.string()),
  createdAt: z.string(),
  archivedInMemoryId: z.string().nullable(),
  toolCallId: z.string().optional(),
  toolCalls: z.array(ToolCall).optional(),
  /**
   * What the message costs in the replay: estimated once at append (see core/domain/tokens.ts),
   * and the placeholder's estimate once the result is cleared.
   */
  tokens: z.number().int().nonnegative(),
  /** Set once a TOOL result is cleared; the replay then shows a placeholder instead of `content`. */
  cleared: ClearedResult.optional(),
  /** Only in a replay: a placeholder result for a call whose result never arrived (never stored). */
  missingResult: z.literal(true).optional(),
});
export type Message = z.infer<typeof Message>;

export const MemoryKind = z.enum(["ARCHIVED_CHAT"]);
export type MemoryKind = z.infer<typeof MemoryKind>;

/**
 * OK and FAILED are summaries and failures; REVERTED is an undone compaction kept for audit;
 * QUEUED, PREPARED and DISCARDED are background folds (docs/compaction.md, "Off the turn's
 * critical path"). Only OK is ever replayed.
 */
export const MemoryStatus = z.enum(["OK", "FAILED", "REVERTED", "QUEUED", "PREPARED", "DISCARDED"]);
export type MemoryStatus = z.infer<typeof MemoryStatus>;

export const CompactionModeName = z.enum(["NONE", "SOFT", "HARD", "EMERGENCY"]);
export type CompactionModeName = z.infer<typeof CompactionModeName>;

/** A salient unit (name, number, date, identifier, ...) of folded messages that a summary no longer carries. */
export const LossUnit = z.object({ text: z.string(), messageIds: z.array(z.string()) });
export type LossUnit = z.infer<typeof LossUnit>;

export const MemoryMetadata = z.object({
  compactedMessages: z.number().int().nonnegative(),
  provider: z.string(),
  model: z.string(),
  supersededMemoryId: z.string().optional(),
  recompaction: z.boolean().optional(),
  topicLabel: z.string().optional(),
  rangeFromAt: z.string().optional(),
  rangeToAt: z.string().optional(),
  error: z.string().optional(),
  mode: z.string().optional(),
  usage: z
    .object({ inputTokens: z.number().optional(), outputTokens: z.number().optional() })
    .optional(),
  tokensBefore: z.number().optional(),
  tokensAfter: z.number().optional(),
  summarizerCalls: z.number().optional(),
  /**
   * What the fold lost: how many salient units the folded messages held, how many the summary
   * still carries, and the most salient dropped ones (the full list: `GET .../memories/{id}`).
   */
  loss: z
    .object({ units: z.number().int(), kept: z.number().int(), dropped: z.array(LossUnit) })
    .optional(),
  /** On a FAILED row written by the quality gate: which check failed, and on what. */
  qualityGate: z.object({ check: z.string(), detail: z.string().optional(), attempts: z.number().int() }).optional(),
  /** Tags the strength analyzer wrote before this fold, and what its model call cost. */
  strengthAnalyzer: z
    .object({
      analyzer: z.string(),
      tagged: z.number().int(),
      usage: z.object({ inputTokens: z.number().optional(), outputTokens: z.number().optional() }).optional(),
      /** Why the model's answer was not used (nothing was tagged then). */
      error: z.string().optional(),
    })
    .optional(),
  /** Wall time of all summarizer calls of this fold (parallel chunks and the merge), in ms. */
  summarizerMs: z.number().optional(),
  /** How the fold was produced: summarized in the request, committed from a prepared fold, or by the worker. */
  producedBy: z.enum(["inline", "prepared", "worker"]).optional(),
  /** Queued and prepared folds (never replayed): the mode they were prepared for and their life. */
  preparedFor: z.string().optional(),
  job: z.enum(["prepare", "manual", "range"]).optional(),
  /** A queued range job: the accepted inbox offer it runs (its range is in rangeFromAt/rangeToAt/topicLabel). */
  inboxItemId: z.string().optional(),
  queuedAt: z.string().optional(),
  preparedAt: z.string().optional(),
  expiresAt: z.string().optional(),
  contextWindow: z.number().optional(),
  /** The META version a queued fold was queued at: the worker only runs it on that state. */
  queuedAtVersion: z.number().optional(),
  /** A queued manual compaction: whether it was forced, and its instructions. */
  forced: z.boolean().optional(),
  instructions: z.string().optional(),
  discardReason: z.string().optional(),
  discardedAt: z.string().optional(),
  /** The SYSTEM marker a range compaction inserted (archived into the memory if it is reverted). */
  markerMessageId: z.string().optional(),
  /** When the compaction was undone (status REVERTED). */
  revertedAt: z.string().optional(),
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
  supersededAt: z.string().nullable(),
  supersededByMemoryId: z.string().optional(),
  /** Token estimate of `content`, so a turn can sum the replay without re-counting. */
  tokens: z.number().int().nonnegative(),
  /**
   * Per line of `content`, the ids of the messages it came from. Stored beside the summary and
   * outside the replay index: the replayed text carries no citations.
   */
  citations: z.array(z.array(z.string())).optional(),
  /** Every dropped unit of the loss report (bounded), most salient first; not in the replay index. */
  droppedUnits: z.array(LossUnit).optional(),
  /**
   * Units of strong and pinned messages this summary was required to keep; the next fold requires
   * them again while the summary still carries them, so they survive recompaction. Not replayed.
   */
  keepUnits: z.array(z.string()).optional(),
});
export type Memory = z.infer<typeof Memory>;

export const Process = z.object({
  processId: z.string(),
  projectId: z.string(),
  sessionId: z.string().optional(),
  parentProcessId: z.string().optional(),
  name: z.string().optional(),
  recipe: z.string().optional(),
  engine: z.string().optional(),
  title: z.string().optional(),
  allowsCrossProjectSpawn: z.boolean(),
  createdAt: z.string(),
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
  answeredAt: z.string().optional(),
});
export type InboxItem = z.infer<typeof InboxItem>;

export const CompactionResult = z.object({
  mode: CompactionModeName,
  compacted: z.boolean(),
  memoryId: z.string().optional(),
  compactedMessages: z.number().int().nonnegative(),
  tokensBefore: z.number().int().nonnegative(),
  tokensAfter: z.number().int().nonnegative(),
  reason: z.string().optional(),
  /**
   * A turn whose prompt would exceed the emergency threshold while its fold is queued: how many of
   * the oldest foldable messages the answer left out (the stored history keeps them), and their
   * tokens in the caller's unit.
   */
  trimmed: z.object({ messages: z.number().int().nonnegative(), tokens: z.number().int().nonnegative() }).optional(),
  /** TOOL results this call cleared from the replay before deciding on a fold (absent: none). */
  clearedMessages: z.number().int().nonnegative().optional(),
});
export type CompactionResult = z.infer<typeof CompactionResult>;

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
