/**
 * Compaction metrics as CloudWatch EMF through Powertools: `vance.memory.compaction` (count),
 * `vance.memory.compaction.messages` and, when known, `vance.memory.compaction.tokens_saved` (one
 * value per run), all with the dimension `mode`; and
 * `vance.memory.revert` / `vance.memory.revert.messages` for undone compactions;
 * `vance.memory.provider_block.refused` per provider block an engine reported refused (dimension `format`);
 * `vance.memory.summarizer.wall_ms` per fold (dimension `mode`, and `provider` as a second set);
 * `vance.memory.fold` per fold's summary (dimension `outcome`: ok, failed),
 * `vance.memory.quality_gate.refused` per refused summary, `vance.memory.summarizer.fallback` per
 * fold the offline summarizer stood in for and `vance.memory.summarizer.errors` per fold the
 * summarizer failed (dimension `provider`): the alarms of docs/operations.md read these;
 * `vance.memory.prepared_fold`
 * (dimension `outcome`: used, discarded, expired); `vance.memory.strength.tagged` and, for the model
 * analyzer, `vance.memory.strength.input_tokens` / `.output_tokens` (dimension `analyzer`);
 * `vance.memory.rate_limited` per refused request (dimension `tenant`: tenants are few per stage,
 * and which one is throttled is what an operator asks); `vance.memory.event.dropped` per incoming
 * event dropped without effect (dimensions `event` and `reason`); `vance.memory.settings.invalid`
 * per stored setting the tunables resolver could not use (dimensions `layer` and `field`);
 * `vance.memory.summarizer.calls`, `.input_tokens` and `.output_tokens` of each piece of model work
 * (dimensions `tenant`, `purpose`: summary or strength) and `vance.memory.budget.exceeded` (dimension
 * `tenant`) for model work refused over a tenant's daily budget.
 */
