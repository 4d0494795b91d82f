import { describe, expect, it } from "vitest";
import { AppError } from "../../core/domain/errors.js";
import { SAFE_CHARS_PER_TOKEN, SUMMARIZER_PROMPT_RESERVE_TOKENS, summarizerInputCap } from "../../core/domain/summarizer-fit.js";
import { TENANT_LIMITS, checkTenantLimits, withinTenantLimits } from "../../core/domain/tenant-limits.js";
import { DEFAULT_TUNABLES, TUNABLES_ENV, TunablesOverride, mergeTunables, tunablesFromEnv } from "../../core/domain/tunables.js";

function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected an AppError");
}

describe("DEFAULT_TUNABLES", () => {
  it("carries the documented defaults (docs/configuration.md, \"Tunables\")", () => {
    expect(DEFAULT_TUNABLES).toEqual({
      softThreshold: 0.4,
      hardThreshold: 0.85,
      prepareThreshold: 0.7,
      emergencyThreshold: 0.95,
      keepRecent: 10,
      softAnchor: 10,
      hardAnchor: 5,
      emergencyAnchor: 3,
      maxSourceChars: 60_000,
      summaryMinTokens: 400,
      summaryWindowShare: 0.2, // a fold's summary budget grows with the model's window above 2k
      summaryMaxTokens: 4000,
      foldTarget: 0, // off: HARD/EMERGENCY fold all the selector allows (docs/compaction.md)
      foldMinRoomTokens: 1000, // only with a foldTarget: the room a fold leaves below the hard threshold
      recallMaxTokens: 1000,
      recallInSystem: false, // recall goes into the transcript (docs/turns.md, "Recall")
      summarizerConcurrency: 16,
      maxSummarizerCalls: 32, // one fold's summarizer calls, its quality gate retry included
      foldCurrentTurn: 1,
      clearThreshold: 0.6,
      keepToolResults: 3,
      clearMinResultTokens: 250,
      clearMinSaving: 0.05,
      softMinFoldTokens: 400, // SOFT waits until its fold holds a summary's worth of tokens
      sideChannelEnabled: false, // the strength analyzer is off by default (docs/compaction.md)
      inlineOnCompaction: false,
      ledgerWindowShare: 0.1, // the evidence ledger's section: 3,200 tokens at 32k
      ledgerMaxTokens: 8000,
    });
  });

  it("cannot be mutated by a caller", () => {
    expect(() => {
      (DEFAULT_TUNABLES as { keepRecent: number }).keepRecent = 1;
    }).toThrow(TypeError);
    expect(DEFAULT_TUNABLES.keepRecent).toBe(10);
  });
});

