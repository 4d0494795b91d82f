/** The Summarizer port: folds a prior summary and a run of messages into one new summary. */
import type { Role, ToolCall } from "../domain/model.js";
import type { NativeContent, NativeFormat } from "../domain/native/formats.js";

export interface SummarySourceMessage {
  id: string;
  role: Role;
  content: string;
  createdAt: string;
  toolCallId?: string;
  toolCalls?: ToolCall[];
  /** Strong or pinned: the summary must keep what it says (the quality gate checks its units). */
  important?: boolean;
  /** The message's native content, given to a provider fold (`Summarizer.foldFormat`) only. */
  native?: NativeContent;
}

/**
 * What a provider fold sends besides the messages (docs/summarizers.md, "Provider folds"): the
 * block of the memory it chains from, and the engine's own `system` and `tools`, which the
 * provider binds kept reasoning to.
 */
export interface ProviderFoldContext {
  /** The previous memory's provider block, sent first in place of the turns it summarized. */
  priorNative?: NativeContent;
  /** The conversation's `system` and `tools` as the engine sends them (recorded on the process). */
  system?: unknown;
  tools?: unknown[];
}

export interface SummarizeInput {
  /** The process's active summary before this fold, if any (the chain). */
  priorSummary: string | null;
  /** Messages to fold, oldest first. Never includes the triggering turn. */
  messages: SummarySourceMessage[];
  /** Extra guidance from a manual compaction (`instructions` of the API). */
  instructions?: string;
  /** Optional topic for range compactions. */
  topicLabel?: string;
  /**
   * Names, numbers, dates and identifiers the summary must carry word for word (those of strong
   * and pinned sources; on a retry, the ones the first attempt dropped).
   */
  mustKeep?: string[];
  /**
   * Output budget of this summary, in tokens: the process's `summaryMaxTokens` (tenant or
   * project settings). Without it, the summarizer's own `maxOutputTokens`.
   */
  maxSummaryTokens?: number;
  /** A provider fold's context (`Summarizer.foldFormat` set); other summarizers ignore it. */
  providerFold?: ProviderFoldContext;
}

/**
 * Why a summarizer call failed, as tenants see it: a stable code stored in a FAILED memory's
 * `metadata.error` and given in `reason` (docs/summarizers.md, "Failures"). The provider's own
 * words, which may quote a key fragment or an internal host, stay in the failure's `message` and
 * go to the log.
 */
export const SUMMARIZER_FAILURES = [
  /** No answer within an attempt's time or the deadline. */
  "provider_timeout",
  /** The connection to the provider failed. */
  "provider_unreachable",
  /** HTTP 429. */
  "provider_rate_limited",
  /** HTTP 5xx (529 included), 408 or 409, after the retries. */
  "provider_unavailable",
  /** Another HTTP 4xx: the provider refused the request or its credentials. */
  "provider_rejected",
  /** The model refused to answer. */
  "model_refused",
  /** An answer the adapter cannot use: no or an unclosed summary block, empty, an unexpected shape. */
  "answer_unusable",
  /** Neither messages nor a prior summary were given. */
  "nothing_to_summarize",
  /** Anything else: an adapter error, or a failure that names no code. */
  "summarizer_error",
] as const;
export type SummarizerFailure = (typeof SUMMARIZER_FAILURES)[number];

/** The kinds a later call may cure: the provider was slow, busy or out of reach. */
const RETRYABLE_FAILURES: ReadonlySet<SummarizerFailure> = new Set([
  "provider_timeout",
  "provider_unreachable",
  "provider_rate_limited",
  "provider_unavailable",
]);

/**
 * A failed summarizer call, typed: `kind` is what tenants see (`metadata.error`, `reason`),
 * `retryable` whether the same call may succeed later (the remote adapters have already retried
 * within their deadline), `message` the provider's words for the log only.
 */
export interface SummarizerError {
  kind: SummarizerFailure;
  retryable: boolean;
  message: string;
}

/**
 * A {@link SummarizerError} of `kind`, retryable as that kind is unless told otherwise.
 *
 * @example summarizerError("provider_rate_limited", "openai answered HTTP 429: slow down").retryable // true
 */
export function summarizerError(kind: SummarizerFailure, message: string, retryable = RETRYABLE_FAILURES.has(kind)): SummarizerError {
  return { kind, retryable, message };
}

export interface SummarizerUsage {
  inputTokens?: number;
  outputTokens?: number;
}

export type SummarizeOutcome =
  | {
      ok: true;
      summary: string;
      usage?: SummarizerUsage;
      /**
       * Per line of `summary` (split on "\n"), the ids of the input messages it came from. The
       * service checks them against the fold and stores them beside the summary, never in it.
       */
      citations?: string[][];
      /** The model wrote more than the budget and `summary` was cut to it (its tail is lost). */
      truncated?: boolean;
      /** A provider fold's block, exactly as the provider returned it: the memory's native content. */
      native?: NativeContent;
      /** A provider fold that committed the readable summary alone: why it has no block. */
      nativeNote?: string;
    }
  | { ok: false; failure: SummarizerError; usage?: SummarizerUsage };

/** One plain request to the summarizer's model (the strength analyzer's batched rating call). */
export interface CompletionRequest {
  system: string;
  user: string;
  /** Output budget of the answer, in tokens. */
  maxOutputTokens: number;
}

export type CompletionOutcome =
  | { ok: true; text: string; usage?: SummarizerUsage }
  | { ok: false; failure: SummarizerError; usage?: SummarizerUsage };

export interface Summarizer {
  /** `openai`, `anthropic` or `offline`: stored as `metadata.provider`. */
  readonly provider: string;
  /**
   * A provider fold (`anthropic-compaction`, `openai-compaction`): the format of the block it
   * returns beside the readable summary. The fold then gives it the messages' native content.
   */
  readonly foldFormat?: NativeFormat;
  readonly model: string;
  /** Context window of the summarizer's own model, in tokens. */
  readonly contextWindow: number;
  /** Output budget of a summary when the input names none, in tokens (enforced). */
  readonly maxOutputTokens: number;
  /**
   * Never throws for provider trouble: a timeout, a 5xx after retries, or an answer without a
   * summary block comes back as `{ ok: false, failure }`, a {@link SummarizerError}.
   */
  summarize(input: SummarizeInput): Promise<SummarizeOutcome>;
  /**
   * Remote summarizers only: one request to the same model over the same wire, retries and
   * deadline. Never throws; a refusal or an empty answer is `{ ok: false }`.
   */
  complete?(request: CompletionRequest): Promise<CompletionOutcome>;
}
