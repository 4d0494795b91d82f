/**
 * Summarizer over the official `@anthropic-ai/sdk` (Messages API), for Claude models or any
 * server speaking the same wire format at `baseURL`.
 */
import Anthropic from "@anthropic-ai/sdk";
import * as z from "zod";
import { DEFAULT_SUMMARY_MAX_TOKENS } from "../../domain/summary-prompt.js";
import type { Summarizer } from "../../ports/summarizer.js";
import { contextWindowFor, UNKNOWN_MODEL_CONTEXT_WINDOW } from "../../domain/model-windows.js";
import { createRemoteSummarizer } from "./remote-summarizer.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";

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
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
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

  return createRemoteSummarizer({
    provider: "anthropic",
    model,
    contextWindow: options.contextWindow ?? contextWindowFor(model) ?? UNKNOWN_MODEL_CONTEXT_WINDOW,
    maxOutputTokens: options.maxOutputTokens ?? DEFAULT_SUMMARY_MAX_TOKENS,
    policy,
    send: (prompt, answerTokens, { signal, timeoutMs }) =>
      client.messages.create(
        {
          model,
          max_tokens: answerTokens,
          system: prompt.system,
          messages: [{ role: "user", content: prompt.user }],
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        },
        { signal, timeout: timeoutMs, maxRetries: 0 },
      ),
    read(raw) {
      const parsed = MessagesAnswer.safeParse(raw);
      if (!parsed.success) return { ok: false, error: "anthropic answer has an unexpected shape (no content blocks)" };
      const { content, stop_reason, usage } = parsed.data;
      return {
        ok: true,
        text: content.filter((b) => b.type === "text").map((b) => b.text ?? "").join(""),
        usage: {
          ...(typeof usage?.input_tokens === "number" ? { inputTokens: usage.input_tokens } : {}),
          ...(typeof usage?.output_tokens === "number" ? { outputTokens: usage.output_tokens } : {}),
        },
        ...(stop_reason ? { stopNote: ` (stop_reason=${stop_reason})` } : {}),
      };
    },
  });
}