describe("mergeTunables", () => {
  it("applies overrides in order, later wins, undefined layers and values are skipped", () => {
    const merged = mergeTunables(
      DEFAULT_TUNABLES,
      { hardThreshold: 0.75, keepRecent: 6 },
      undefined,
      { keepRecent: 4, softAnchor: undefined },
    );
    expect(merged).toEqual({ ...DEFAULT_TUNABLES, hardThreshold: 0.75, keepRecent: 4 });
  });

  it("checks threshold order after merging, so moving two thresholds together is allowed", () => {
    const merged = mergeTunables(DEFAULT_TUNABLES, { softThreshold: 0.9, hardThreshold: 0.95, emergencyThreshold: 1, clearThreshold: 0.9, prepareThreshold: 0.92 });
    expect([merged.softThreshold, merged.hardThreshold, merged.emergencyThreshold]).toEqual([0.9, 0.95, 1]);
  });

  it("takes clearThreshold from softThreshold up to just below emergencyThreshold, and prepareThreshold from softThreshold up", () => {
    expect(mergeTunables(DEFAULT_TUNABLES, { clearThreshold: 0.4 }).clearThreshold).toBe(0.4);
    expect(mergeTunables(DEFAULT_TUNABLES, { clearThreshold: 0.94 }).clearThreshold).toBe(0.94);
    expect(mergeTunables(DEFAULT_TUNABLES, { prepareThreshold: 0.4 }).prepareThreshold).toBe(0.4);
    // At or above hardThreshold nothing is prepared ahead: a way to switch preparing off.
    expect(mergeTunables(DEFAULT_TUNABLES, { prepareThreshold: 1 }).prepareThreshold).toBe(1);
  });

  const outOfPlace: [string, TunablesOverride, string, RegExp][] = [
    ["clearThreshold below softThreshold", { clearThreshold: 0.39 }, "clearThreshold", /clearThreshold must be at least softThreshold/],
    ["clearThreshold at emergencyThreshold", { clearThreshold: 0.95 }, "clearThreshold", /clearThreshold must be below emergencyThreshold/],
    ["softThreshold moved past clearThreshold", { softThreshold: 0.65 }, "clearThreshold", /at least softThreshold \(got 0.6 \/ 0.65\)/],
    ["prepareThreshold below softThreshold", { prepareThreshold: 0.39 }, "prepareThreshold", /prepareThreshold must be at least softThreshold/],
  ];
  for (const [label, override, field, message] of outOfPlace) {
    it(`rejects ${label}, naming ${field}`, () => {
      const error = errorOf(() => mergeTunables(DEFAULT_TUNABLES, override));
      expect(error).toMatchObject({ kind: "input", code: "tunables.invalid", details: { fields: [field] } });
      expect(error.message).toMatch(message);
    });
  }

  const invalidCases: [string, Record<string, unknown>, string][] = [
    ["hard below soft", { hardThreshold: 0.3 }, "hardThreshold"],
    ["emergency equal to hard", { emergencyThreshold: 0.85 }, "emergencyThreshold"],
    ["threshold 0", { softThreshold: 0 }, "softThreshold"],
    ["threshold above 1", { emergencyThreshold: 1.01 }, "emergencyThreshold"],
    ["non-numeric threshold", { softThreshold: "0.5" }, "softThreshold"],
    ["fractional anchor", { hardAnchor: 2.5 }, "hardAnchor"],
    ["negative keepRecent", { keepRecent: -1 }, "keepRecent"],
    ["maxSourceChars below 1000", { maxSourceChars: 999 }, "maxSourceChars"],
    ["summaryMaxTokens 0", { summaryMaxTokens: 0 }, "summaryMaxTokens"],
    ["summaryMinTokens above summaryMaxTokens", { summaryMinTokens: 2000, summaryMaxTokens: 1000 }, "summaryMinTokens"],
    ["unknown key", { keeprecent: 3 }, "keeprecent"],
  ];
  for (const [label, override, field] of invalidCases) {
    it(`rejects ${label}, naming ${field}`, () => {
      const error = errorOf(() => mergeTunables(DEFAULT_TUNABLES, override as TunablesOverride));
      expect(error.kind).toBe("input");
      expect(error.code).toBe("tunables.invalid");
      expect(error.message).toContain(field);
      expect(error.details).toMatchObject({ fields: [field], issues: [expect.objectContaining({ field })] });
    });
  }

  it("accepts anchors and keepRecent of 0 and maxSourceChars of exactly 1000", () => {
    const merged = mergeTunables(DEFAULT_TUNABLES, { softAnchor: 0, keepRecent: 0, maxSourceChars: 1000 });
    expect(merged).toMatchObject({ softAnchor: 0, keepRecent: 0, maxSourceChars: 1000 });
  });

  it("TunablesOverride parses a partial object and rejects unknown keys", () => {
    expect(TunablesOverride.parse({ hardAnchor: 2 })).toEqual({ hardAnchor: 2 });
    expect(TunablesOverride.safeParse({ nope: 1 }).success).toBe(false);
  });
});

