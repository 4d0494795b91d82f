/**
 * The summary budget: a minimum, a share of the model's window and a maximum (docs/compaction.md,
 * "Tunables"), one reader and one range for each, and the check against the summarizer's window.
 */
import { describe, expect, it } from "vitest";
import { resolveSummarizerConfig } from "../../core/adapters/llm/create-summarizer.js";
import { AppError } from "../../core/domain/errors.js";
import {
  checkFitsSummarizer,
  largestSummaryMinTokens,
  summarizerInputCap,
  summaryBudgetFor,
  withPriorSummaryFloor,
  withSummaryBudget,
} from "../../core/domain/summarizer-fit.js";
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

describe("SUMMARY_MIN_TOKENS and SUMMARY_MAX_TOKENS", () => {
  it("give the summarizer the fixed budget the tunables give a fold without a window, for every value", () => {
    for (const name of ["SUMMARY_MIN_TOKENS", "SUMMARY_MAX_TOKENS"]) {
      for (const raw of ["1", "10", "49", "50", "300", "400", "4000", "4001", "8000", "lots"]) {
        const env = { [name]: raw };
        const summarizer = outcome(() => resolveSummarizerConfig(env).maxOutputTokens);
        const tunables = outcome(() => summaryBudgetFor(tunablesFromEnv(env), undefined));
        expect({ name, raw, summarizer }).toEqual({ name, raw, summarizer: tunables });
      }
    }
    expect(resolveSummarizerConfig({ SUMMARY_MAX_TOKENS: "300" }).maxOutputTokens).toBe(300);
    expect(resolveSummarizerConfig({ SUMMARY_MAX_TOKENS: "4000" }).maxOutputTokens).toBe(400);
    expect(resolveSummarizerConfig({ SUMMARY_MIN_TOKENS: "4000" }).maxOutputTokens).toBe(4000);
    expect(outcome(() => resolveSummarizerConfig({ SUMMARY_MAX_TOKENS: "8000" }).maxOutputTokens)).toBe("refused");
  });

  it("are checked against each other when read, naming the variable", () => {
    expect(() => tunablesFromEnv({ SUMMARY_MIN_TOKENS: "1000", SUMMARY_MAX_TOKENS: "500" })).toThrow(
      /SUMMARY_MIN_TOKENS \(summaryMinTokens\): summaryMinTokens must be at most summaryMaxTokens \(got 1000 \/ 500\)/,
    );
    expect(() => resolveSummarizerConfig({ SUMMARY_MIN_TOKENS: "1000", SUMMARY_MAX_TOKENS: "500" })).toThrow(/SUMMARY_MIN_TOKENS/);
    expect(tunablesFromEnv({ SUMMARY_MAX_TOKENS: "300" })).toMatchObject({ summaryMinTokens: 300, summaryMaxTokens: 300 });
  });

  it("have the same range in a stored setting", () => {
    for (const field of ["summaryMinTokens", "summaryMaxTokens"] as const) {
      expect(() => mergeTunables(DEFAULT_TUNABLES, { [field]: 49 })).toThrow(new RegExp(`${field}: must be >= 50`));
      expect(() => mergeTunables(DEFAULT_TUNABLES, { [field]: 4001 })).toThrow(new RegExp(`${field}: must be <= 4000`));
    }
  });
});

describe("summaryMinTokens <= summaryMaxTokens", () => {
  it("refuses a minimum above the maximum, naming summaryMinTokens", () => {
    for (const [below, override] of [
      [DEFAULT_TUNABLES, { summaryMinTokens: 1000, summaryMaxTokens: 500 }],
      [mergeTunables(DEFAULT_TUNABLES, { summaryMaxTokens: 800 }), { summaryMinTokens: 1000 }],
    ] as const) {
      let error: AppError | undefined;
      try {
        mergeTunables(below, override);
      } catch (e) {
        error = e as AppError;
      }
      expect(error).toMatchObject({ code: "tunables.invalid", details: { fields: ["summaryMinTokens"] } });
    }
  });

  it("lets a layer that lowers the maximum lower the minimum below it with it", () => {
    expect(mergeTunables(DEFAULT_TUNABLES, { summaryMaxTokens: 120 })).toMatchObject({ summaryMinTokens: 120, summaryMaxTokens: 120 });
    const tenant = mergeTunables(DEFAULT_TUNABLES, { summaryMinTokens: 1000 });
    expect(mergeTunables(tenant, { summaryMaxTokens: 2000 })).toMatchObject({ summaryMinTokens: 1000, summaryMaxTokens: 2000 });
    expect(mergeTunables(tenant, { summaryMaxTokens: 500 })).toMatchObject({ summaryMinTokens: 500, summaryMaxTokens: 500 });
  });
});