import { Metrics as PowertoolsMetrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { SERVICE_NAME } from "../../domain/service.js";
import type { CompactionMetricMode, EventDropReason, FoldOutcome, Metrics, ModelPurpose, ModelUse, PreparedFoldOutcome } from "../../ports/metrics.js";

export function createEmfMetrics(options: { namespace?: string; serviceName?: string } = {}): Metrics {
  const metrics = new PowertoolsMetrics({
    namespace: options.namespace ?? process.env.POWERTOOLS_METRICS_NAMESPACE ?? "Vancetope/Memory",
    serviceName: options.serviceName ?? process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME,
  });
  return {
    compaction(mode: CompactionMetricMode, compactedMessages: number, tokensSaved?: number) {
      // Both metrics in one EMF document under one `mode` dimension, published at once. Not
      // `singleMetric()`: it publishes on every `addMetric` and clears the dimensions, so the
      // second metric would go out with only `service`.
      metrics.addDimension("mode", mode);
      metrics.addMetric("vance.memory.compaction", MetricUnit.Count, 1);
      metrics.addMetric("vance.memory.compaction.messages", MetricUnit.Count, compactedMessages);
      if (tokensSaved !== undefined) metrics.addMetric("vance.memory.compaction.tokens_saved", MetricUnit.Count, tokensSaved);
      metrics.publishStoredMetrics();
    },
    summarizerWallTime(mode: CompactionMetricMode, ms: number, provider: string) {
      // One value under two dimension sets ({service, mode} and {service, provider}): the
      // dashboard shows it by mode and by provider without a series per pair.
      metrics.addDimension("mode", mode);
      metrics.addDimensions({ provider });
      metrics.addMetric("vance.memory.summarizer.wall_ms", MetricUnit.Milliseconds, ms);
      metrics.publishStoredMetrics();
    },
    foldOutcome(outcome: FoldOutcome) {
      metrics.addDimension("outcome", outcome);
      metrics.addMetric("vance.memory.fold", MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
    qualityGateRefused() {
      // Only `service`: an alarm reads one series; which check refused is in the log line.
      metrics.singleMetric().addMetric("vance.memory.quality_gate.refused", MetricUnit.Count, 1);
    },
    summarizerFallback() {
      metrics.singleMetric().addMetric("vance.memory.summarizer.fallback", MetricUnit.Count, 1);
    },
    summarizerFailed(provider: string) {
      metrics.addDimension("provider", provider);
      metrics.addMetric("vance.memory.summarizer.errors", MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
    preparedFold(outcome: PreparedFoldOutcome) {
      metrics.addDimension("outcome", outcome);
      metrics.addMetric("vance.memory.prepared_fold", MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
    strengthAnalysis(analyzer, tagged, usage) {
      metrics.addDimension("analyzer", analyzer);
      metrics.addMetric("vance.memory.strength.tagged", MetricUnit.Count, tagged);
      if (usage?.inputTokens !== undefined) metrics.addMetric("vance.memory.strength.input_tokens", MetricUnit.Count, usage.inputTokens);
      if (usage?.outputTokens !== undefined) metrics.addMetric("vance.memory.strength.output_tokens", MetricUnit.Count, usage.outputTokens);
      metrics.publishStoredMetrics();
    },
    modelUsage(tenantId, purpose, use) {
      // One document per piece of work, so each tenant's usage is its own series (docs/reliability.md).
      metrics.addDimensions({ tenant: tenantId, purpose });
      metrics.addMetric("vance.memory.summarizer.calls", MetricUnit.Count, use.calls);
      metrics.addMetric("vance.memory.summarizer.input_tokens", MetricUnit.Count, use.inputTokens);
      metrics.addMetric("vance.memory.summarizer.output_tokens", MetricUnit.Count, use.outputTokens);
      metrics.publishStoredMetrics();
    },
    budgetExceeded(tenantId) {
      metrics.addDimension("tenant", tenantId);
      metrics.addMetric("vance.memory.budget.exceeded", MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
    providerBlockRefused(format) {
      metrics.addDimension("format", format);
      metrics.addMetric("vance.memory.provider_block.refused", MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
    revert(restoredMessages: number) {
      const single = metrics.singleMetric();
      single.addMetric("vance.memory.revert", MetricUnit.Count, 1);
      single.addMetric("vance.memory.revert.messages", MetricUnit.Count, restoredMessages);
    },
    originalsMissing(count: number) {
      metrics.singleMetric().addMetric("vance.memory.originals.missing", MetricUnit.Count, count);
    },
    rateLimited(tenantId: string) {
      metrics.addDimension("tenant", tenantId);
      metrics.addMetric("vance.memory.rate_limited", MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
    eventDropped(event: string, reason: EventDropReason) {
      // Two addDimension calls make one dimension set; addDimensions would add a second set.
      metrics.addDimension("event", event);
      metrics.addDimension("reason", reason);
      metrics.addMetric("vance.memory.event.dropped", MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
    invalidSetting(layer, field) {
      metrics.addDimension("layer", layer);
      metrics.addDimension("field", field);
      metrics.addMetric("vance.memory.settings.invalid", MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
    flush() {
      // Runs publish as they happen; this only catches anything left buffered (without the
      // "no metrics to publish" warning on every invocation that compacted nothing).
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    },
  };
}

/** Records metrics in memory (tests, the chaos harness). */
export function createRecordingMetrics() {
  const runs: Array<{ mode: CompactionMetricMode; compactedMessages: number; tokensSaved?: number }> = [];
  const reverts: number[] = [];
  /** Formats of the provider blocks reported refused, one entry each. */
  const refusedBlocks: string[] = [];
  /** Originals roll-forwards found missing, one entry per roll-forward that found any. */
  const missingOriginals: number[] = [];
  const wallTimes: Array<{ mode: CompactionMetricMode; ms: number; provider: string }> = [];
  const folds: FoldOutcome[] = [];
  /** Quality-gate refusals, summarizer fallbacks, and the providers of failed summaries, one entry each. */
  const summaryTrouble = { gateRefusals: 0, fallbacks: 0, failedProviders: [] as string[] };
  const prepared: PreparedFoldOutcome[] = [];
  const strength: Array<{ analyzer: "offline" | "model"; tagged: number; usage?: { inputTokens?: number; outputTokens?: number } }> = [];
  /** Tenants of the requests the rate limit refused, one entry per request. */
  const limited: string[] = [];
  const droppedEvents: Array<{ event: string; reason: EventDropReason }> = [];
  const modelUse: Array<{ tenantId: string; purpose: ModelPurpose } & ModelUse> = [];
  const budgetRefusals: string[] = [];
  const invalidSettings: Array<{ layer: "tenant" | "project"; field: string }> = [];
  const metrics: Metrics & {
    limited: typeof limited;
    droppedEvents: typeof droppedEvents;
    modelUse: typeof modelUse;
    budgetRefusals: typeof budgetRefusals;
    invalidSettings: typeof invalidSettings;
    runs: typeof runs;
    reverts: typeof reverts;
    refusedBlocks: typeof refusedBlocks;
    missingOriginals: typeof missingOriginals;
    wallTimes: typeof wallTimes;
    folds: typeof folds;
    summaryTrouble: typeof summaryTrouble;
    prepared: typeof prepared;
    strength: typeof strength;
  } = {
    runs,
    strength,
    limited,
    droppedEvents,
    modelUse,
    budgetRefusals,
    invalidSettings,
    reverts,
    refusedBlocks,
    missingOriginals,
    wallTimes,
    folds,
    summaryTrouble,
    prepared,
    compaction: (mode, compactedMessages, tokensSaved) => void runs.push({ mode, compactedMessages, ...(tokensSaved !== undefined ? { tokensSaved } : {}) }),
    summarizerWallTime: (mode, ms, provider) => void wallTimes.push({ mode, ms, provider }),
    foldOutcome: (outcome) => void folds.push(outcome),
    qualityGateRefused: () => void summaryTrouble.gateRefusals++,
    summarizerFallback: () => void summaryTrouble.fallbacks++,
    summarizerFailed: (provider) => void summaryTrouble.failedProviders.push(provider),
    preparedFold: (outcome) => void prepared.push(outcome),
    modelUsage: (tenantId, purpose, use) => void modelUse.push({ tenantId, purpose, ...use }),
    budgetExceeded: (tenantId) => void budgetRefusals.push(tenantId),
    providerBlockRefused: (format) => void refusedBlocks.push(format),
    revert: (restoredMessages) => void reverts.push(restoredMessages),
    originalsMissing: (count) => void missingOriginals.push(count),
    strengthAnalysis: (analyzer, tagged, usage) => void strength.push({ analyzer, tagged, ...(usage ? { usage } : {}) }),
    rateLimited: (tenantId) => void limited.push(tenantId),
    eventDropped: (event, reason) => void droppedEvents.push({ event, reason }),
    invalidSetting: (layer, field) => void invalidSettings.push({ layer, field }),
    flush: () => {},
  };
  return metrics;
}