describe("tunablesFromEnv", () => {
  it("reads every documented variable", () => {
    const env = {
      COMPACTION_SOFT_THRESHOLD: "0.5",
      COMPACTION_HARD_THRESHOLD: "0.7",
      COMPACTION_EMERGENCY_THRESHOLD: "0.9",
      COMPACTION_KEEP_RECENT: "6",
      COMPACTION_SOFT_ANCHOR: "8",
      COMPACTION_HARD_ANCHOR: "4",
      COMPACTION_EMERGENCY_ANCHOR: "2",
      COMPACTION_MAX_SOURCE_CHARS: "20000",
      SUMMARY_MIN_TOKENS: "250",
      SUMMARY_MAX_TOKENS: "300",
      SUMMARY_WINDOW_SHARE: "0.05",
      COMPACTION_FOLD_TARGET: "0.5",
      COMPACTION_FOLD_MIN_ROOM_TOKENS: "1500",
      RECALL_MAX_TOKENS: "600",
      RECALL_IN_SYSTEM: "true",
      COMPACTION_PREPARE_THRESHOLD: "0.6",
      COMPACTION_SUMMARIZER_CONCURRENCY: "3",
      COMPACTION_MAX_SUMMARIZER_CALLS: "12",
      COMPACTION_FOLD_CURRENT_TURN: "0",
      CLEAR_THRESHOLD: "0.55",
      CLEAR_KEEP_TOOL_RESULTS: "5",
      CLEAR_MIN_RESULT_TOKENS: "100",
      CLEAR_MIN_SAVING: "0.1",
      COMPACTION_SOFT_MIN_FOLD_TOKENS: "0",
      STRENGTH_SIDE_CHANNEL_ENABLED: "true",
      STRENGTH_INLINE_ON_COMPACTION: "1",
      RETENTION_DAYS: "30",
      MAX_PROMPT_TOKENS: "32000",
      LEDGER_WINDOW_SHARE: "0.05",
      LEDGER_MAX_TOKENS: "2000",
      LEDGER_TOOLS: '{"run_sh":"command"}',
    };
    expect(tunablesFromEnv(env)).toEqual({
      softThreshold: 0.5,
      hardThreshold: 0.7,
      emergencyThreshold: 0.9,
      keepRecent: 6,
      softAnchor: 8,
      hardAnchor: 4,
      emergencyAnchor: 2,
      maxSourceChars: 20_000,
      summaryMinTokens: 250,
      summaryMaxTokens: 300,
      summaryWindowShare: 0.05,
      foldTarget: 0.5,
      foldMinRoomTokens: 1500,
      recallMaxTokens: 600,
      recallInSystem: true,
      prepareThreshold: 0.6,
      summarizerConcurrency: 3,
      maxSummarizerCalls: 12,
      foldCurrentTurn: 0,
      clearThreshold: 0.55,
      keepToolResults: 5,
      clearMinResultTokens: 100,
      clearMinSaving: 0.1,
      softMinFoldTokens: 0,
      sideChannelEnabled: true,
      inlineOnCompaction: true,
      retentionDays: 30,
      maxPromptTokens: 32_000,
      ledgerWindowShare: 0.05,
      ledgerMaxTokens: 2000,
      ledgerTools: { run_sh: "command" },
    });
    expect(Object.values(TUNABLES_ENV).sort()).toEqual(Object.keys(env).sort());
  });

  it("keeps the defaults for unset and blank variables", () => {
    expect(tunablesFromEnv({})).toEqual(DEFAULT_TUNABLES);
    expect(tunablesFromEnv({ COMPACTION_KEEP_RECENT: "  ", OTHER: "x" })).toEqual(DEFAULT_TUNABLES);
  });

  it("names the variable of a value that is not a number", () => {
    const error = errorOf(() => tunablesFromEnv({ COMPACTION_KEEP_RECENT: "ten" }));
    expect(error.code).toBe("tunables.invalid");
    expect(error.message).toContain("COMPACTION_KEEP_RECENT");
    expect(error.message).toContain("'ten'");
  });

  it("reads the strength analyzer switches as true/false or 1/0 and names a variable that is neither", () => {
    expect(tunablesFromEnv({ STRENGTH_SIDE_CHANNEL_ENABLED: " TRUE ", STRENGTH_INLINE_ON_COMPACTION: "false" })).toMatchObject({
      sideChannelEnabled: true,
      inlineOnCompaction: false,
    });
    expect(tunablesFromEnv({ STRENGTH_INLINE_ON_COMPACTION: "0", STRENGTH_SIDE_CHANNEL_ENABLED: "1" })).toMatchObject({
      sideChannelEnabled: true,
      inlineOnCompaction: false,
    });
    const error = errorOf(() => tunablesFromEnv({ STRENGTH_SIDE_CHANNEL_ENABLED: "yes please" }));
    expect(error.code).toBe("tunables.invalid");
    expect(error.message).toContain("STRENGTH_SIDE_CHANNEL_ENABLED (sideChannelEnabled)");
    expect(error.message).toContain("'yes please'");
  });

  it("refuses a switch that is not a boolean in settings, naming it", () => {
    const error = errorOf(() => mergeTunables(DEFAULT_TUNABLES, { inlineOnCompaction: 1 } as never));
    expect(error.code).toBe("tunables.invalid");
    expect(error.message).toContain("inlineOnCompaction");
    expect(mergeTunables(DEFAULT_TUNABLES, { inlineOnCompaction: true }).inlineOnCompaction).toBe(true);
  });

  it("names the variable of a value that breaks validation", () => {
    const error = errorOf(() => tunablesFromEnv({ COMPACTION_HARD_THRESHOLD: "0.2" }));
    expect(error.message).toContain("COMPACTION_HARD_THRESHOLD (hardThreshold)");
  });

  it("layers onto a given base", () => {
    const base = mergeTunables(DEFAULT_TUNABLES, { keepRecent: 3 });
    expect(tunablesFromEnv({ COMPACTION_HARD_ANCHOR: "2" }, base)).toMatchObject({ keepRecent: 3, hardAnchor: 2 });
  });
});

