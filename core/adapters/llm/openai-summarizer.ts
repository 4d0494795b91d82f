/**
 * Summarizer over the official `openai` SDK (Chat Completions). Serves OpenAI itself and any
 * OpenAI-compatible server (vLLM, Ollama, llama.cpp) reached through `baseURL`.
 */
import OpenAI from "openai";
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

export const DEFAULT_OPENAI_SUMMARIZER_MODEL = "gpt-4o-mini";

/**
 * Extra completion tokens for reasoning models (o-series, gpt-5): their hidden reasoning is
 * charged against `max_completion_tokens`, and without room for it they return no text at all.
 */
const REASONING_ALLOWANCE_TOKENS = 3_000;

export interface OpenAISummarizerOptions {
  /** Default `gpt-4o-mini`. */
  model?: string;
  /** Required by the SDK; an OpenAI-compatible server without auth accepts any placeholder. */
  apiKey?: string;
  /** e.g. `http://localhost:11434/v1` for Ollama. Default: OpenAI's API. */
  baseURL?: string;
  /** A ready client (tests, custom transports). `apiKey`, `baseURL` and `fetch` are then unused. */
  client?: OpenAI;
  /** Custom fetch handed to the SDK when it builds its own client. */
  fetch?: typeof fetch;
  /** Output budget of one stored summary, in tokens. Default 400. */
  maxOutputTokens?: number;
  /** Window of `model`; default from the registry, else {@link UNKNOWN_MODEL_CONTEXT_WINDOW}. */
  contextWindow?: number;
  retry?: Partial<RetryPolicy>;
  /**
   * Which field carries the output limit. OpenAI wants `max_completion_tokens` (reasoning models
   * reject `max_tokens`); compatible servers reliably understand only `max_tokens`. Default: the
   * former for OpenAI's own endpoint, the latter for any other `baseURL`.
   */
  tokenLimitParam?: "max_tokens" | "max_completion_tokens";
  /** Omitted unless set: some models accept only their default temperature. */
  temperature?: number;
}

const ChatCompletionAnswer = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullish(), refusal: z.string().nullish() }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() })
    .nullish(),
});

/**
 * @example
 * const summarizer = createOpenAISummarizer({ apiKey: process.env.OPENAI_API_KEY });
 * const local = createOpenAISummarizer({ baseURL: "http://localhost:11434/v1", apiKey: "none", model: "llama3.1" });
 */
export function createOpenAISummarizer(options: OpenAISummarizerOptions = {}): Summarizer {
  const model = options.model ?? DEFAULT_OPENAI_SUMMARIZER_MODEL;
  const maxOutputTokens = options.maxOutputTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  const contextWindow =
    options.contextWindow ?? contextWindowFor(model) ?? UNKNOWN_MODEL_CONTEXT_WINDOW;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const official = options.client
    ? isOfficialEndpoint(options.client.baseURL)
    : isOfficialEndpoint(options.baseURL);
  const tokenLimitParam =
    options.tokenLimitParam ?? (official ? "max_completion_tokens" : "max_tokens");
  const reasoning = official && isReasoningModel(model);
  const answerTokens =
    answerTokenLimit(maxOutputTokens) + (reasoning ? REASONING_ALLOWANCE_TOKENS : 0);

  const client =
    options.client ??
    new OpenAI({
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
      return { ok: false, error: `openai summarizer failed: ${(err as Error)?.message ?? String(err)}` };
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
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model,
      messages: [
        { role: "system", content: prompt.system },
        { role: "user", content: prompt.user },
      ],
      [tokenLimitParam]: answerTokens,
      ...(reasoning ? { reasoning_effort: "low" as const } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    };

    const result = await callWithRetries(
      policy,
      ({ signal, timeoutMs }) =>
        client.chat.completions.create(body, { signal, timeout: timeoutMs, maxRetries: 0 }),
      (err) => classifySdkError("openai", err),
    );
    if (!result.ok) return { ok: false, error: result.error };

    const parsed = ChatCompletionAnswer.safeParse(result.value);
    if (!parsed.success) {
      return { ok: false, error: "openai answer has an unexpected shape (no choices[0].message)" };
    }
    const choice = parsed.data.choices[0];
    const usage = toUsage(parsed.data.usage);
    if (choice?.message.refusal) {
      return { ok: false, error: `the model refused: ${choice.message.refusal.slice(0, 200)}`, ...usage };
    }
    const answer = parseSummaryAnswer(choice?.message.content, maxOutputTokens);
    if (!answer.ok) {
      const reason = choice?.finish_reason ? ` (finish_reason=${choice.finish_reason})` : "";
      return { ok: false, error: `${answer.error}${reason}`, ...usage };
    }
    return { ok: true, summary: answer.summary, ...usage };
  }

  return { provider: "openai", model, contextWindow, maxOutputTokens, summarize };
}

function toUsage(
  usage: { prompt_tokens?: number; completion_tokens?: number } | null | undefined,
): { usage?: SummarizerUsage } {
  if (!usage) return {};
  const out: SummarizerUsage = {};
  if (usage.prompt_tokens !== undefined) out.inputTokens = usage.prompt_tokens;
  if (usage.completion_tokens !== undefined) out.outputTokens = usage.completion_tokens;
  return Object.keys(out).length ? { usage: out } : {};
}

function isOfficialEndpoint(baseURL: string | undefined): boolean {
  if (!baseURL) return true;
  try {
    return new URL(baseURL).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

/** o1/o3/o4 and gpt-5 reason before answering; their `-chat` variants do not. */
function isReasoningModel(model: string): boolean {
  const name = model.toLowerCase().split("/").pop() ?? "";
  return /^(o\d|gpt-5)/.test(name) && !/-chat/.test(name);
}
