/**
 * Counting what model work uses (docs/reliability.md, "Limits, budgets and rates"): a summarizer wrapped
 * so that each call adds its calls and tokens to one tally. Tokens are what the provider reported;
 * a call that reports none (the offline summarizer, some OpenAI-compatible servers) counts the
 * service's chars/4 estimate of the text it sent and got back.
 */
import { CHARS_PER_TOKEN, messageChars } from "../domain/tokens.js";
import type { ModelUse } from "../ports/metrics.js";
import type { CompletionRequest, SummarizeInput, Summarizer, SummarizerUsage } from "../ports/summarizer.js";

const tokensOf = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

/** The input chars of one summarize call: every text the prompt carries. */
function inputChars(input: SummarizeInput): number {
  let chars = (input.priorSummary ?? "").length + (input.instructions ?? "").length + (input.topicLabel ?? "").length;
  for (const m of input.messages) chars += messageChars(m) + m.id.length;
  for (const unit of input.mustKeep ?? []) chars += unit.length;
  return chars;
}

function add(use: ModelUse, reported: SummarizerUsage | undefined, estimate: { input: number; output: number }) {
  use.calls += 1;
  use.inputTokens += reported?.inputTokens ?? estimate.input;
  use.outputTokens += reported?.outputTokens ?? estimate.output;
}

/**
 * `summarizer` with every `summarize` and `complete` call counted into `use`. Nothing else
 * changes: the outcome is passed through as it came.
 *
 * @example
 * const { summarizer: counted, use } = metered(summarizer);
 * await counted.summarize(input); // use.calls === 1
 */
export function metered(summarizer: Summarizer): { summarizer: Summarizer; use: ModelUse } {
  const use: ModelUse = { calls: 0, inputTokens: 0, outputTokens: 0 };
  const counted: Summarizer = {
    provider: summarizer.provider,
    ...(summarizer.foldFormat ? { foldFormat: summarizer.foldFormat } : {}),
    model: summarizer.model,
    contextWindow: summarizer.contextWindow,
    maxOutputTokens: summarizer.maxOutputTokens,
    async summarize(input) {
      const outcome = await summarizer.summarize(input);
      add(use, outcome.usage, { input: tokensOf(inputChars(input)), output: tokensOf(outcome.ok ? outcome.summary.length : 0) });
      return outcome;
    },
    ...(summarizer.complete
      ? {
          complete: async (request: CompletionRequest) => {
            const outcome = await summarizer.complete!(request);
            add(use, outcome.usage, {
              input: tokensOf(request.system.length + request.user.length),
              output: tokensOf(outcome.ok ? outcome.text.length : 0),
            });
            return outcome;
          },
        }
      : {}),
  };
  return { summarizer: counted, use };
}