describe("summarizerInputCap", () => {
  it("is maxSourceChars when the summarizer window is large", () => {
    expect(summarizerInputCap(DEFAULT_TUNABLES, 200_000, 1024)).toBe(60_000);
  });

  it("shrinks to what a small window leaves after prompt, prior summary and output", () => {
    const free = 8192 - SUMMARIZER_PROMPT_RESERVE_TOKENS - 2 * 400 - 1024;
    expect(summarizerInputCap(DEFAULT_TUNABLES, 8192, 1024)).toBe(free * SAFE_CHARS_PER_TOKEN);
    expect(summarizerInputCap(DEFAULT_TUNABLES, 8192, 1024)).toBe(14_604);
  });

  it("keeps the whole call inside the window even if every char were ~1/3 token", () => {
    for (const window of [4096, 8192, 16_384, 32_768]) {
      const cap = summarizerInputCap(DEFAULT_TUNABLES, window, 1024);
      const worstCaseTokens = Math.ceil(cap / SAFE_CHARS_PER_TOKEN) + SUMMARIZER_PROMPT_RESERVE_TOKENS + 800 + 1024;
      expect(worstCaseTokens).toBeLessThanOrEqual(window);
    }
  });

  it("throws when the window leaves fewer than 1000 chars", () => {
    const error = errorOf(() => summarizerInputCap(DEFAULT_TUNABLES, 2048, 1024));
    expect(error.code).toBe("tunables.summarizer_window_too_small");
    expect(error.message).toContain("2048");
  });
});

