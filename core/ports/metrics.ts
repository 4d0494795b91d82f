/** Low-cardinality counters of what compaction did (EMF in Lambda). */
/** `clear` counts a tool-result clearing round (its messages value: results cleared). */
export type CompactionMetricMode = "soft" | "hard" | "emergency" | "range" | "clear";

export interface Metrics {
  compaction(mode: CompactionMetricMode, compactedMessages: number): void;
  /** One undone compaction and how many messages it made active again. */
  revert(restoredMessages: number): void;
  flush(): void;
}
