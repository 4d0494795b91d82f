/**
 * The offline summarizer: deterministic, no network, the default on a fresh machine. It picks the
 * sentences that carry the most names, numbers, dates, decisions and open tasks (a budgeted
 * maximum-coverage greedy), keeps who said each one and on which day, and folds the prior summary
 * in. The algorithm and its measured retention are in docs/summarizers.md.
 */
import { charsForTokens, truncateToTokenBudget } from "../../domain/budget.js";
import { estimateTokens } from "../../domain/tokens.js";
import { buildVocab, unitKey } from "../../domain/salient-units.js";
import { DEFAULT_SUMMARY_MAX_TOKENS } from "../../domain/summary-prompt.js";
import { summarizerError, type SummarizeInput, type SummarizeOutcome, type Summarizer } from "../../ports/summarizer.js";
import { PROVIDERS } from "./provider-descriptors.js";
import { headerLine, parsePrior, render } from "./offline/format.js";
import { termsOf } from "./offline/lexicon.js";
import { select, weakestIndex } from "./offline/select.js";
import { dayOf, messageUnits, type Unit, type UnitContext } from "./offline/units.js";

export const OFFLINE_SUMMARIZER_MODEL = PROVIDERS.offline.defaultModel;
/** Nominal window: the offline summarizer has no model limit, but the service caps its input by it. */
export const OFFLINE_CONTEXT_WINDOW = 200_000;

export interface OfflineSummarizerOptions {
  /** Output budget of one summary, in tokens (chars/4). Default 400. */
  maxOutputTokens?: number;
  contextWindow?: number;
}

/**
 * The offline summarizer (no network, deterministic), the default when no LLM is configured.
 * Never throws: a failure comes back as `{ ok: false, failure }`.
 *
 * @example
 * const summarizer = createOfflineSummarizer({ maxOutputTokens: 400 });
 * const outcome = await summarizer.summarize({ priorSummary: null, messages });
 */
export function createOfflineSummarizer(options: OfflineSummarizerOptions = {}): Summarizer {
  const maxOutputTokens = options.maxOutputTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  return {
    provider: "offline",
    model: OFFLINE_SUMMARIZER_MODEL,
    contextWindow: options.contextWindow ?? OFFLINE_CONTEXT_WINDOW,
    maxOutputTokens,
    async summarize(input: SummarizeInput): Promise<SummarizeOutcome> {
      if (input.messages.length === 0 && !input.priorSummary?.trim()) {
        return { ok: false, failure: summarizerError("nothing_to_summarize", "nothing to summarize: no messages and no prior summary") };
      }
      try {
        const { text, citations } = extractiveSummaryWithSources(input, input.maxSummaryTokens ?? maxOutputTokens);
        // Lines carried over from the prior summary cite nothing here (the service inherits theirs).
        return { ok: true, summary: text, ...(citations.some((c) => c.length > 0) ? { citations } : {}) };
      } catch (err) {
        // Pure code should not throw; if it does, the caller must record a failure, not crash.
        return { ok: false, failure: summarizerError("summarizer_error", `offline summarizer failed: ${(err as Error).message}`) };
      }
    },
  };
}

/**
 * The summary text for `input`, at most `maxTokens` (chars/4). Deterministic: the same input
 * always gives the same text.
 */
export function extractiveSummary(input: SummarizeInput, maxTokens: number): string {
  return extractiveSummaryWithSources(input, maxTokens).text;
}

/**
 * {@link extractiveSummary} with, per line of the text, the ids of the messages the line came
 * from (empty for the header, day headings and lines carried over from the prior summary).
 */
export function extractiveSummaryWithSources(
  input: SummarizeInput,
  maxTokens: number,
): { text: string; citations: string[][] } {
  const budget = charsForTokens(maxTokens);
  const ctx: UnitContext = {
    focus: new Set(termsOf(`${input.topicLabel ?? ""} ${input.instructions ?? ""}`)),
    vocab: buildVocab([input.priorSummary ?? "", ...input.messages.map((m) => m.content)]),
    mustKeep: (input.mustKeep ?? []).map(unitKey).filter(Boolean),
  };

  const priorParsed = parsePrior(input.priorSummary, ctx);
  const units: Unit[] = [...priorParsed.units];
  const n = input.messages.length;
  input.messages.forEach((message, i) => {
    units.push(...messageUnits(message, i, n, units.length, ctx));
  });

  const days = [
    ...(priorParsed.firstDay ? [priorParsed.firstDay] : []),
    ...input.messages.map((m) => dayOf(m.createdAt)).filter(Boolean),
  ].sort();
  const header = headerLine(
    priorParsed.count + n,
    days[0] ?? "",
    days[days.length - 1] ?? "",
    input.topicLabel,
  );

  const selected = select(units, budget - header.length - 1);
  let rendered = render(header, selected);
  // The cost model is an estimate (shared headings); drop the weakest picks until it truly fits.
  while (estimateTokens(rendered.text) > maxTokens && selected.length > 0) {
    selected.splice(weakestIndex(selected), 1);
    rendered = render(header, selected);
  }
  const text = truncateToTokenBudget(rendered.text, maxTokens);
  return { text, citations: rendered.citations.slice(0, text.split("\n").length) };
}