describe("tenant limits", () => {
  const operator = mergeTunables(DEFAULT_TUNABLES, { summarizerConcurrency: 8, maxSummarizerCalls: 20 });

  it("bound the settings that multiply a fold's calls: a floor on maxSourceChars, the deployment's value as the ceiling of the others", () => {
    expect(TENANT_LIMITS).toEqual({
      maxSourceChars: { min: 8000 },
      summarizerConcurrency: { operatorCeiling: true },
      maxSummarizerCalls: { operatorCeiling: true },
    });
    expect(() => checkTenantLimits({ maxSourceChars: 8000, summarizerConcurrency: 8, maxSummarizerCalls: 20, keepRecent: 0 }, operator)).not.toThrow();
    const error = errorOf(() => checkTenantLimits({ maxSourceChars: 7999, summarizerConcurrency: 9, maxSummarizerCalls: 21 }, operator));
    expect(error).toMatchObject({ kind: "input", code: "tunables.invalid" });
    expect((error.details as { fields: string[] }).fields).toEqual(["maxSourceChars", "summarizerConcurrency", "maxSummarizerCalls"]);
    expect(error.message).toContain("maxSourceChars: must be >= 8000 in tenant or project settings (COMPACTION_MAX_SOURCE_CHARS may go lower)");
    expect(error.message).toContain("summarizerConcurrency: must be <= 8, this deployment's COMPACTION_SUMMARIZER_CONCURRENCY");
    expect(error.message).toContain("maxSummarizerCalls: must be <= 20, this deployment's COMPACTION_MAX_SUMMARIZER_CALLS");
  });

  it("pull a stored layer saved before them inside, leaving the other fields alone", () => {
    expect(withinTenantLimits({ maxSourceChars: 1000, summarizerConcurrency: 32, maxSummarizerCalls: 500, keepRecent: 2 }, operator)).toEqual({
      maxSourceChars: 8000,
      summarizerConcurrency: 8,
      maxSummarizerCalls: 20,
      keepRecent: 2,
    });
    expect(withinTenantLimits({ maxSourceChars: 20_000 }, operator)).toEqual({ maxSourceChars: 20_000 });
  });

  it("do not bind the deployment: its environment may go below the tenant floor", () => {
    expect(tunablesFromEnv({ COMPACTION_MAX_SOURCE_CHARS: "1000", COMPACTION_MAX_SUMMARIZER_CALLS: "200" })).toMatchObject({
      maxSourceChars: 1000,
      maxSummarizerCalls: 200,
    });
    expect(errorOf(() => tunablesFromEnv({ COMPACTION_MAX_SUMMARIZER_CALLS: "0" })).message).toContain("COMPACTION_MAX_SUMMARIZER_CALLS");
  });
});

describe("maxPromptTokens", () => {
  it("takes 1000 to 10,000,000 tokens, and null lifts a cap set below", () => {
    expect(mergeTunables(DEFAULT_TUNABLES, { maxPromptTokens: 1000 }).maxPromptTokens).toBe(1000);
    expect(mergeTunables(DEFAULT_TUNABLES, { maxPromptTokens: 10_000_000 }).maxPromptTokens).toBe(10_000_000);
    expect(mergeTunables(DEFAULT_TUNABLES, { maxPromptTokens: 32_000 }, { maxPromptTokens: null }).maxPromptTokens).toBeNull();
    expect(() => mergeTunables(DEFAULT_TUNABLES, { maxPromptTokens: 999 })).toThrow(/maxPromptTokens: must be >= 1000/);
    expect(() => mergeTunables(DEFAULT_TUNABLES, { maxPromptTokens: 10_000_001 })).toThrow(/maxPromptTokens: must be <= 10000000/);
    expect(() => mergeTunables(DEFAULT_TUNABLES, { maxPromptTokens: 4000.5 })).toThrow(/maxPromptTokens: must be an integer/);
    expect(() => tunablesFromEnv({ MAX_PROMPT_TOKENS: "lots" })).toThrow(/MAX_PROMPT_TOKENS \(maxPromptTokens\)/);
  });
});
