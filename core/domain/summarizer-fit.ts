/**
 * What one summarizer call can hold (docs/summarizers.md, "Summarizing"): the char cap on the
 * folded messages, the largest summary budget a summarizer window allows, and the check that
 * refuses stored settings the configured summarizer cannot run.
 */
import { invalid } from "./errors.js";
import { SUMMARY_MAX_TOKENS_RANGE, TUNABLES_ENV, tunablesFromEnv, type Tunables, type TunablesOverride } from "./tunables.js";

/**
 * Tokens of a summarizer call that are not the folded messages: the instruction template with its
 * per-call framing and an optional caller `instructions` text (keep that under ~2000 chars).
 */
export const SUMMARIZER_PROMPT_RESERVE_TOKENS = 1500;

/**
 * Characters per token assumed when turning the summarizer's free token budget into a char cap.
 * Below the estimate's 4 on purpose: code, JSON and non-English text tokenize denser than prose, and an
 * underestimate here overflows the summarizer's window.
 */
export const SAFE_CHARS_PER_TOKEN = 3;

/**
 * The char cap for one summarizer call's messages: `maxSourceChars`, lowered when the summarizer
 * model's window is smaller than that needs. The window must also hold the prompt reserve, the
 * prior summary (up to 2 x the fold's budget, models overshoot) and `maxOutputTokens`. The fold's
 * budget is the one `tunables` carry in both bounds ({@link withSummaryBudget}), else their fixed
 * budget (`summaryMinTokens`). Throws a
 * `tunables.summarizer_window_too_small` error when fewer than 1000 chars would be left.
 *
 * @example summarizerInputCap(DEFAULT_TUNABLES, 8192, 1024) // 14604
 */
export function summarizerInputCap(
  tunables: Tunables,
  summarizerContextWindow: number,
  maxOutputTokens: number,
): number {
  const reserved = SUMMARIZER_PROMPT_RESERVE_TOKENS + 2 * summaryBudgetFor(tunables, undefined) + maxOutputTokens;
  const free = summarizerContextWindow - reserved;
  const cap = Math.min(tunables.maxSourceChars, Math.floor(free * SAFE_CHARS_PER_TOKEN));
  if (!Number.isFinite(cap) || cap < 1000) {
    throw invalid(
      "tunables.summarizer_window_too_small",
      `Summarizer context window ${summarizerContextWindow} is too small: it needs at least ${reserved + Math.ceil(1000 / SAFE_CHARS_PER_TOKEN)} tokens (${reserved} reserved for prompt, prior summary and ${maxOutputTokens} output tokens, plus 1000 chars of messages)`,
      { summarizerContextWindow, maxOutputTokens },
    );
  }
  return cap;
}

/** What a stored setting is checked against: the summarizer this deployment runs. */
export interface SummarizerFit {
  model: string;
  /** The summarizer model's window, in tokens. */
  contextWindow: number;
}

/** Tokens a summarizer window must keep for the messages of one call (1000 chars). */
const MIN_SOURCE_TOKENS = Math.ceil(1000 / SAFE_CHARS_PER_TOKEN);

/**
 * Largest fixed budget (`summaryMinTokens`) whose call still fits `contextWindow`: the prompt
 * reserve, the prior summary (2x), the output (1x) and 1000 chars of messages (see
 * {@link summarizerInputCap}).
 */
export function largestSummaryMinTokens(contextWindow: number): number {
  return Math.min(
    SUMMARY_MAX_TOKENS_RANGE.max,
    Math.floor((contextWindow - SUMMARIZER_PROMPT_RESERVE_TOKENS - MIN_SOURCE_TOKENS) / 3),
  );
}

/**
 * Largest budget the window share may grow a summary to for a summarizer window: the prompt
 * reserve and the budget's three shares (prior summary twice, output once) take at most half of
 * that window, so a grown budget never leaves one call only a sliver of messages (the fixed
 * `summaryMinTokens` may go further: {@link largestSummaryMinTokens}).
 */
export function largestGrownSummaryTokens(summarizerContextWindow: number): number {
  return Math.min(SUMMARY_MAX_TOKENS_RANGE.max, Math.floor((summarizerContextWindow / 2 - SUMMARIZER_PROMPT_RESERVE_TOKENS) / 3));
}

/**
 * The summary budget of one fold (docs/configuration.md, "Tunables"): `summaryWindowShare` of the
 * model's window, kept between `summaryMinTokens` and `summaryMaxTokens`; above the minimum it
 * grows only as far as {@link largestGrownSummaryTokens} of the summarizer. A fold that knows no
 * window and a share of 0 get the minimum.
 *
 * @example summaryBudgetFor({ summaryMinTokens: 400, summaryMaxTokens: 4000, summaryWindowShare: 0.1 }, 16_000) // 1600
 */
