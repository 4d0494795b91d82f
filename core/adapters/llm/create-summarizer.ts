/**
 * Chooses and builds the summarizer from environment variables. The composition root calls it
 * once per container, so the provider, its model, context window and output budget are fixed
 * at boot rather than worked out on every turn. Variables are listed in docs/summarizers.md.
 */
import * as z from "../../domain/zod.js";
import { AppError } from "../../domain/errors.js";
import { fixedSummaryBudgetFromEnv } from "../../domain/summarizer-fit.js";
import { TUNABLES_ENV, type Tunables } from "../../domain/tunables.js";
import type { Summarizer } from "../../ports/summarizer.js";
import { PROVIDER_NAMES, PROVIDERS, REMOTE_PROVIDERS, type ProviderName, type RemoteProviderDescriptor } from "./provider-descriptors.js";
import { SUMMARIZER_FACTORIES } from "./providers.js";
import { DEFAULT_RETRY_POLICY, type RetryClock, type RetryPolicy } from "./retry.js";

/**
 * Sent when an OpenAI- or Anthropic-compatible server needs no key: the SDKs refuse to start
 * without one, and such servers ignore it.
 */
export const PLACEHOLDER_API_KEY = "no-key-required";

export type SummarizerProvider = ProviderName;

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

// Each remote provider's key and base URL variables come from its descriptor.
const SummarizerEnv = z.object({
  SUMMARIZER: prepared(
    (v) => (typeof v === "string" ? v.trim().toLowerCase() || undefined : v),
    z.optional(z.enum(PROVIDER_NAMES)),
  ),
  SUMMARIZER_MODEL: optionalText,
  ...Object.fromEntries(
    REMOTE_PROVIDERS.flatMap(([, r]) => [
      [r.keyEnv, optionalText],
      [r.baseUrlEnv, optionalUrl],
    ]),
  ),
  SUMMARIZER_TIMEOUT_MS: intWithin(100, 900_000),
  SUMMARIZER_DEADLINE_MS: intWithin(100, 900_000),
  SUMMARIZER_CONTEXT_WINDOW: intWithin(1_024, 10_000_000),
});

/**
 * Reads the summarizer configuration from `env` (pure). Throws an `AppError` (`config.summarizer`)
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
  const text = (name: string) => (e as Record<string, string | undefined>)[name];
  const maxOutputTokens = summaryBudgetFromEnv(env);
  // A key or a base URL selects its provider, so pointing OPENAI_BASE_URL at a local
  // OpenAI-compatible server is enough; without either, the offline default.
  const provider: SummarizerProvider =
    e.SUMMARIZER ?? REMOTE_PROVIDERS.find(([, r]) => text(r.keyEnv) || text(r.baseUrlEnv))?.[0] ?? "offline";

  const common = {
    maxOutputTokens,
    retry: {
      ...DEFAULT_RETRY_POLICY,
      ...(e.SUMMARIZER_TIMEOUT_MS !== undefined ? { attemptTimeoutMs: e.SUMMARIZER_TIMEOUT_MS } : {}),
      ...(e.SUMMARIZER_DEADLINE_MS !== undefined ? { deadlineMs: e.SUMMARIZER_DEADLINE_MS } : {}),
    },
    ...(e.SUMMARIZER_CONTEXT_WINDOW !== undefined ? { contextWindow: e.SUMMARIZER_CONTEXT_WINDOW } : {}),
  };
  const descriptor: { defaultModel: string; remote?: RemoteProviderDescriptor; wire?: "openai" | "anthropic" } = PROVIDERS[provider];
  // A provider fold speaks its wire provider's API with that provider's key and base URL.
  const remote = descriptor.remote ?? (descriptor.wire ? PROVIDERS[descriptor.wire].remote : undefined);
  // A provider without a server runs its one model.
  if (!remote) return { provider, model: descriptor.defaultModel, ...common };
  const baseURL = text(remote.baseUrlEnv);
  return {
    provider,
    model: e.SUMMARIZER_MODEL ?? descriptor.defaultModel,
    apiKey: keyOrPlaceholder(provider, remote, text(remote.keyEnv), baseURL),
    ...(baseURL ? { baseURL } : {}),
    ...common,
  };
}

/**
 * The summarizer's default output budget: the fixed budget of `SUMMARY_MIN_TOKENS` and
 * `SUMMARY_MAX_TOKENS`, read and range-checked by the tunables (their one reader); every fold
 * passes its own budget per call (docs/configuration.md, "Tunables").
 */
function summaryBudgetFromEnv(env: Record<string, string | undefined>): number {
  try {
    return fixedSummaryBudgetFromEnv(env);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    const fields = ((e.details?.fields as string[] | undefined) ?? ["summaryMaxTokens"]).map((f) => TUNABLES_ENV[f as keyof Tunables] ?? f);
    throw new AppError("internal", "config.summarizer", `invalid summarizer configuration: ${e.message}`, { fields });
  }
}

/** A self-hosted server may run without auth; the vendors' own APIs never do. */
function keyOrPlaceholder(provider: ProviderName, remote: RemoteProviderDescriptor, key?: string, baseURL?: string): string {
  if (key) return key;
  if (baseURL) return PLACEHOLDER_API_KEY;
  throw new AppError(
    "internal",
    "config.summarizer",
    `SUMMARIZER=${provider} needs ${remote.keyEnv}, or ${remote.baseUrlEnv} for a server without auth`,
    { fields: [remote.keyEnv, remote.baseUrlEnv] },
  );
}

export interface CreateSummarizerDeps {
  /** Custom fetch for the SDK clients (tests, proxies). */
  fetch?: typeof fetch;
  /** The clock of the retry loop (tests); default the system clock. */
  clock?: RetryClock;
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
  return SUMMARIZER_FACTORIES[config.provider]({
    maxOutputTokens: config.maxOutputTokens,
    ...(config.contextWindow !== undefined ? { contextWindow: config.contextWindow } : {}),
    model: config.model,
    retry: config.retry,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.clock ? { clock: deps.clock } : {}),
  });
}
