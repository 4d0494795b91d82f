/**
 * Chooses and builds the summarizer from environment variables. The composition root calls it
 * once per container, so the provider, its model, context window and output budget are fixed
 * at boot rather than worked out on every turn. Variables are listed in docs/summarizers.md.
 */
import * as z from "../../domain/zod.js";
import { AppError } from "../../domain/errors.js";
import { TUNABLES_ENV, tunableFromEnv } from "../../domain/tunables.js";
import type { Summarizer } from "../../ports/summarizer.js";
import { createAnthropicSummarizer, DEFAULT_ANTHROPIC_SUMMARIZER_MODEL } from "./anthropic-summarizer.js";
import { createOfflineSummarizer, OFFLINE_SUMMARIZER_MODEL } from "./offline-summarizer.js";
import { createOpenAISummarizer, DEFAULT_OPENAI_SUMMARIZER_MODEL } from "./openai-summarizer.js";
import type { RemoteSummarizerOptions } from "./remote-summarizer.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";

/**
 * Sent when an OpenAI- or Anthropic-compatible server needs no key: the SDKs refuse to start
 * without one, and such servers ignore it.
 */
export const PLACEHOLDER_API_KEY = "no-key-required";

export type SummarizerProvider = "offline" | "openai" | "anthropic";

export interface SummarizerConfig {
  provider: SummarizerProvider;
  model: string;
  apiKey?: string;
  baseURL?: string;
  maxOutputTokens: number;
  /** Only when SUMMARIZER_CONTEXT_WINDOW is set; otherwise the model registry decides. */
  contextWindow?: number;
  retry: RetryPolicy;
}

/** `schema`, applied to what `prepare` makes of the raw value first. */
const prepared = <S extends z.core.$ZodType>(prepare: (v: unknown) => unknown, schema: S) =>
  z.pipe(z.transform(prepare), schema);
// Empty strings count as unset: `.env` files and CI templates often leave `KEY=` in place.
const blankAsUnset = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optionalText = prepared(blankAsUnset, z.optional(z.string().check(z.trim())));
const optionalUrl = prepared(blankAsUnset, z.optional(z.url()));
const intWithin = (min: number, max: number) =>
  prepared(blankAsUnset, z.optional(z.coerce.number().check(z.int(), z.gte(min), z.lte(max))));

const SummarizerEnv = z.object({
  SUMMARIZER: prepared(
    (v) => (typeof v === "string" ? v.trim().toLowerCase() || undefined : v),
    z.optional(z.enum(["offline", "openai", "anthropic"])),
  ),
  SUMMARIZER_MODEL: optionalText,
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: optionalUrl,
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: optionalUrl,
  SUMMARIZER_TIMEOUT_MS: intWithin(100, 900_000),
  SUMMARIZER_DEADLINE_MS: intWithin(100, 900_000),
  SUMMARIZER_CONTEXT_WINDOW: intWithin(1_024, 10_000_000),
});

/**
 * Reads the summarizer settings from `env` (pure). Throws an `AppError` (`config.summarizer`)
 * naming the offending variables when the configuration cannot work.
 *
 * @example resolveSummarizerConfig({}).provider // "offline"
 * @example resolveSummarizerConfig({ OPENAI_API_KEY: "sk-..." }).model // "gpt-4o-mini"
 */
