/**
 * The memory (a summary and its fold) as the client sees it; types.ts re-exports it.
 */
import type { LossUnit, Message, NativeContent, NativeFormat } from "./types.js";

/**
 * OK and FAILED are summaries and failures; REVERTED is an undone compaction; QUEUED, PREPARED and
 * DISCARDED are background folds, never replayed.
 */
export type MemoryStatus = "OK" | "FAILED" | "REVERTED" | "QUEUED" | "PREPARED" | "DISCARDED";

export interface Memory {
  id: string;
  processId: string;
  kind: "ARCHIVED_CHAT";
  status: MemoryStatus;
  content: string;
  sourceRefs: string[];
  metadata: {
    compactedMessages: number;
    provider: string;
    model: string;
    supersededMemoryId?: string;
    recompaction?: boolean;
    topicLabel?: string;
    rangeFromAt?: string;
    rangeToAt?: string;
    error?: string;
    /** The compaction mode; RANGE on a range compaction. */
    mode?: "SOFT" | "HARD" | "EMERGENCY" | "RANGE";
    /** The prompt before and after the fold, as recorded at commit time (the caller's units). */
    tokensBefore?: number;
    tokensAfter?: number;
    /** What the fold lost: salient units of the folded messages, how many the summary kept, the most salient dropped. */
    loss?: { units: number; kept: number; dropped: LossUnit[] };
    /** Wall time of all summarizer calls of this fold, in ms. */
    summarizerMs?: number;
    producedBy?: "inline" | "prepared" | "worker";
    /** Background folds: the mode they were prepared for, and why one was discarded. */
    preparedFor?: "SOFT" | "HARD" | "EMERGENCY" | "RANGE";
    discardReason?: string;
    /** The SYSTEM marker message a range compaction inserted. */
    markerMessageId?: string;
    /** When the compaction was undone (status REVERTED). */
    revertedAt?: string;
    /** The retention in force when the fold committed: its originals expire this many days after `createdAt`. */
    retentionDays?: number;
    /** A fold a provider wrote: its block's format, whether the memory holds it, and why not. */
    providerFold?: { format: NativeFormat; block: boolean; note?: string; covered?: string[] };
    [extra: string]: unknown;
  };
  createdAt: string;
  supersededAt: string | null;
  supersededByMemoryId?: string;
  /** A provider fold's block, exactly as the provider returned it; `content` is its readable summary. */
  native?: NativeContent;
  /** Token estimate of `content`: what the summary costs in every replay. */
  tokens: number;
}

/** What `GET /v1/processes/{processId}/memories/{memoryId}/sources` answers: the originals a summary folded. */
export interface MemorySources {
  memory: Memory;
  /** The folded messages, oldest first. */
  items: Message[];
  /** Ids of folded messages a retention has removed (docs/configuration.md, "Retention"). */
  expired: string[];
}


/** What `GET /v1/processes/{processId}/memories/{memoryId}` answers. */
export interface MemoryDetail {
  memory: Memory;
  /** Every dropped unit stored (not only the preview in `metadata.loss`), or null when none was measured. */
  loss: { units: number; kept: number; dropped: LossUnit[] } | null;
  /** Per line of the summary (1-based), the messages it came from. */
  provenance: Array<{ line: number; text: string; messageIds: string[] }>;
}
