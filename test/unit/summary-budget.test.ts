/** summaryMaxTokens: one reader and one range, and the check against the summarizer's window. */
import { describe, expect, it } from "vitest";
import { resolveSummarizerConfig } from "../../core/adapters/llm/create-summarizer.js";
import { AppError } from "../../core/domain/errors.js";
import { checkFitsSummarizer, largestSummaryMaxTokens, summarizerInputCap, summaryBudgetFor } from "../../core/domain/summarizer-fit.js";
import { DEFAULT_TUNABLES, mergeTunables, tunablesFromEnv } from "../../core/domain/tunables.js";
import { layerStored } from "../../core/services/tunables.js";

const outcome = (fn: () => number) => {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AppError) return "refused";
    throw e;
  }
};

describe("SUMMARY_MAX_TOKENS", () => {
  it("means the same to the summarizer and to the tunables, for every value", () => {
    for (const raw of ["1", "10", "49", "50", "400", "4000", "4001", "8000", "lots"]) {
      const env = { SUMMARY_MAX_TOKENS: raw };
      const summarizer = outcome(() => resolveSummarizerConfig(env).maxOutputTokens);
      const tunables = outcome(() => tunablesFromEnv(env).summaryMaxTokens);
      expect({ raw, summarizer }).toEqual({ raw, summarizer: tunables });
    }
    expect(resolveSummarizerConfig({ SUMMARY_MAX_TOKENS: "4000" }).maxOutputTokens).toBe(4000);
    expect(outcome(() => resolveSummarizerConfig({ SUMMARY_MAX_TOKENS: "8000" }).maxOutputTokens)).toBe("refused");
    expect(outcome(() => tunablesFromEnv({ SUMMARY_MAX_TOKENS: "10" }).summaryMaxTokens)).toBe("refused");
  });

  it("has the same range in a stored setting", () => {
    expect(() => mergeTunables(DEFAULT_TUNABLES, { summaryMaxTokens: 49 })).toThrow(/summaryMaxTokens: must be >= 50/);
    expect(() => mergeTunables(DEFAULT_TUNABLES, { summaryMaxTokens: 4001 })).toThrow(/summaryMaxTokens: must be <= 4000/);
  });
});

describe("summaryBudgetFor", () => {
  const t = { summaryMaxTokens: 400, summaryWindowShare: 0.1 };
  it("grows the budget with the model's window between summaryMaxTokens and 4,000", () => {
    expect([2_000, 4_000, 8_000, 16_000, 32_000, 128_000, 1_000_000].map((w) => summaryBudgetFor(t, w))).toEqual([
      400, 400, 800, 1_600, 3_200, 4_000, 4_000,
    ]);
  });
  it("grows only while the summarizer keeps half its window for the messages, and never below summaryMaxTokens", () => {
    // (8192 / 2 - 1500) / 3: the fixed budget may go as far as 2,119 on this window, growth stops at 865.
    expect(summaryBudgetFor(t, 128_000, 8_192)).toBe(865);
    expect(largestSummaryMaxTokens(8_192)).toBe(2_119);
    expect(summaryBudgetFor(t, 128_000, 4_000)).toBe(400);
    expect(summaryBudgetFor(t, 128_000, 200_000)).toBe(4_000);
  });
  it("keeps the fixed budget without a window or with a share of 0", () => {
    expect(summaryBudgetFor(t, undefined)).toBe(400);
    expect(summaryBudgetFor({ ...t, summaryWindowShare: 0 }, 128_000)).toBe(400);
  });
});

describe("checkFitsSummarizer", () => {
  const summarizer = { model: "small-model", contextWindow: 8192 };
  const check = (override: Parameters<typeof checkFitsSummarizer>[0]) => () =>
    checkFitsSummarizer(override, mergeTunables(DEFAULT_TUNABLES, override), summarizer);

  it("accepts the largest summaryMaxTokens whose call still fits, and refuses one more", () => {
    const largest = largestSummaryMaxTokens(8192);
    expect(largest).toBe(2119);
    expect(check({ summaryMaxTokens: largest, maxSourceChars: 1000 })).not.toThrow();
    expect(summarizerInputCap(mergeTunables(DEFAULT_TUNABLES, { summaryMaxTokens: largest }), 8192, largest)).toBeGreaterThanOrEqual(1000);
    expect(check({ summaryMaxTokens: largest + 1 })).toThrow(/summaryMaxTokens: must be <= 2119 for the summarizer small-model \(window 8192 tokens\)/);
  });

  it("refuses a maxSourceChars one call cannot take, naming the largest that fits", () => {
    const fits = summarizerInputCap({ ...DEFAULT_TUNABLES, maxSourceChars: 1e9 }, 8192, DEFAULT_TUNABLES.summaryMaxTokens);
    expect(check({ maxSourceChars: fits })).not.toThrow();
    let error: AppError | undefined;
    try {
      check({ maxSourceChars: fits + 1 })();
    } catch (e) {
      error = e as AppError;
    }
    expect(error).toMatchObject({ kind: "input", code: "tunables.invalid", details: { fields: ["maxSourceChars"] } });
    expect(error!.message).toContain(`must be <= ${fits}`);
  });

  it("does not hold an override responsible for values it does not set", () => {
    // The environment's 60,000 chars do not fit 8k either; a change of keepRecent is still fine.
    expect(check({ keepRecent: 4 })).not.toThrow();
  });
});

describe("layerStored", () => {
  it("keeps a stored layer's other fields when its foldTarget no longer fits the thresholds below", () => {
    const base = mergeTunables(DEFAULT_TUNABLES, { softThreshold: 0.3, hardThreshold: 0.6, emergencyThreshold: 0.9 });
    const result = layerStored(base, [{ foldTarget: 0.7, keepRecent: 4 }]);
    expect(result).toMatchObject({ foldTarget: 0, keepRecent: 4, hardThreshold: 0.6 });
  });
});
