/**
 * The flow every remote summarizer shares: build the prompt within the model's window, call the
 * provider with bounded retries, keep only the summary block, and turn every failure into
 * `{ ok: false }`. Each adapter only says how to send the prompt and how to read the answer.
 */
import {
  answerTokenLimit,
  buildSummaryPrompt,
  parseSummaryAnswer,
  promptTokenCeiling,
  type SummaryPrompt,
} from "../../domain/summary-prompt.js";
import type { SummarizeInput, SummarizeOutcome, Summarizer, SummarizerUsage } from "../../ports/summarizer.js";
import { callWithRetries, classifySdkError, type RetryPolicy } from "./retry.js";

/** What an adapter read from one provider answer. */
export type ProviderAnswer =
  | { ok: true; text: string | null | undefined; usage?: SummarizerUsage; stopNote?: string; refusal?: string | null }
  | { ok: false; error: string };

export interface RemoteSummarizerSpec {
  provider: "openai" | "anthropic";
  model: string;
  contextWindow: number;
  maxOutputTokens: number;
  /** Extra answer tokens beyond the summary and its scratch pass (reasoning models). */
  extraAnswerTokens?: number;
  policy: RetryPolicy;
  /** One attempt: send the prompt with this output limit, honouring the signal and timeout. */
  send(prompt: SummaryPrompt, answerTokens: number, attempt: { signal: AbortSignal; timeoutMs: number }): Promise<unknown>;
  /** Reads the raw answer (zod-parsed by the adapter). */
  read(raw: unknown): ProviderAnswer;
}

export function createRemoteSummarizer(spec: RemoteSummarizerSpec): Summarizer {
  async function summarizeOnce(input: SummarizeInput): Promise<SummarizeOutcome> {
    if (input.messages.length === 0 && !input.priorSummary?.trim()) {
      return { ok: false, error: "nothing to summarize: no messages and no prior summary" };
    }
    // The budget of this call: the process's setting when the caller passes one.
    const budget = input.maxSummaryTokens ?? spec.maxOutputTokens;
    const answerTokens = answerTokenLimit(budget) + (spec.extraAnswerTokens ?? 0);
    const prompt = buildSummaryPrompt(input, {
      maxSummaryTokens: budget,
      maxInputTokens: promptTokenCeiling(spec.contextWindow, answerTokens),
      citations: input.messages.length > 0,
    });
    const result = await callWithRetries(
      spec.policy,
      (attempt) => spec.send(prompt, answerTokens, attempt),
      (err) => classifySdkError(spec.provider, err),
    );
    if (!result.ok) return { ok: false, error: result.error };
    const read = spec.read(result.value);
    if (!read.ok) return read;
    const usage = read.usage && Object.keys(read.usage).length ? { usage: read.usage } : {};
    if (read.refusal) return { ok: false, error: `the model refused: ${read.refusal.slice(0, 200)}`, ...usage };
    const answer = parseSummaryAnswer(read.text, budget, input.messages.length);
    if (!answer.ok) return { ok: false, error: `${answer.error}${read.stopNote ?? ""}`, ...usage };
    // Numbers were checked against the transcript's range; map them back to message ids.
    const cited = answer.citations?.some((line) => line.length > 0) ? answer.citations : undefined;
    const citations = cited?.map((line) => line.map((n) => input.messages[n - 1]!.id));
    return { ok: true, summary: answer.summary, ...(citations ? { citations } : {}), ...usage };
  }

  return {
    provider: spec.provider,
    model: spec.model,
    contextWindow: spec.contextWindow,
    maxOutputTokens: spec.maxOutputTokens,
    async summarize(input) {
      try {
        return await summarizeOnce(input);
      } catch (err) {
        // The port promises no throw; anything unforeseen still ends as a recorded failure.
        return { ok: false, error: `${spec.provider} summarizer failed: ${(err as Error)?.message ?? String(err)}` };
      }
    },
  };
}
