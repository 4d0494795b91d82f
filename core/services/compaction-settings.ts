/** How compaction runs in this deployment (docs/compaction.md, "Off the turn's critical path"); createDeps reads it from the environment. */
export interface CompactionSettings {
  /** `background` (default): no turn calls a summarizer. `inline`: a turn summarizes itself. */
  execution: "inline" | "background";
  /** A manual compaction answers within this, or 202 queued (well inside API Gateway's 29 s). */
  manualBudgetMs: number;
  /** A queued or prepared fold nobody committed expires after this (and DynamoDB's TTL deletes it). */
  preparedTtlMs: number;
  /** A fold still QUEUED after this is taken for lost (worker crash, dead-letter) and queued again. */
  queueTimeoutMs: number;
  /** How long the worker waits for another holder's lease before failing the delivery. */
  leaseWaitMs: number;
}

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = Object.freeze({
  execution: "background",
  manualBudgetMs: 20_000,
  preparedTtlMs: 3_600_000,
  queueTimeoutMs: 600_000,
  leaseWaitMs: 30_000,
});
