/** The compaction tunables (docs/configuration.md, "Tunables"): defaults, validation, layering (summarizer-fit.ts: a call's fit). */
import * as z from "./zod.js";
import { invalid } from "./errors.js";
import { MAX_CONTEXT_WINDOW } from "./model-windows.js";
import { LEDGER_DEFAULTS, LEDGER_ENV, LEDGER_TOOLS_FIELD, ledgerVariable } from "./ledger/settings.js";

/** The longest retention of archived originals: ten years. */
export const RETENTION_DAYS_MAX = 3650;

/** The one range of a summary's output budget and its bounds, wherever set (env, tenant, project). */
export const SUMMARY_MAX_TOKENS_RANGE = Object.freeze({ min: 50, max: 4000 });

const threshold = z.number("must be a number").check(
  // A floor well above 0: DynamoDB cannot store magnitudes below 1e-130 (a denormal 5e-324 was a 500).
  z.gte(0.001, "must be at least 0.001"),
  z.lte(1, "must be at most 1"),
);
/** A whole number from `min`; `checks` add the upper bound. */
const integer = (min: number, ...checks: z.core.$ZodCheck<number>[]) =>
  z.number("must be a number").check(z.int("must be an integer"), z.gte(min, `must be >= ${min}`), ...checks);
const count = integer(0);
/** A share of the model's window: 0 (off), or 0.001 to 0.5. */
const share = z.number("must be a number").check(z.gte(0, "must be >= 0"), z.lte(0.5, "must be <= 0.5"), z.refine((v) => v === 0 || v >= 0.001, "must be 0 (off) or at least 0.001"));

