/**
 * What one summarizer call can hold (docs/compaction.md, "Summarizing"): the char cap on the
 * folded messages, the largest summary budget a summarizer window allows, and the check that
 * refuses stored settings the configured summarizer cannot run.
 */
import { invalid } from "./errors.js";
import { SUMMARY_MAX_TOKENS_RANGE, type Tunables, type TunablesOverride } from "./tunables.js";

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
 * prior summary (up to 2 x `summaryMaxTokens`, models overshoot) and `maxOutputTokens`. Throws a
 * `tunables.summarizer_window_too_small` error when fewer than 1000 chars would be left.
 *
 * @example summarizerInputCap(DEFAULT_TUNABLES, 8192, 1024) // 14604
 */
export function summarizerInputCap(
  tunables: Tunables,
  summarizerContextWindow: number,
  maxOutputTokens: number,
): number {
  const reserved = SUMMARIZER_PROMPT_RESERVE_TOKENS + 2 * tunables.summaryMaxTokens + maxOutputTokens;
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
 * Largest `summaryMaxTokens` whose call still fits `contextWindow`: the prompt reserve, the prior
 * summary (2x), the output (1x) and 1000 chars of messages (see {@link summarizerInputCap}).
 */
export function largestSummaryMaxTokens(contextWindow: number): number {
  return Math.min(
    SUMMARY_MAX_TOKENS_RANGE.max,
    Math.floor((contextWindow - SUMMARIZER_PROMPT_RESERVE_TOKENS - MIN_SOURCE_TOKENS) / 3),
  );
}

/**
 * Largest budget the window share may grow a summary to for a summarizer window: the prompt
 * reserve and the budget's three shares (prior summary twice, output once) take at most half of
 * that window, so a grown budget never leaves one call only a sliver of messages (the fixed
 * `summaryMaxTokens` may go further: {@link largestSummaryMaxTokens}).
 */
export function largestGrownSummaryTokens(summarizerContextWindow: number): number {
  return Math.min(SUMMARY_MAX_TOKENS_RANGE.max, Math.floor((summarizerContextWindow / 2 - SUMMARIZER_PROMPT_RESERVE_TOKENS) / 3));
}

/**
 * The summary budget of one fold: `summaryMaxTokens`, or `summaryWindowShare` of the model's
 * window when that is more, at most 4,000 and {@link largestGrownSummaryTokens} of the summarizer.
 * A fold that knows no window (a range fold) and a share of 0 keep the fixed budget.
 *
 * @example summaryBudgetFor({ summaryMaxTokens: 400, summaryWindowShare: 0.1 }, 16_000) // 1600
 */
export function summaryBudgetFor(
  tunables: Pick<Tunables, "summaryMaxTokens" | "summaryWindowShare">,
  contextWindow: number | undefined,
  summarizerContextWindow = Number.POSITIVE_INFINITY,
): number {
  if (!contextWindow || tunables.summaryWindowShare <= 0) return tunables.summaryMaxTokens;
  const grown = Math.min(Math.round(tunables.summaryWindowShare * contextWindow), largestGrownSummaryTokens(summarizerContextWindow));
  return Math.max(tunables.summaryMaxTokens, grown);
}

/** `tunables` with the summary budget of a fold for `contextWindow` ({@link summaryBudgetFor}). */
export function withSummaryBudget<T extends Pick<Tunables, "summaryMaxTokens" | "summaryWindowShare">>(
  tunables: T,
  contextWindow: number | undefined,
  summarizerContextWindow?: number,
): T {
  const summaryMaxTokens = summaryBudgetFor(tunables, contextWindow, summarizerContextWindow);
  return summaryMaxTokens === tunables.summaryMaxTokens ? tunables : { ...tunables, summaryMaxTokens };
}

/**
 * Refuses an override whose values cannot work with the configured summarizer, naming the field:
 * a `summaryMaxTokens` that leaves the summarizer's window no room for the messages, or a
 * `maxSourceChars` larger than one call of that window can take (it would otherwise be lowered
 * silently). `effective` is the result of layering the override. Checked when settings are
 * stored, so a turn never meets the problem.
 */
export function checkFitsSummarizer(override: TunablesOverride, effective: Tunables, summarizer: SummarizerFit): void {
  const issues: Array<{ field: string; message: string }> = [];
  const where = `the summarizer ${summarizer.model} (window ${summarizer.contextWindow} tokens)`;
  const largest = largestSummaryMaxTokens(summarizer.contextWindow);
  if (override.summaryMaxTokens !== undefined && effective.summaryMaxTokens > largest) {
    issues.push({
      field: "summaryMaxTokens",
      message: largest >= SUMMARY_MAX_TOKENS_RANGE.min ? `must be <= ${largest} for ${where}` : `cannot fit ${where}`,
    });
  } else if (override.maxSourceChars !== undefined && effective.summaryMaxTokens <= largest) {
    const fits = summarizerInputCap({ ...effective, maxSourceChars: Number.MAX_SAFE_INTEGER }, summarizer.contextWindow, effective.summaryMaxTokens);
    if (effective.maxSourceChars > fits) {
      issues.push({ field: "maxSourceChars", message: `must be <= ${fits} for ${where} with summaryMaxTokens ${effective.summaryMaxTokens}` });
    }
  }
  if (issues.length > 0) {
    throw invalid("tunables.invalid", `Invalid compaction tunables: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`, {
      fields: issues.map((i) => i.field),
      issues,
    });
  }
}