export function resolveSummarizerConfig(
  env: Record<string, string | undefined> = process.env,
): SummarizerConfig {
  const parsed = SummarizerEnv.safeParse(env);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join("."));
    throw new AppError(
      "internal",
      "config.summarizer",
      `invalid summarizer configuration: ${parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
      { fields },
    );
  }
  const e = parsed.data;
  const maxOutputTokens = summaryBudgetFromEnv(env);
  // A key or a base URL selects its provider, so pointing OPENAI_BASE_URL at a local
  // OpenAI-compatible server is enough; without either, the offline default.
  const provider: SummarizerProvider =
    e.SUMMARIZER ??
    (e.OPENAI_API_KEY || e.OPENAI_BASE_URL
      ? "openai"
      : e.ANTHROPIC_API_KEY || e.ANTHROPIC_BASE_URL
        ? "anthropic"
        : "offline");

  const common = {
    maxOutputTokens,
    retry: {
      ...DEFAULT_RETRY_POLICY,
      ...(e.SUMMARIZER_TIMEOUT_MS !== undefined ? { attemptTimeoutMs: e.SUMMARIZER_TIMEOUT_MS } : {}),
      ...(e.SUMMARIZER_DEADLINE_MS !== undefined ? { deadlineMs: e.SUMMARIZER_DEADLINE_MS } : {}),
    },
    ...(e.SUMMARIZER_CONTEXT_WINDOW !== undefined ? { contextWindow: e.SUMMARIZER_CONTEXT_WINDOW } : {}),
  };

  switch (provider) {
    case "offline":
      return { provider, model: OFFLINE_SUMMARIZER_MODEL, ...common };
    case "openai":
      return {
        provider,
        model: e.SUMMARIZER_MODEL ?? DEFAULT_OPENAI_SUMMARIZER_MODEL,
        apiKey: keyOrPlaceholder("openai", e.OPENAI_API_KEY, e.OPENAI_BASE_URL),
        ...(e.OPENAI_BASE_URL ? { baseURL: e.OPENAI_BASE_URL } : {}),
        ...common,
      };
    case "anthropic":
      return {
        provider,
        model: e.SUMMARIZER_MODEL ?? DEFAULT_ANTHROPIC_SUMMARIZER_MODEL,
        apiKey: keyOrPlaceholder("anthropic", e.ANTHROPIC_API_KEY, e.ANTHROPIC_BASE_URL),
        ...(e.ANTHROPIC_BASE_URL ? { baseURL: e.ANTHROPIC_BASE_URL } : {}),
        ...common,
      };
  }
}

/**
 * The summarizer's default output budget: `SUMMARY_MAX_TOKENS`, read and range-checked by the
 * tunables (its one reader); tenants and projects override it per call through `summaryMaxTokens`.
 */
function summaryBudgetFromEnv(env: Record<string, string | undefined>): number {
  try {
    return tunableFromEnv(env, "summaryMaxTokens");
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    throw new AppError("internal", "config.summarizer", `invalid summarizer configuration: ${e.message}`, {
      fields: [TUNABLES_ENV.summaryMaxTokens],
    });
  }
}

/** A self-hosted server may run without auth; the vendors' own APIs never do. */
function keyOrPlaceholder(provider: "openai" | "anthropic", key?: string, baseURL?: string): string {
  if (key) return key;
  if (baseURL) return PLACEHOLDER_API_KEY;
  const prefix = provider.toUpperCase();
  throw new AppError(
    "internal",
    "config.summarizer",
    `SUMMARIZER=${provider} needs ${prefix}_API_KEY, or ${prefix}_BASE_URL for a server without auth`,
    { fields: [`${prefix}_API_KEY`, `${prefix}_BASE_URL`] },
  );
}

export interface CreateSummarizerDeps {
  /** Custom fetch for the SDK clients (tests, proxies). */
  fetch?: typeof fetch;
}

/**
 * Builds the summarizer `env` asks for. When `SUMMARIZER` is unset: OpenAI if `OPENAI_API_KEY`
 * is set, else Anthropic if `ANTHROPIC_API_KEY` is set, else the offline summarizer.
 *
 * @example
 * // Composition root, once per container:
 * const summarizer = createSummarizerFromEnv();
 */
export function createSummarizerFromEnv(
  env: Record<string, string | undefined> = process.env,
  deps: CreateSummarizerDeps = {},
): Summarizer {
  return createSummarizer(resolveSummarizerConfig(env), deps);
}

/**
 * Builds the summarizer for an already resolved configuration.
 *
 * @example
 * const summarizer = createSummarizer(resolveSummarizerConfig({ SUMMARIZER: "offline" }));
 */
export function createSummarizer(
  config: SummarizerConfig,
  deps: CreateSummarizerDeps = {},
): Summarizer {
  const shared = {
    maxOutputTokens: config.maxOutputTokens,
    ...(config.contextWindow !== undefined ? { contextWindow: config.contextWindow } : {}),
  };
  if (config.provider === "offline") return createOfflineSummarizer(shared);
  const remote: RemoteSummarizerOptions = {
    ...shared,
    model: config.model,
    retry: config.retry,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  };
  return config.provider === "openai" ? createOpenAISummarizer(remote) : createAnthropicSummarizer(remote);
}