const fields = {
  /** SOFT trigger: prompt tokens / context window. */
  softThreshold: threshold,
  /** HARD trigger. */
  hardThreshold: threshold,
  /**
   * From this ratio a background worker prepares the fold HARD will need, so that reaching HARD
   * commits it without a summarizer call. At least softThreshold (checked after merging); at or
   * above hardThreshold nothing is prepared ahead.
   */
  prepareThreshold: threshold,
  /** EMERGENCY trigger. */
  emergencyThreshold: threshold,
  /** With this many active messages or fewer, selection is a no-op. */
  keepRecent: count,
  /** Messages at the end that stay verbatim, per mode. */
  softAnchor: count,
  hardAnchor: count,
  emergencyAnchor: count,
  /** Cap on one summarizer call's message input, in characters. */
  // Far above what any summarizer window takes in one call (checked against it when stored).
  maxSourceChars: integer(1000, z.lte(10_000_000, "must be <= 10000000")),
  /**
   * The summary budget of a fold, in tokens, is `summaryWindowShare` of the model's window kept
   * between these two (docs/configuration.md, "Tunables"): `summaryMinTokens` is also the budget of a
   * fold that knows no window (env SUMMARY_MIN_TOKENS / SUMMARY_MAX_TOKENS, read only through
   * {@link tunablesFromEnv}). At most `summaryMaxTokens` (checked after merging); a layer that lowers
   * `summaryMaxTokens` below the minimum of the layers under it lowers that minimum with it.
   */
  // Capped: a huge budget would leave no summarizer window for the messages being folded.
  summaryMinTokens: integer(SUMMARY_MAX_TOKENS_RANGE.min, z.lte(SUMMARY_MAX_TOKENS_RANGE.max, `must be <= ${SUMMARY_MAX_TOKENS_RANGE.max}`)),
  summaryMaxTokens: integer(SUMMARY_MAX_TOKENS_RANGE.min, z.lte(SUMMARY_MAX_TOKENS_RANGE.max, `must be <= ${SUMMARY_MAX_TOKENS_RANGE.max}`)),
  /**
   * A fold that knows the model's window gets this share of it as its summary budget, between
   * `summaryMinTokens` and `summaryMaxTokens`, and only while the summarizer keeps half its window
   * for the messages, so the summary grows with the window instead of staying 400 tokens at 16k.
   * 0 = always `summaryMinTokens`.
   */
  summaryWindowShare: share,
  /**
   * SOFT waits until the messages it would fold hold at least this many tokens: folding a few
   * acknowledgements costs a summarizer call and a prompt-cache reset and saves next to nothing.
   * 0 folds whatever the selector picks.
   */
  softMinFoldTokens: integer(0, z.lte(1_000_000, "must be <= 1000000")),
  /**
   * 0 (default): HARD and EMERGENCY fold everything the selector allows (docs/compaction.md). Above 0: they fold only the oldest eligible messages needed to bring the prompt down to
   * this share of the window, so more recent turns stay verbatim (more frequent, smaller folds).
   */
  foldTarget: z.number("must be a number").check(
    z.lt(1, "must be below 1"),
    // Like the thresholds: no tiny magnitudes (DynamoDB cannot store numbers below 1e-130).
    z.refine((v) => v === 0 || v >= 0.01, "must be 0 (off) or at least 0.01"),
  ),
  /**
   * With a `foldTarget`, the room (tokens) a HARD or EMERGENCY fold leaves below `hardThreshold` at
   * least: on a small window the target is lowered (down to folding all the selector allows), so
   * a fold buys more than a few turns and recall keeps room (docs/configuration.md, "Tunables").
   */
  foldMinRoomTokens: integer(0, z.lte(1_000_000, "must be <= 1000000")),
  /**
   * Most tokens `## Recalled From History` may add for a turn's query; the turn also keeps the
   * prompt below `hardThreshold`. 0 turns recall off.
   */
  recallMaxTokens: integer(0, z.lte(100_000, "must be <= 100000")),
  /** Recall in the system prompt instead of a message of the transcript (docs/turns.md, "Recall"). */
  recallInSystem: z.boolean("must be true or false"),
  /**
   * How many chunks of a large fold are summarized at once (then merged with the prior summary in
   * one more call). 1 chains the chunks one after the other, each getting the previous output.
   * The default covers a HARD fold of a 200k window in one wave (docs/compaction.md).
   */
  summarizerConcurrency: integer(1, z.lte(32, "must be <= 32")),
  /**
   * Most summarizer calls one fold may make, the quality gate's retry included. A fold that would
   * need more folds its oldest part that fits and leaves the rest for the next fold; a range fold,
   * which must take its whole range, fails instead (docs/summarizers.md, "Summarizing").
   */
  maxSummarizerCalls: integer(1, z.lte(1000, "must be <= 1000")),
  /**
   * 1 (default): HARD and EMERGENCY may fold the current turn's tool groups older than the anchor.
   * 0: the whole triggering turn stays, whatever the mode (the rule before agent loops).
   */
  foldCurrentTurn: z.number("must be a number").check(z.int("must be an integer"), z.gte(0, "must be 0 or 1"), z.lte(1, "must be 0 or 1")),
  /**
   * Tool-result clearing starts from this ratio of prompt tokens to the window: at least
   * softThreshold and below emergencyThreshold (checked after merging, like the threshold order).
   */
  clearThreshold: threshold,
  /** The newest TOOL results that are never cleared. */
  keepToolResults: count,
  /** Results smaller than this (tokens) are never cleared: their placeholder would save little. */
  clearMinResultTokens: count,
  /** A clearing round waits until it frees at least this share of the window (0.001 to 1). */
  clearMinSaving: threshold,
  /**
   * The strength analyzer's side channel: every appended message without a STRENGTH tag is rated
   * by the offline analyzer in the append itself (docs/compaction.md, "Strength analyzer").
   */
  sideChannelEnabled: z.boolean("must be true or false"),
  /**
   * Before a HARD fold, the active messages without a caller's STRENGTH tag are rated, by the
   * summarizer's model in one batched call when it is a remote one, else by the offline analyzer.
   */
  inlineOnCompaction: z.boolean("must be true or false"),
  /**
   * Days an archived original is kept after it is archived; unset keeps it forever, and a layer's
   * null keeps it forever over the layers below (docs/configuration.md, "Retention").
   */
  retentionDays: z.optional(z.nullable(integer(1, z.lte(RETENTION_DAYS_MAX, `must be <= ${RETENTION_DAYS_MAX}`)))),
  /** The prompt's absolute budget: the window is the smaller of the model's and this (null lifts a cap below). */
  maxPromptTokens: z.optional(z.nullable(integer(1000, z.lte(MAX_CONTEXT_WINDOW, `must be <= ${MAX_CONTEXT_WINDOW}`)))),
  /** The evidence ledger's section: at most this share of the window and this many tokens (docs/evidence-ledger.md, "The section and its bound"). */
  ledgerWindowShare: share,
  ledgerMaxTokens: integer(0, z.lte(100_000, "must be <= 100000")),
  ledgerTools: LEDGER_TOOLS_FIELD,
};

