/**
 * Summarizer over the official `@anthropic-ai/sdk` (Messages API), for Claude models or any
 * server speaking the same wire format at `baseURL`.
 */
import Anthropic from "@anthropic-ai/sdk";
import * as z from "../../domain/zod.js";
import type { Summarizer } from "../../ports/summarizer.js";
import { PROVIDERS } from "./provider-descriptors.js";
import {
  createRemoteSummarizer,
  remoteConfig,
  sdkClientOptions,
  type RemoteSummarizerOptions,
} from "./remote-summarizer.js";

export const DEFAULT_ANTHROPIC_SUMMARIZER_MODEL = PROVIDERS.anthropic.defaultModel;

/** {@link RemoteSummarizerOptions}, with Anthropic's client. */
export type AnthropicSummarizerOptions = RemoteSummarizerOptions<Anthropic>;

const MessagesAnswer = z.object({
  content: z.array(z.object({ type: z.string(), text: z.optional(z.string()) })),
  stop_reason: z.nullish(z.string()),
  usage: z.nullish(z.object({ input_tokens: z.nullish(z.number()), output_tokens: z.nullish(z.number()) })),
});

/**
 * A summarizer over Anthropic's Messages API (or a server speaking it at `baseURL`). Never throws:
 * every failure comes back as `{ ok: false, failure }`.
 *
 * @example
 * const summarizer = createAnthropicSummarizer({ apiKey: process.env.ANTHROPIC_API_KEY });
 * const outcome = await summarizer.summarize({ priorSummary: null, messages });
 * if (outcome.ok) console.log(outcome.summary);
 */
export function createAnthropicSummarizer(options: AnthropicSummarizerOptions = {}): Summarizer {
  const config = remoteConfig(options, DEFAULT_ANTHROPIC_SUMMARIZER_MODEL);
  const { model } = config;
  const client = options.client ?? new Anthropic(sdkClientOptions(options, config.policy));

  return createRemoteSummarizer({
    provider: options.provider ?? "anthropic",
    ...config,
    send: (prompt, answerTokens, { signal }) =>
      client.messages.create(
        {
          model,
          max_tokens: answerTokens,
          system: prompt.system,
          messages: [{ role: "user", content: prompt.user }],
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        },
        { signal, maxRetries: 0 },
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
