/**
 * The flow every remote summarizer shares: build the prompt within the model's window, call the
 * provider with bounded retries, keep only the summary block, and turn every failure into
 * `{ ok: false }`. Each adapter only says how to send the prompt and how to read the answer.
 */
import {
  answerTokenLimit,
  buildSummaryPrompt,
  promptTokenCeiling,
  type SummaryPrompt,
} from "../../domain/summary-prompt.js";
import { parseSummaryAnswer } from "../../domain/summary-answer.js";
import { contextWindowFor, UNKNOWN_MODEL_CONTEXT_WINDOW } from "../../domain/model-windows.js";
import { DEFAULT_SUMMARY_MAX_TOKENS } from "../../domain/summary-prompt.js";
import type {
  CompletionOutcome,
  CompletionRequest,
  SummarizeInput,
  SummarizeOutcome,
  Summarizer,
  SummarizerError,
  SummarizerUsage,
} from "../../ports/summarizer.js";
import { summarizerError } from "../../ports/summarizer.js";
import type { RemoteProviderName } from "./provider-descriptors.js";
import { callWithRetries, classifySdkError, DEFAULT_RETRY_POLICY, type RetryClock, type RetryPolicy } from "./retry.js";

/** The options of both SDK adapters (OpenAI and Anthropic); `Client` is the SDK's client class. */
export interface RemoteSummarizerOptions<Client = never> {
  /**
   * The name it reports (`metadata.provider`). Default: the adapter's own; a registry entry that
   * reuses an adapter's wire format passes its own name (core/adapters/llm/providers.ts).
   */
  provider?: RemoteProviderName;
  /** Default: the adapter's default model. */
  model?: string;
  /** When given, the client's only credential; an OpenAI-compatible server without auth accepts any placeholder. */
  apiKey?: string;
  /** e.g. `http://localhost:11434/v1` for Ollama. Default: the provider's own API. */
  baseURL?: string;
  /** A ready client (tests, custom transports). `apiKey`, `baseURL` and `fetch` are then unused. */
  client?: Client;
  /** Custom fetch handed to the SDK when it builds its own client. */
  fetch?: typeof fetch;
  /** Output budget of one stored summary, in tokens. Default 400. */
  maxOutputTokens?: number;
  /** Window of `model`; default from the registry, else {@link UNKNOWN_MODEL_CONTEXT_WINDOW}. */
  contextWindow?: number;
  retry?: Partial<RetryPolicy>;
  /** Omitted unless set: some models accept only their default temperature. */
  temperature?: number;
  /** The clock of the retry loop's timeouts and waits (tests); default the system clock. */
  clock?: RetryClock;
  /** The backoff's jitter (tests); default Math.random. */
  random?: () => number;
}

/** What both adapters derive from their options the same way. */
export function remoteConfig(
  options: RemoteSummarizerOptions<unknown>,
  defaultModel: string,
): { model: string; policy: RetryPolicy; contextWindow: number; maxOutputTokens: number; clock?: RetryClock; random?: () => number } {
  const model = options.model ?? defaultModel;
  return {
    model,
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    contextWindow: options.contextWindow ?? contextWindowFor(model) ?? UNKNOWN_MODEL_CONTEXT_WINDOW,
    maxOutputTokens: options.maxOutputTokens ?? DEFAULT_SUMMARY_MAX_TOKENS,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.random ? { random: options.random } : {}),
  };
}

/**
 * The constructor options of an SDK client built from {@link RemoteSummarizerOptions}: the SDK's
 * own retries are off (ours fit the request deadline, see retry.ts) and it reads nothing from the
 * environment. Each attempt's time is kept by the retry loop, which aborts it; the SDK's own
 * timer is only a backstop at the whole deadline.
 */
