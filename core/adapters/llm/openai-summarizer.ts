/**
 * Summarizer over the official `openai` SDK (Chat Completions). Serves OpenAI itself and any
 * OpenAI-compatible server (vLLM, Ollama, llama.cpp) reached through `baseURL`.
 */
import OpenAI from "openai";
import * as z from "zod";
import { DEFAULT_SUMMARY_MAX_TOKENS } from "../../domain/summary-prompt.js";
import type { Summarizer } from "../../ports/summarizer.js";
import { contextWindowFor, UNKNOWN_MODEL_CONTEXT_WINDOW } from "../../domain/model-windows.js";
import { createRemoteSummarizer } from "./remote-summarizer.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";

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
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const official = options.client
    ? isOfficialEndpoint(options.client.baseURL)
    : isOfficialEndpoint(options.baseURL);
  const tokenLimitParam =
    options.tokenLimitParam ?? (official ? "max_completion_tokens" : "max_tokens");
  const reasoning = official && isReasoningModel(model);
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

  return createRemoteSummarizer({
    provider: "openai",
    model,
    contextWindow: options.contextWindow ?? contextWindowFor(model) ?? UNKNOWN_MODEL_CONTEXT_WINDOW,
    maxOutputTokens: options.maxOutputTokens ?? DEFAULT_SUMMARY_MAX_TOKENS,
    extraAnswerTokens: reasoning ? REASONING_ALLOWANCE_TOKENS : 0,
    policy,
    send: (prompt, answerTokens, { signal, timeoutMs }) =>
      client.chat.completions.create(
        {
          model,
          messages: [
            { role: "system", content: prompt.system },
            { role: "user", content: prompt.user },
          ],
          [tokenLimitParam]: answerTokens,
          ...(reasoning ? { reasoning_effort: "low" as const } : {}),
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        { signal, timeout: timeoutMs, maxRetries: 0 },
      ),
    read(raw) {
      const parsed = ChatCompletionAnswer.safeParse(raw);
      if (!parsed.success) return { ok: false, error: "openai answer has an unexpected shape (no choices[0].message)" };
      const choice = parsed.data.choices[0];
      const usage = parsed.data.usage;
      return {
        ok: true,
        text: choice?.message.content,
        refusal: choice?.message.refusal ?? null,
        usage: {
          ...(usage?.prompt_tokens !== undefined ? { inputTokens: usage.prompt_tokens } : {}),
          ...(usage?.completion_tokens !== undefined ? { outputTokens: usage.completion_tokens } : {}),
        },
        ...(choice?.finish_reason ? { stopNote: ` (finish_reason=${choice.finish_reason})` } : {}),
      };
    },
  });
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
