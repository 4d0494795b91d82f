/** The EMF documents the Powertools adapter prints: names, units, values and dimension sets. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createEmfMetrics } from "../../core/adapters/metrics/emf-metrics.js";

interface EmfDocument {
  _aws: {
    CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }>;
  };
  [field: string]: unknown;
}

/** Every JSON line Powertools printed (POWERTOOLS_DEV routes it through the global console). */
function captureEmf() {
  const lines: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
  return {
    spy,
    documents: () => lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as EmfDocument),
  };
}

/** One row per metric of a document: its name, unit, value and the dimension sets it goes out under. */
function metricsOf(doc: EmfDocument) {
  return doc._aws.CloudWatchMetrics.flatMap((directive) =>
    directive.Metrics.map((m) => ({
      name: m.Name,
      unit: m.Unit,
      value: doc[m.Name],
      dimensions: directive.Dimensions.map((set) => Object.fromEntries(set.map((d) => [d, doc[d]]))),
    })),
  );
}

describe("createEmfMetrics", () => {
  beforeEach(() => {
    vi.stubEnv("POWERTOOLS_DEV", "true");
    vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "false");
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it("publishes both compaction metrics with the mode dimension, for every mode", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ namespace: "Test/Memory", serviceName: "memory-test" });
    const modes = ["soft", "hard", "emergency", "range"] as const;
    modes.forEach((mode, i) => metrics.compaction(mode, 10 + i));
    metrics.flush(); // nothing left buffered: no extra document

    const rows = capture.documents().flatMap(metricsOf);
    expect(rows).toEqual(
      modes.flatMap((mode, i) => [
        { name: "vance.memory.compaction", unit: "Count", value: 1, dimensions: [{ service: "memory-test", mode }] },
        { name: "vance.memory.compaction.messages", unit: "Count", value: 10 + i, dimensions: [{ service: "memory-test", mode }] },
      ]),
    );
    expect(capture.documents().every((d) => d._aws.CloudWatchMetrics.every((c) => c.Namespace === "Test/Memory"))).toBe(true);
  });

  it("does not carry one run's mode into the next run's document", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ serviceName: "memory-test" });
    metrics.compaction("hard", 3);
    metrics.compaction("soft", 2);
    const docs = capture.documents();
    expect(docs).toHaveLength(2);
    expect(docs.map((d) => d._aws.CloudWatchMetrics[0]!.Dimensions)).toEqual([[["service", "mode"]], [["service", "mode"]]]);
    expect(docs.map((d) => d.mode)).toEqual(["hard", "soft"]);
  });

  it("publishes the tokens a fold saved beside its count when known", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ serviceName: "memory-test" });
    metrics.compaction("hard", 12, 5_400);
    expect(capture.documents().flatMap(metricsOf)).toEqual([
      { name: "vance.memory.compaction", unit: "Count", value: 1, dimensions: [{ service: "memory-test", mode: "hard" }] },
      { name: "vance.memory.compaction.messages", unit: "Count", value: 12, dimensions: [{ service: "memory-test", mode: "hard" }] },
      { name: "vance.memory.compaction.tokens_saved", unit: "Count", value: 5_400, dimensions: [{ service: "memory-test", mode: "hard" }] },
    ]);
  });

  it("publishes the summarizer's wall time under the mode and, as a second set, the provider", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ serviceName: "memory-test" });
    metrics.summarizerWallTime("soft", 850, "openai");
    metrics.summarizerWallTime("hard", 40, "offline");
    const wallTime = (value: number, mode: string, provider: string) => ({
      name: "vance.memory.summarizer.wall_ms",
      unit: "Milliseconds",
      value,
      dimensions: [
        { service: "memory-test", mode },
        { service: "memory-test", provider },
      ],
    });
    expect(capture.documents().flatMap(metricsOf)).toEqual([wallTime(850, "soft", "openai"), wallTime(40, "hard", "offline")]);
  });

  it("counts folds by outcome, gate refusals and fallbacks under the service alone, and summarizer failures by provider", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ serviceName: "memory-test" });
    metrics.foldOutcome("ok");
    metrics.foldOutcome("failed");
    metrics.qualityGateRefused();
    metrics.summarizerFallback();
    metrics.summarizerFailed("anthropic");
    expect(capture.documents().flatMap(metricsOf)).toEqual([
      { name: "vance.memory.fold", unit: "Count", value: 1, dimensions: [{ service: "memory-test", outcome: "ok" }] },
      { name: "vance.memory.fold", unit: "Count", value: 1, dimensions: [{ service: "memory-test", outcome: "failed" }] },
      { name: "vance.memory.quality_gate.refused", unit: "Count", value: 1, dimensions: [{ service: "memory-test" }] },
      { name: "vance.memory.summarizer.fallback", unit: "Count", value: 1, dimensions: [{ service: "memory-test" }] },
      { name: "vance.memory.summarizer.errors", unit: "Count", value: 1, dimensions: [{ service: "memory-test", provider: "anthropic" }] },
    ]);
  });

  it("counts each request the rate limit refused under its tenant", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ serviceName: "memory-test" });
    metrics.rateLimited("team-a");
    metrics.rateLimited("team-b");
    expect(capture.documents().flatMap(metricsOf)).toEqual([
      { name: "vance.memory.rate_limited", unit: "Count", value: 1, dimensions: [{ service: "memory-test", tenant: "team-a" }] },
      { name: "vance.memory.rate_limited", unit: "Count", value: 1, dimensions: [{ service: "memory-test", tenant: "team-b" }] },
    ]);
  });

  it("counts each dropped incoming event under its event and reason", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ serviceName: "memory-test" });
    metrics.eventDropped("PlanCompleted", "publisher_not_allowed");
    expect(capture.documents().flatMap(metricsOf)).toEqual([
      {
        name: "vance.memory.event.dropped",
        unit: "Count",
        value: 1,
        dimensions: [{ service: "memory-test", event: "PlanCompleted", reason: "publisher_not_allowed" }],
      },
    ]);
  });

  it("counts each stored setting the resolver could not use under its layer and field", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ serviceName: "memory-test" });
    metrics.invalidSetting("project", "softThreshold");
    expect(capture.documents().flatMap(metricsOf)).toEqual([
      {
        name: "vance.memory.settings.invalid",
        unit: "Count",
        value: 1,
        dimensions: [{ service: "memory-test", layer: "project", field: "softThreshold" }],
      },
    ]);
  });

  it("publishes each tenant's model use under the tenant and purpose dimensions, and budget refusals under the tenant", () => {
    const capture = captureEmf();
    const metrics = createEmfMetrics({ serviceName: "memory-test" });
    metrics.modelUsage("team-a", "summary", { calls: 3, inputTokens: 1200, outputTokens: 300 });
    metrics.modelUsage("team-b", "strength", { calls: 1, inputTokens: 90, outputTokens: 12 });
    metrics.budgetExceeded("team-a");
    const docs = capture.documents();
    expect(docs).toHaveLength(3);
    expect(docs.map(metricsOf)).toEqual([
      [
        { name: "vance.memory.summarizer.calls", unit: "Count", value: 3, dimensions: [{ service: "memory-test", tenant: "team-a", purpose: "summary" }] },
        { name: "vance.memory.summarizer.input_tokens", unit: "Count", value: 1200, dimensions: [{ service: "memory-test", tenant: "team-a", purpose: "summary" }] },
        { name: "vance.memory.summarizer.output_tokens", unit: "Count", value: 300, dimensions: [{ service: "memory-test", tenant: "team-a", purpose: "summary" }] },
      ],
      [
        { name: "vance.memory.summarizer.calls", unit: "Count", value: 1, dimensions: [{ service: "memory-test", tenant: "team-b", purpose: "strength" }] },
        { name: "vance.memory.summarizer.input_tokens", unit: "Count", value: 90, dimensions: [{ service: "memory-test", tenant: "team-b", purpose: "strength" }] },
        { name: "vance.memory.summarizer.output_tokens", unit: "Count", value: 12, dimensions: [{ service: "memory-test", tenant: "team-b", purpose: "strength" }] },
      ],
      [{ name: "vance.memory.budget.exceeded", unit: "Count", value: 1, dimensions: [{ service: "memory-test", tenant: "team-a" }] }],
    ]);
  });
});