export function summaryBudgetFor(
  tunables: Pick<Tunables, "summaryMinTokens" | "summaryMaxTokens" | "summaryWindowShare">,
  contextWindow: number | undefined,
  summarizerContextWindow = Number.POSITIVE_INFINITY,
): number {
  const least = Math.min(tunables.summaryMinTokens, tunables.summaryMaxTokens);
  if (!contextWindow || tunables.summaryWindowShare <= 0) return least;
  const grown = Math.min(
    Math.round(tunables.summaryWindowShare * contextWindow),
    tunables.summaryMaxTokens,
    largestGrownSummaryTokens(summarizerContextWindow),
  );
  return Math.max(least, grown);
}

/**
 * `tunables` with the summary budget of a fold for `contextWindow` ({@link summaryBudgetFor}) as
 * both bounds: what the fold's summarizer calls, input cap and quality gate read from then on
 * (`summaryMaxTokens`), and a second application keeps it.
 */
export function withSummaryBudget<T extends Pick<Tunables, "summaryMinTokens" | "summaryMaxTokens" | "summaryWindowShare">>(
  tunables: T,
  contextWindow: number | undefined,
  summarizerContextWindow?: number,
): T {
  const budget = summaryBudgetFor(tunables, contextWindow, summarizerContextWindow);
  return budget === tunables.summaryMaxTokens && budget === tunables.summaryMinTokens
    ? tunables
    : { ...tunables, summaryMinTokens: budget, summaryMaxTokens: budget };
}

/**
 * A range fold knows no model window (docs/compaction.md, "Range jobs"): its minimum is
 * raised to the size of the summary it chains, up to `summaryMaxTokens` and, like a grown budget,
 * {@link largestGrownSummaryTokens} of the summarizer, so a summary grown for a larger window is not
 * squeezed into `summaryMinTokens`.
 */
export function withPriorSummaryFloor<T extends Pick<Tunables, "summaryMinTokens" | "summaryMaxTokens">>(
  tunables: T,
  priorTokens: number,
  summarizerContextWindow = Number.POSITIVE_INFINITY,
): T {
  const ceiling = Math.min(tunables.summaryMaxTokens, largestGrownSummaryTokens(summarizerContextWindow));
  const floor = Math.max(tunables.summaryMinTokens, Math.min(priorTokens, ceiling));
  return floor === tunables.summaryMinTokens ? tunables : { ...tunables, summaryMinTokens: floor };
}

/**
 * The budget of a fold that knows no window from the environment alone: the summarizer's
 * default output budget. `SUMMARY_MIN_TOKENS` and `SUMMARY_MAX_TOKENS` are read and range-checked
 * by the tunables (their one reader), so a variable means the same everywhere.
 *
 * @example fixedSummaryBudgetFromEnv({ SUMMARY_MAX_TOKENS: "300" }) // 300
 */
export function fixedSummaryBudgetFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const min = TUNABLES_ENV.summaryMinTokens;
  const max = TUNABLES_ENV.summaryMaxTokens;
  return summaryBudgetFor(tunablesFromEnv({ [min]: env[min], [max]: env[max] }), undefined);
}

/**
 * Refuses an override whose values cannot work with the configured summarizer, naming the field:
 * a `summaryMinTokens` (the budget of every fold without a window) that leaves the summarizer's
 * window no room for the messages, or a `maxSourceChars` larger than one call of that window can
 * take (it would otherwise be lowered silently). `effective` is the result of layering the
 * override. Checked when settings are stored, so a turn never meets the problem. A grown budget
 * needs no check: it stops at half the summarizer's window ({@link largestGrownSummaryTokens}).
 */
export function checkFitsSummarizer(override: TunablesOverride, effective: Tunables, summarizer: SummarizerFit): void {
  const issues: Array<{ field: string; message: string }> = [];
  const where = `the summarizer ${summarizer.model} (window ${summarizer.contextWindow} tokens)`;
  const largest = largestSummaryMinTokens(summarizer.contextWindow);
  const fixed = summaryBudgetFor(effective, undefined);
  if (override.summaryMinTokens !== undefined && fixed > largest) {
    issues.push({
      field: "summaryMinTokens",
      message: largest >= SUMMARY_MAX_TOKENS_RANGE.min ? `must be <= ${largest} for ${where}` : `cannot fit ${where}`,
    });
  } else if (override.maxSourceChars !== undefined && fixed <= largest) {
    const fits = summarizerInputCap({ ...effective, maxSourceChars: Number.MAX_SAFE_INTEGER }, summarizer.contextWindow, fixed);
    if (effective.maxSourceChars > fits) {
      issues.push({ field: "maxSourceChars", message: `must be <= ${fits} for ${where} with summaryMinTokens ${fixed}` });
    }
  }
  if (issues.length > 0) {
    throw invalid("tunables.invalid", `Invalid compaction tunables: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`, {
      fields: issues.map((i) => i.field),
      issues,
    });
  }
}
