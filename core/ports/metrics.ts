import type { FoldModeName } from "../domain/mode-policy.js";

/** Low-cardinality counters of what compaction did (EMF in Lambda). */
/** `clear` counts a tool-result clearing round (its messages value: results cleared). */
export type CompactionMetricMode = Lowercase<FoldModeName> | "range" | "clear";

/** Why an incoming event was dropped (docs/deploy.md, "Events from another account"). */
export type EventDropReason = "invalid_detail" | "publisher_not_allowed";

/** What became of a prepared fold. */
export type PreparedFoldOutcome = "used" | "discarded" | "expired" | "extended";

/**
 * What became of a fold's summary: stored (`ok`), or refused (`failed`: a FAILED row, or for an
 * extension the fold committed as it was). The share of `failed` is an alarm (docs/operations.md).
 */
export type FoldOutcome = "ok" | "failed";

/** What a model call was made for: a fold's summary, or the strength analyzer's rating. */
export type ModelPurpose = "summary" | "strength";

/** Calls and tokens of one piece of model work (reported by the provider, else estimated). */
export interface ModelUse {
  calls: number;
  inputTokens: number;
  outputTokens: number;
}

export interface Metrics {
  /** One committed fold or clearing round; `tokensSaved` when known (prompt tokens before minus after). */
  compaction(mode: CompactionMetricMode, compactedMessages: number, tokensSaved?: number): void;
  /**
   * Wall time of the summarizer calls of one fold (prepared, inline or in the worker), under the
   * dimension `mode` and, separately, `provider` (the summarizer that answered).
   */
  summarizerWallTime(mode: CompactionMetricMode, ms: number, provider: string): void;
  /** One fold's summary stored or refused (dimension `outcome`). */
  foldOutcome(outcome: FoldOutcome): void;
  /** One summary the quality gate refused (docs/summarizers.md, "Quality gate"); its check is in the log. */
  qualityGateRefused(): void;
  /** One fold whose summary the offline summarizer gave in place of the failing one. */
  summarizerFallback(): void;
  /** One fold the summarizer could not summarize: a provider error or a summary refused twice (dimension `provider`). */
  summarizerFailed(provider: string): void;
  preparedFold(outcome: PreparedFoldOutcome): void;
  /**
   * One run of the strength analyzer (docs/compaction.md, "Strength analyzer"): how many messages
   * it tagged and, for the model analyzer, the tokens of its call.
   */
  strengthAnalysis(analyzer: "offline" | "model", tagged: number, usage?: { inputTokens?: number; outputTokens?: number }): void;
  /**
   * One piece of model work of a tenant (docs/reliability.md, "Limits, budgets and rates"): its calls and
   * tokens, with the dimensions `tenant` and `purpose`.
   */
  modelUsage(tenantId: string, purpose: ModelPurpose, use: ModelUse): void;
  /** Model work refused because the tenant's daily budget is used up (dimension `tenant`). */
  budgetExceeded(tenantId: string): void;
  /**
   * One provider block an engine reported refused (docs/turns.md, "The provider's block"), under
   * the dimension `format`: later turns replay the readable summary in its place.
   */
  providerBlockRefused(format: string): void;
  /** One undone compaction and how many messages it made active again. */
  revert(restoredMessages: number): void;
  /**
   * Originals a roll-forward found missing (docs/reliability.md, "The invariants"): a
   * restore or an archive that could not reach every message of its memory. Never expected.
   */
  originalsMissing(count: number): void;
  /** One request refused by the per-tenant rate limit (docs/reliability.md, "Limits, budgets and rates"). */
  rateLimited(tenantId: string): void;
  /**
   * One stored setting the tunables resolver could not use (docs/configuration.md, "Stored
   * settings that no longer apply"): the layer it belongs to and the field.
   */
  invalidSetting(layer: "tenant" | "project", field: string): void;
  /** One incoming event dropped without effect, and why. */
  eventDropped(event: string, reason: EventDropReason): void;
  flush(): void;
}
