/**
 * What the commit protocol's two transactions write (docs/compaction.md, "The commit protocol"):
 * a fold's commit and an undo. Part of the Store port (store.ts re-exports them).
 */
import type { LastTurn } from "../domain/last-turn.js";
import type { Memory, Message } from "../domain/model.js";

export interface CompactionCommit {
  leaseOwner: string;
  expectedVersion: number;
  /** The new OK memory; it becomes the active summary. */
  memory: Memory;
  /** The summary this one replaces (it gets supersededAt / supersededByMemoryId). */
  priorSummaryId: string | null;
  /** Messages to archive into `memory` (its sourceRefs); more than fit one transaction roll forward. */
  archiveIds: string[];
  /** An extra message written in the same transaction (the range marker). */
  marker?: Message;
  /** The replay epoch and the last turn's record as read: META's map is written whole. */
  replayEpoch: number;
  lastTurn?: LastTurn;
  /** `memory` replaces a background fold of the same id that must still have this status. */
  fromFold?: "QUEUED" | "PREPARED";
  at: string;
}

/** Undoes the newest compaction (docs/compaction.md, "Undoing a compaction"). */
export interface RevertCommit {
  leaseOwner: string;
  expectedVersion: number;
  /** The active OK memory to revert; it becomes REVERTED. */
  memoryId: string;
  /** The summary it superseded, active again (null: no summary is active afterwards). */
  priorSummaryId: string | null;
  /** The memory's sourceRefs, oldest first: made active again; more than fit one transaction roll forward. */
  restoreIds: string[];
  /** A range compaction's marker message, archived into the reverted memory. */
  markerId?: string;
  /**
   * The TTL (epoch seconds) the originals carry under a retention: the originals the transaction
   * cannot restore lose it before the transaction, so a late roll-forward finds them all.
   */
  originalsExpireAtEpoch?: number;
  /** Own replay tokens from which an automatic compaction may fold again (the revert hold). */
  holdTokens: number;
  replayEpoch: number;
  /** The last turn's record as the undo read it: kept beside the hold, which shares its place on META. */
  lastTurn?: LastTurn;
  at: string;
}
