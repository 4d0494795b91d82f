/**
 * Summarizer over the official `openai` SDK (Chat Completions). Serves OpenAI itself and any
 * OpenAI-compatible server (vLLM, Ollama, llama.cpp) reached through `baseURL`.
 */
import OpenAI from "openai";
import * as z from "../../domain/zod.js";
import type { Summarizer } from "../../ports/summarizer.js";
import { PROVIDERS } from "./provider-descriptors.js";
import {
  createRemoteSummarizer,
  remoteConfig,
  sdkClientOptions,
  type RemoteSummarizerOptions,
} from "./remote-summarizer.js";

export const DEFAULT_OPENAI_SUMMARIZER_MODEL = PROVIDERS.openai.defaultModel;

/**
 * Extra completion tokens for reasoning models (o-series, gpt-5): their hidden reasoning is
 * charged against `max_completion_tokens`, and without room for it they return no text at all.
 */
const REASONING_ALLOWANCE_TOKENS = 3_000;

/** {@link RemoteSummarizerOptions}, with OpenAI's client and the choice of output-limit field. */
export interface OpenAISummarizerOptions extends RemoteSummarizerOptions<OpenAI> {
  /**
   * Which field carries the output limit. OpenAI wants `max_completion_tokens` (reasoning models
   * reject `max_tokens`); compatible servers reliably understand only `max_tokens`. Default: the
   * former for OpenAI's own endpoint, the latter for any other `baseURL`.
   */
  tokenLimitParam?: "max_tokens" | "max_completion_tokens";
}

const ChatCompletionAnswer = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.nullish(z.string()), refusal: z.nullish(z.string()) }),
        finish_reason: z.nullish(z.string()),
      }),
    )
    .check(z.minLength(1)),
  usage: z.nullish(z.object({ prompt_tokens: z.optional(z.number()), completion_tokens: z.optional(z.number()) })),
});

/**
 * A summarizer over OpenAI's Chat Completions (or an OpenAI-compatible server at `baseURL`).
 * Never throws: every failure comes back as `{ ok: false, error }`.
 *
 * @example
 * const summarizer = createOpenAISummarizer({ apiKey: process.env.OPENAI_API_KEY });
 * const local = createOpenAISummarizer({ baseURL: "http://localhost:11434/v1", apiKey: "none", model: "llama3.1" });
 * const outcome = await summarizer.summarize({ priorSummary: null, messages });
 */
export function createOpenAISummarizer(options: OpenAISummarizerOptions = {}): Summarizer {
  const config = remoteConfig(options, DEFAULT_OPENAI_SUMMARIZER_MODEL);
  const { model } = config;
  const official = options.client
    ? isOfficialEndpoint(options.client.baseURL)
    : isOfficialEndpoint(options.baseURL);
  const tokenLimitParam =
    options.tokenLimitParam ?? (official ? "max_completion_tokens" : "max_tokens");
  const reasoning = official && isReasoningModel(model);
  const client = options.client ?? new OpenAI(sdkClientOptions(options, config.policy));

  return createRemoteSummarizer({
    provider: options.provider ?? "openai",
    ...config,
    extraAnswerTokens: reasoning ? REASONING_ALLOWANCE_TOKENS : 0,
    send: (prompt, answerTokens, { signal }) =>
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
        { signal, maxRetries: 0 },
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