const ordered = (t: Record<"softThreshold" | "hardThreshold" | "emergencyThreshold", number>) => t.softThreshold < t.hardThreshold && t.hardThreshold < t.emergencyThreshold;
export const Tunables = z.strictObject(fields).check(
  z.superRefine((t, ctx) => {
    const issue = (field: keyof Tunables, message: string) => ctx.addIssue({ code: "custom", path: [field], message });
    if (t.summaryMinTokens > t.summaryMaxTokens) {
      issue("summaryMinTokens", `summaryMinTokens must be at most summaryMaxTokens (got ${t.summaryMinTokens} / ${t.summaryMaxTokens})`);
    }
    if (t.foldTarget > 0 && t.foldTarget >= t.hardThreshold) {
      issue("foldTarget", `foldTarget must be 0 (off) or below hardThreshold (got ${t.foldTarget} / ${t.hardThreshold})`);
    }
    if (!ordered(t)) {
      issue(
        t.softThreshold >= t.hardThreshold ? "hardThreshold" : "emergencyThreshold",
        `thresholds must satisfy softThreshold < hardThreshold < emergencyThreshold (got ${t.softThreshold} / ${t.hardThreshold} / ${t.emergencyThreshold})`,
      );
      return; // The ladder itself is broken: the rungs placed on it are checked once it stands.
    }
    // docs/configuration.md, "Tunables": clearing and preparing act only once compaction is due (from
    // SOFT), and clearing, the tier before summarizing, starts before EMERGENCY's fold is forced.
    if (t.clearThreshold < t.softThreshold) {
      issue("clearThreshold", `clearThreshold must be at least softThreshold (got ${t.clearThreshold} / ${t.softThreshold})`);
    } else if (t.clearThreshold >= t.emergencyThreshold) {
      issue("clearThreshold", `clearThreshold must be below emergencyThreshold (got ${t.clearThreshold} / ${t.emergencyThreshold})`);
    }
    if (t.prepareThreshold < t.softThreshold) {
      issue(
        "prepareThreshold",
        `prepareThreshold must be at least softThreshold (got ${t.prepareThreshold} / ${t.softThreshold}); at or above hardThreshold nothing is prepared ahead`,
      );
    }
  }),
);
export type Tunables = z.infer<typeof Tunables>;

/** Any subset of the tunables; unknown keys are rejected so a typo cannot pass silently. */
export const TunablesOverride = z.partial(z.strictObject(fields));
export type TunablesOverride = z.infer<typeof TunablesOverride>;

/**
 * The defaults (docs/configuration.md, "Tunables"). `maxSourceChars`: 60 000 chars is ~15k tokens
 * at chars/4 (~20k if the text tokenizes at 3 chars/token, like code or JSON). That fits a 32k
 * summarizer with room for the prompt, the prior summary and the output, keeps one summarizer
 * call to seconds inside a Lambda timeout, and bounds the squeeze into a 400-token summary to
 * ~40:1; a larger fold is split into chained calls (selector `chunkBySourceChars`). Smaller
 * summarizer windows lower it further through `summarizerInputCap` (summarizer-fit.ts).
 */
