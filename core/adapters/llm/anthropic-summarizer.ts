/**
 * Summarizer over the official `@anthropic-ai/sdk` (Messages API), for Claude models or any
 * server speaking the same wire format at `baseURL`.
 */
import Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import {
  answerTokenLimit,
  buildSummaryPrompt,
  DEFAULT_SUMMARY_MAX_TOKENS,
  parseSummaryAnswer,
  promptTokenCeiling,
} from "../../domain/summary-prompt.js";
import type {
  SummarizeInput,
  SummarizeOutcome,
  Summarizer,
  SummarizerUsage,
} from "../../ports/summarizer.js";
import { contextWindowFor, UNKNOWN_MODEL_CONTEXT_WINDOW } from "../../domain/model-windows.js";
import { callWithRetries, classifySdkError, DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";

export const DEFAULT_ANTHROPIC_SUMMARIZER_MODEL = "claude-3-5-haiku-latest";

export interface AnthropicSummarizerOptions {
  /** Default `claude-3-5-haiku-latest`. */
  model?: string;
  apiKey?: string;
  /** Default: Anthropic's API. */
  baseURL?: string;
  /** A ready client (tests, custom transports). `apiKey`, `baseURL` and `fetch` are then unused. */
  client?: Anthropic;
  /** Custom fetch handed to the SDK when it builds its own client. */
  fetch?: typeof fetch;
  /** Output budget of one stored summary, in tokens. Default 400. */
  maxOutputTokens?: number;
  /** Window of `model`; default from the registry, else {@link UNKNOWN_MODEL_CONTEXT_WINDOW}. */
  contextWindow?: number;
  retry?: Partial<RetryPolicy>;
  /** Omitted unless set: the provider default is accepted by every model. */
  temperature?: number;
}

const MessagesAnswer = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  stop_reason: z.string().nullish(),
  usage: z
    .object({ input_tokens: z.number().nullish(), output_tokens: z.number().nullish() })
    .nullish(),
});

/**
 * @example
 * const summarizer = createAnthropicSummarizer({ apiKey: process.env.ANTHROPIC_API_KEY });
 */
export function createAnthropicSummarizer(options: AnthropicSummarizerOptions = {}): Summarizer {
  const model = options.model ?? DEFAULT_ANTHROPIC_SUMMARIZER_MODEL;
  const maxOutputTokens = options.maxOutputTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  const contextWindow =
    options.contextWindow ?? contextWindowFor(model) ?? UNKNOWN_MODEL_CONTEXT_WINDOW;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const answerTokens = answerTokenLimit(maxOutputTokens);

  const client =
    options.client ??
    new Anthropic({
      // When given, the key is the client's only credential: the SDK then reads no env var or
      // config file for another one.
      apiKey: options.apiKey,
      // null, not undefined: undefined would let the SDK fall back to process.env.
      baseURL: options.baseURL ?? null,
      maxRetries: 0,
      timeout: policy.attemptTimeoutMs,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });

  async function summarize(input: SummarizeInput): Promise<SummarizeOutcome> {
    try {
      return await summarizeOnce(input);
    } catch (err) {
      // The port promises no throw; anything unforeseen still ends as a recorded failure.
      return { ok: false, error: `anthropic summarizer failed: ${(err as Error)?.message ?? String(err)}` };
    }
  }

  async function summarizeOnce(input: SummarizeInput): Promise<SummarizeOutcome> {
    if (input.messages.length === 0 && !input.priorSummary?.trim()) {
      return { ok: false, error: "nothing to summarize: no messages and no prior summary" };
    }
    const prompt = buildSummaryPrompt(input, {
      maxSummaryTokens: maxOutputTokens,
      maxInputTokens: promptTokenCeiling(contextWindow, answerTokens),
    });
    const body: Anthropic.MessageCreateParamsNonStreaming = {
      model,
      max_tokens: answerTokens,
      system: prompt.system,
      messages: [{ role: "user", content: prompt.user }],
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    };

    const result = await callWithRetries(
      policy,
      ({ signal, timeoutMs }) =>
        client.messages.create(body, { signal, timeout: timeoutMs, maxRetries: 0 }),
      (err) => classifySdkError("anthropic", err),
    );
    if (!result.ok) return { ok: false, error: result.error };

    const parsed = MessagesAnswer.safeParse(result.value);
    if (!parsed.success) {
      return { ok: false, error: "anthropic answer has an unexpected shape (no content blocks)" };
    }
    const usage = toUsage(parsed.data.usage);
    const text = parsed.data.content
      .filter((block) => block.type === "text")
      .map((block) => block.text ?? "")
      .join("");
    const answer = parseSummaryAnswer(text, maxOutputTokens);
    if (!answer.ok) {
      const reason = parsed.data.stop_reason ? ` (stop_reason=${parsed.data.stop_reason})` : "";
      return { ok: false, error: `${answer.error}${reason}`, ...usage };
    }
    return { ok: true, summary: answer.summary, ...usage };
  }

  return { provider: "anthropic", model, contextWindow, maxOutputTokens, summarize };
}

function toUsage(
  usage: { input_tokens?: number | null; output_tokens?: number | null } | null | undefined,
): { usage?: SummarizerUsage } {
  if (!usage) return {};
  const out: SummarizerUsage = {};
  if (typeof usage.input_tokens === "number") out.inputTokens = usage.input_tokens;
  if (typeof usage.output_tokens === "number") out.outputTokens = usage.output_tokens;
  return Object.keys(out).length ? { usage: out } : {};
}