describe("summaryBudgetFor", () => {
  const t = { summaryMinTokens: 400, summaryMaxTokens: 4000, summaryWindowShare: 0.1 };
  it("grows the budget with the model's window between summaryMinTokens and summaryMaxTokens", () => {
    expect([2_000, 4_000, 8_000, 16_000, 32_000, 128_000, 1_000_000].map((w) => summaryBudgetFor(t, w))).toEqual([
      400, 400, 800, 1_600, 3_200, 4_000, 4_000,
    ]);
    expect([8_000, 16_000, 128_000].map((w) => summaryBudgetFor({ ...t, summaryMaxTokens: 1_000 }, w))).toEqual([800, 1_000, 1_000]);
  });
  it("keeps today's default budgets: 400 without a window, 800 at 4k, 1,600 at 8k, 3,200 at 16k, 4,000 from 20k", () => {
    expect([undefined, 4_000, 8_000, 16_000, 20_000, 128_000].map((w) => summaryBudgetFor(DEFAULT_TUNABLES, w))).toEqual([
      400, 800, 1_600, 3_200, 4_000, 4_000,
    ]);
  });
  it("never goes above summaryMaxTokens, whatever the window: a setting of 120 is 120 at 128k", () => {
    expect(summaryBudgetFor(mergeTunables(DEFAULT_TUNABLES, { summaryMaxTokens: 120 }), 128_000)).toBe(120);
    expect(summaryBudgetFor(mergeTunables(DEFAULT_TUNABLES, { summaryMaxTokens: 120 }), undefined)).toBe(120);
  });
  it("grows only while the summarizer keeps half its window for the messages, and never below summaryMinTokens", () => {
    // (8192 / 2 - 1500) / 3: the fixed budget may go as far as 2,119 on this window, growth stops at 865.
    expect(summaryBudgetFor(t, 128_000, 8_192)).toBe(865);
    expect(largestSummaryMinTokens(8_192)).toBe(2_119);
    expect(summaryBudgetFor(t, 128_000, 4_000)).toBe(400);
    expect(summaryBudgetFor(t, 128_000, 200_000)).toBe(4_000);
  });
  it("keeps the minimum without a window or with a share of 0", () => {
    expect(summaryBudgetFor(t, undefined)).toBe(400);
    expect(summaryBudgetFor({ ...t, summaryWindowShare: 0 }, 128_000)).toBe(400);
  });
  it("hands a fold its budget as both bounds, so that applying it again keeps it", () => {
    const fold = withSummaryBudget(t, 16_000);
    expect(fold).toEqual({ ...t, summaryMinTokens: 1_600, summaryMaxTokens: 1_600 });
    expect(withSummaryBudget(fold, 128_000)).toBe(fold);
  });
  it("gives a range fold at least the size of the summary it chains, up to summaryMaxTokens", () => {
    expect(summaryBudgetFor(withPriorSummaryFloor(t, 2_900), undefined)).toBe(2_900);
    expect(summaryBudgetFor(withPriorSummaryFloor(t, 100), undefined)).toBe(400);
    expect(summaryBudgetFor(withPriorSummaryFloor({ ...t, summaryMaxTokens: 1_000 }, 2_900), undefined)).toBe(1_000);
    // Like a grown budget, no more than leaves an 8k summarizer half its window for the messages.
    expect(summaryBudgetFor(withPriorSummaryFloor(t, 2_900, 8_192), undefined)).toBe(865);
  });
});

describe("checkFitsSummarizer", () => {
  const summarizer = { model: "small-model", contextWindow: 8192 };
  const check = (override: Parameters<typeof checkFitsSummarizer>[0]) => () =>
    checkFitsSummarizer(override, mergeTunables(DEFAULT_TUNABLES, override), summarizer);

  it("accepts the largest summaryMinTokens whose call still fits, and refuses one more", () => {
    const largest = largestSummaryMinTokens(8192);
    expect(largest).toBe(2119);
    expect(check({ summaryMinTokens: largest, maxSourceChars: 1000 })).not.toThrow();
    const fixed = withSummaryBudget(mergeTunables(DEFAULT_TUNABLES, { summaryMinTokens: largest }), undefined);
    expect(summarizerInputCap(fixed, 8192, largest)).toBeGreaterThanOrEqual(1000);
    expect(check({ summaryMinTokens: largest + 1 })).toThrow(/summaryMinTokens: must be <= 2119 for the summarizer small-model \(window 8192 tokens\)/);
  });

  it("accepts any summaryMaxTokens: a grown budget stops at half the summarizer's window", () => {
    expect(check({ summaryMaxTokens: 4000 })).not.toThrow();
  });

  it("refuses a maxSourceChars one call cannot take, naming the largest that fits", () => {
    const fits = summarizerInputCap(withSummaryBudget({ ...DEFAULT_TUNABLES, maxSourceChars: 1e9 }, undefined), 8192, DEFAULT_TUNABLES.summaryMinTokens);
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
    const ignored: unknown[] = [];
    const result = layerStored(base, [{ foldTarget: 0.7, keepRecent: 4 }], (index, dropped) => ignored.push({ index, dropped }));
    expect(result).toMatchObject({ foldTarget: 0, keepRecent: 4, hardThreshold: 0.6 });
    expect(ignored).toEqual([{ index: 0, dropped: [{ field: "foldTarget", reason: expect.stringContaining("below hardThreshold") }] }]);
  });
});