export const DEFAULT_TUNABLES: Tunables = Object.freeze({
  softThreshold: 0.4,
  hardThreshold: 0.85,
  prepareThreshold: 0.7,
  emergencyThreshold: 0.95,
  keepRecent: 10,
  softAnchor: 10,
  hardAnchor: 5,
  emergencyAnchor: 3,
  maxSourceChars: 60_000,
  // 400 tokens without a window; 800 at 4k, 1,600 at 8k, 3,200 at 16k, 4,000 from 20k (figures in
  // docs/benchmarks.md).
  summaryMinTokens: 400,
  summaryWindowShare: 0.2,
  summaryMaxTokens: 4000,
  foldTarget: 0,
  // The default recall budget fits right after a targeted fold (figures in docs/benchmarks.md).
  foldMinRoomTokens: 1000,
  recallMaxTokens: 1000,
  recallInSystem: false,
  summarizerConcurrency: 16,
  // A HARD fold of a 200k window is 12 chunks of 60,000 chars and 7 merge calls at the grown
  // summary budget of 4,000 tokens: 19. Larger folds are cut to what 31 calls can summarize.
  maxSummarizerCalls: 32,
  foldCurrentTurn: 1,
  clearThreshold: 0.6,
  keepToolResults: 3,
  clearMinResultTokens: 250,
  clearMinSaving: 0.05,
  softMinFoldTokens: 400,
  // Off by default (docs/compaction.md): the analyzer pays for ratings nobody may read.
  sideChannelEnabled: false,
  inlineOnCompaction: false,
  ...LEDGER_DEFAULTS,
});

/** The environment variable of each tunable (read by {@link tunablesFromEnv}). */
export const TUNABLES_ENV: Readonly<Record<keyof Tunables, string>> = Object.freeze({
  softThreshold: "COMPACTION_SOFT_THRESHOLD",
  hardThreshold: "COMPACTION_HARD_THRESHOLD",
  prepareThreshold: "COMPACTION_PREPARE_THRESHOLD",
  emergencyThreshold: "COMPACTION_EMERGENCY_THRESHOLD",
  keepRecent: "COMPACTION_KEEP_RECENT",
  softAnchor: "COMPACTION_SOFT_ANCHOR",
  hardAnchor: "COMPACTION_HARD_ANCHOR",
  emergencyAnchor: "COMPACTION_EMERGENCY_ANCHOR",
  maxSourceChars: "COMPACTION_MAX_SOURCE_CHARS",
  summaryMinTokens: "SUMMARY_MIN_TOKENS",
  summaryMaxTokens: "SUMMARY_MAX_TOKENS",
  summaryWindowShare: "SUMMARY_WINDOW_SHARE",
  foldTarget: "COMPACTION_FOLD_TARGET",
  foldMinRoomTokens: "COMPACTION_FOLD_MIN_ROOM_TOKENS",
  recallMaxTokens: "RECALL_MAX_TOKENS",
  recallInSystem: "RECALL_IN_SYSTEM",
  summarizerConcurrency: "COMPACTION_SUMMARIZER_CONCURRENCY",
  maxSummarizerCalls: "COMPACTION_MAX_SUMMARIZER_CALLS",
  foldCurrentTurn: "COMPACTION_FOLD_CURRENT_TURN",
  clearThreshold: "CLEAR_THRESHOLD",
  keepToolResults: "CLEAR_KEEP_TOOL_RESULTS",
  clearMinResultTokens: "CLEAR_MIN_RESULT_TOKENS",
  clearMinSaving: "CLEAR_MIN_SAVING",
  softMinFoldTokens: "COMPACTION_SOFT_MIN_FOLD_TOKENS",
  sideChannelEnabled: "STRENGTH_SIDE_CHANNEL_ENABLED",
  inlineOnCompaction: "STRENGTH_INLINE_ON_COMPACTION",
  retentionDays: "RETENTION_DAYS",
  maxPromptTokens: "MAX_PROMPT_TOKENS",
  ...LEDGER_ENV,
});