export function sdkClientOptions(options: RemoteSummarizerOptions<unknown>, policy: RetryPolicy) {
  return {
    // When given, the key is the client's only credential: the SDK then reads no env var or
    // config file for another one.
    apiKey: options.apiKey,
    // null, not undefined: undefined would let the SDK fall back to process.env.
    baseURL: options.baseURL ?? null,
    maxRetries: 0,
    timeout: policy.deadlineMs,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
}

/** What an adapter read from one provider answer. */
export type ProviderAnswer =
  | { ok: true; text: string | null | undefined; usage?: SummarizerUsage; stopNote?: string; refusal?: string | null }
  | { ok: false; error: string };

export interface RemoteSummarizerSpec {
  provider: RemoteProviderName;
  model: string;
  contextWindow: number;
  maxOutputTokens: number;
  /** Extra answer tokens beyond the summary and its scratch pass (reasoning models). */
  extraAnswerTokens?: number;
  policy: RetryPolicy;
  /** One attempt: send the prompt with this output limit; the signal aborts it at its time limit. */
  send(prompt: SummaryPrompt, answerTokens: number, attempt: { signal: AbortSignal }): Promise<unknown>;
  /** Reads the raw answer (zod-parsed by the adapter). */
  read(raw: unknown): ProviderAnswer;
  clock?: RetryClock;
  random?: () => number;
}

type Asked =
  | { ok: true; text: string | null | undefined; stopNote?: string; usage: { usage?: SummarizerUsage } }
  | { ok: false; failure: SummarizerError; usage?: SummarizerUsage };

/**
 * The summarizer flow shared by the SDK adapters: an adapter supplies only `send` (one attempt)
 * and `read` (the raw answer to text and usage).
 *
 * @example
 * const summarizer = createRemoteSummarizer({
 *   provider: "openai", model, contextWindow: 128_000, maxOutputTokens: 400, policy: DEFAULT_RETRY_POLICY,
 *   send: (prompt, answerTokens, { signal }) => client.chat.completions.create(request, { signal }),
 *   read: (raw) => ({ ok: true, text: readText(raw) }),
 * });
 */
export function createRemoteSummarizer(spec: RemoteSummarizerSpec): Summarizer {
  /** One prompt with bounded retries; a transport failure, an unreadable answer or a refusal is `ok: false`. */
  async function ask(prompt: SummaryPrompt, answerTokens: number): Promise<Asked> {
    const result = await callWithRetries(
      spec.policy,
      (attempt) => spec.send(prompt, answerTokens, attempt),
      (err) => classifySdkError(spec.provider, err),
      { ...(spec.clock ? { clock: spec.clock } : {}), ...(spec.random ? { random: spec.random } : {}) },
    );
    if (!result.ok) return { ok: false, failure: result.failure };
    const read = spec.read(result.value);
    if (!read.ok) return { ok: false, failure: summarizerError("answer_unusable", read.error) };
    const usage = read.usage && Object.keys(read.usage).length ? { usage: read.usage } : {};
    if (read.refusal) return { ok: false, failure: summarizerError("model_refused", `the model refused: ${read.refusal.slice(0, 200)}`), ...usage };
    return { ok: true, text: read.text, ...(read.stopNote ? { stopNote: read.stopNote } : {}), usage };
  }

  async function summarizeOnce(input: SummarizeInput): Promise<SummarizeOutcome> {
    if (input.messages.length === 0 && !input.priorSummary?.trim()) {
      return { ok: false, failure: summarizerError("nothing_to_summarize", "nothing to summarize: no messages and no prior summary") };
    }
    // The budget of this call: the process's setting when the caller passes one.
    const budget = input.maxSummaryTokens ?? spec.maxOutputTokens;
    const answerTokens = answerTokenLimit(budget) + (spec.extraAnswerTokens ?? 0);
    const prompt = buildSummaryPrompt(input, {
      maxSummaryTokens: budget,
      maxInputTokens: promptTokenCeiling(spec.contextWindow, answerTokens),
      citations: input.messages.length > 0,
    });
    const read = await ask(prompt, answerTokens);
    if (!read.ok) return read;
    const { usage } = read;
    const answer = parseSummaryAnswer(read.text, budget, input.messages.length);
    if (!answer.ok) return { ok: false, failure: summarizerError("answer_unusable", `${answer.error}${read.stopNote ?? ""}`), ...usage };
    // Numbers were checked against the transcript's range; map them back to message ids.
    const cited = answer.citations?.some((line) => line.length > 0) ? answer.citations : undefined;
    const citations = cited?.map((line) => line.map((n) => input.messages[n - 1]!.id));
    return { ok: true, summary: answer.summary, ...(citations ? { citations } : {}), ...(answer.truncated ? { truncated: true } : {}), ...usage };
  }

  async function completeOnce(request: CompletionRequest): Promise<CompletionOutcome> {
    const answerTokens = request.maxOutputTokens + (spec.extraAnswerTokens ?? 0);
    const read = await ask({ system: request.system, user: request.user, clippedMessages: 0 }, answerTokens);
    if (!read.ok) return read;
    const { usage } = read;
    if (!read.text?.trim()) return { ok: false, failure: summarizerError("answer_unusable", `empty answer${read.stopNote ?? ""}`), ...usage };
    return { ok: true, text: read.text, ...usage };
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
        return { ok: false, failure: summarizerError("summarizer_error", `${spec.provider} summarizer failed: ${(err as Error)?.message ?? String(err)}`) };
      }
    },
    async complete(request) {
      try {
        return await completeOnce(request);
      } catch (err) {
        return { ok: false, failure: summarizerError("summarizer_error", `${spec.provider} call failed: ${(err as Error)?.message ?? String(err)}`) };
      }
    },
  };
}
