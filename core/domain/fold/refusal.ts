/**
 * Why a fold did not land, as one type: the wire `reason` a caller answers and whether a retry of
 * the same job can meet anything else (docs/compaction.md, "The worker").
 */

/** Why model work was refused: what the day's budget is, what is used, what the work needed. */
export interface BudgetRefusal {
  dailyTokens: number;
  usedTokens: number;
  neededTokens: number;
  /** The UTC day counted. */
  day: string;
  /** When the next day's budget starts (UTC midnight). */
  resetsAt: string;
}

/**
 * A limit of the summary's plan that stopped it before (or between) its calls: more calls than a
 * fold may make, or merge rounds that would not shrink. The same fold meets it again on every try.
 */
export type SummaryLimit = "call_cap" | "merge_stalled";

/** The store's refusal of the lease. */
export type LeaseRefusal = "leased" | "version_changed" | "not_found" | "revert_hold";

export type FoldRefusal =
  /** Another holder has the lease, or the state moved since the read (a commit, an undo). */
  | { kind: "lease"; refusal: LeaseRefusal }
  /** The commit transaction was refused: someone committed since our read. */
  | { kind: "commit_conflict" }
  /** The summarizer cannot run at all (nothing was written). */
  | { kind: "summarizer"; reason: string }
  /** The caller no longer wants the fold (abandoned, or its row moved on under the lease). */
  | { kind: "unwanted"; reason: string }
  | { kind: "budget"; refusal: BudgetRefusal }
  /**
   * The summary failed (a FAILED row `memoryId` was written); `code` as the summarizer gave it,
   * `limit` when a limit of its plan stopped it rather than the summarizer.
   */
  | { kind: "summary"; code: string; memoryId: string; limit?: SummaryLimit | undefined }
  /** The summary with its provenance does not fit one stored item (a FAILED row was written). */
  | { kind: "too_large"; memoryId: string }
  /** The fold's own write was refused (its row changed meanwhile). */
  | { kind: "write"; reason: string };

export const BUDGET_EXCEEDED = "budget_exceeded";

/**
 * The reason of a fold whose summary the store refused for its size: its stored provenance (the
 * per-line citations and the loss report) or its sources outgrew one item (DynamoDB's 400 KB).
 */
export const SUMMARY_TOO_LARGE = "summary_too_large: the summary with its provenance and sources does not fit one stored item (400 KB)";

const LEASE_REASON: Readonly<Record<LeaseRefusal, string>> = {
  leased: "compaction_in_progress",
  version_changed: "concurrent_compaction",
  not_found: "concurrent_compaction",
  revert_hold: "reverted_recently",
};

/** The API's `reason` for a refusal (CompactionResult.reason). */
export function wireReason(r: FoldRefusal): string {
  switch (r.kind) {
    case "lease":
      return LEASE_REASON[r.refusal];
    case "commit_conflict":
      return "commit_conflict";
    case "budget":
      return BUDGET_EXCEEDED;
    case "summary":
      return `summarizer_failed: ${r.code}`;
    case "too_large":
      return SUMMARY_TOO_LARGE;
    case "summarizer":
    case "unwanted":
    case "write":
      return r.reason;
  }
}

/**
 * Whether the same job, tried again after a short wait, can meet anything else: only "someone
 * else is compacting this process right now" (a lease held, a version moved, a commit raced).
 */
export function retryHelps(r: FoldRefusal): boolean {
  return (r.kind === "lease" && r.refusal !== "revert_hold") || r.kind === "commit_conflict";
}

/**
 * Whether a range job that met `r` ends (its row discarded) rather than failing the delivery to
 * be retried: the budget, a summary too large, or a limit of the summary's plan, which every retry
 * of the same range would meet again.
 */
export function endsRangeJob(r: FoldRefusal): boolean {
  return r.kind === "budget" || r.kind === "too_large" || (r.kind === "summary" && r.limit !== undefined);
}

/** The discard reason of a job the daily budget refused. */
export const budgetDiscardReason = (r: BudgetRefusal) =>
  `${BUDGET_EXCEEDED}: ${r.usedTokens} of the tenant's ${r.dailyTokens} tokens for ${r.day} (UTC) used, the fold needs up to ${r.neededTokens}`;