/** Environment spellings of the two switches ({@link tunablesFromEnv}). */
const BOOLEAN_WORDS: Readonly<Record<string, boolean>> = { true: true, false: false, "1": true, "0": false };

type Label = (field: string) => string;

/** Throws for an environment variable that is not of its tunable's type. */
function badVariable(name: string, field: string, expected: string, raw: string): never {
  throw invalid("tunables.invalid", `Invalid compaction tunables: ${name} (${field}): expected ${expected}, got '${raw}'`, {
    fields: [field],
    issues: [{ field, message: `expected ${expected}` }],
  });
}

function fail(issues: readonly z.core.$ZodIssue[], label: Label): never {
  const named = issues.flatMap((i) =>
    i.code === "unrecognized_keys"
      ? i.keys.map((key) => ({ field: key, message: "unknown tunable" }))
      : [{ field: i.path.length > 0 ? String(i.path[0]) : "(root)", message: i.message }],
  );
  const text = named.map((n) => `${label(n.field)}: ${n.message}`).join("; ");
  // Same shape as request validation errors: field names, and the issues with their messages.
  throw invalid("tunables.invalid", `Invalid compaction tunables: ${text}`, {
    fields: [...new Set(named.map((n) => n.field))],
    issues: named,
  });
}

function layer(base: Tunables, overrides: readonly (TunablesOverride | undefined)[], label: Label): Tunables {
  const merged: Record<string, unknown> = { ...base };
  for (const override of overrides) {
    if (override === undefined) continue;
    const parsed = TunablesOverride.safeParse(override);
    if (!parsed.success) fail(parsed.error.issues, label);
    for (const [key, value] of Object.entries(parsed.data)) {
      if (value !== undefined) merged[key] = value;
    }
    // A maximum below the minimum inherited from below lowers that minimum: the layer asked for
    // summaries of at most this size (docs/configuration.md, "Summary budget").
    const max = parsed.data.summaryMaxTokens;
    if (max !== undefined && parsed.data.summaryMinTokens === undefined && (merged.summaryMinTokens as number) > max) {
      merged.summaryMinTokens = max;
    }
  }
  const result = Tunables.safeParse(merged);
  if (!result.success) fail(result.error.issues, label);
  return result.data;
}

/**
 * Layers overrides (later wins) onto `base` and validates each override and the result; ordering
 * (soft < hard < emergency) is checked after merging, so an override may move one threshold past
 * another only if it moves the other too. Throws an `input` AppError (`tunables.invalid`) naming
 * the field.
 *
 * @example mergeTunables(DEFAULT_TUNABLES, { hardThreshold: 0.75 })
 */
export function mergeTunables(
  base: Tunables,
  ...overrides: readonly (TunablesOverride | undefined)[]
): Tunables {
  return layer(base, overrides, (field) => field);
}

/**
 * `base` (defaults) overridden by the variables of {@link TUNABLES_ENV}. Unset or blank variables
 * are ignored; a malformed one throws naming the variable.
 */
export function tunablesFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  base: Tunables = DEFAULT_TUNABLES,
): Tunables {
  const override: Record<string, unknown> = {};
  const label: Label = (field) =>
    field in TUNABLES_ENV ? `${TUNABLES_ENV[field as keyof Tunables]} (${field})` : field;
  for (const [field, name] of Object.entries(TUNABLES_ENV)) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") continue;
    if (field in LEDGER_ENV && typeof DEFAULT_TUNABLES[field as keyof Tunables] !== "number") {
      override[field] = ledgerVariable(raw);
      continue;
    }
    if (typeof DEFAULT_TUNABLES[field as keyof Tunables] === "boolean") {
      const flag = BOOLEAN_WORDS[raw.trim().toLowerCase()];
      if (flag === undefined) badVariable(name, field, "true or false", raw);
      override[field] = flag;
      continue;
    }
    const value = Number(raw.trim());
    if (!Number.isFinite(value)) badVariable(name, field, "a number", raw);
    override[field] = value;
  }
  return layer(base, [override], label);
}
