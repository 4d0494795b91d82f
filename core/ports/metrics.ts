/** Low-cardinality counters of what compaction did (EMF in Lambda). */
export type CompactionMetricMode = "soft" | "hard" | "emergency" | "range";

/** What became of a prepared fold. */
export type PreparedFoldOutcome = "used" | "discarded" | "expired";

export interface Metrics {
  compaction(mode: CompactionMetricMode, compactedMessages: number): void;
  /** Wall time of the summarizer calls of one fold (prepared, inline or in the worker). */
  summarizerWallTime(mode: CompactionMetricMode, ms: number): void;
  preparedFold(outcome: PreparedFoldOutcome): void;
  flush(): void;
}
