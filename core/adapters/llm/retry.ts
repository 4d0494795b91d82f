/**
 * Bounded retries for summarizer calls: a per-attempt timeout, a cap on attempts and an overall
 * deadline, so a slow or failing provider ends as a failure well inside API Gateway's 29 s.
 *
 * The SDKs' own retry loops are switched off (`maxRetries: 0`) because they sleep for whatever a
 * `retry-after` header asks, without regard to any deadline (openai 6.x ignores the abort signal
 * while sleeping). Each attempt still uses the SDK's `timeout` and our abort signal.
 */
import type { SummarizerFailure } from "../../ports/summarizer.js";
import { backoffDelay } from "../backoff.js";

export interface RetryPolicy {
  /** Longest single attempt, in ms (env SUMMARIZER_TIMEOUT_MS). */
  attemptTimeoutMs: number;
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Longest time for all attempts and waits together, in ms (env SUMMARIZER_DEADLINE_MS). */
  deadlineMs: number;
  /**
   * Ceiling of the first wait before a retry when the provider gives no `retry-after`, in ms; it
   * doubles per retry, with jitter (core/adapters/backoff.ts).
   */
  backoffMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attemptTimeoutMs: 12_000,
  maxAttempts: 2,
  deadlineMs: 24_000,
  backoffMs: 400,
};

/** An attempt shorter than this is not worth starting: it could only time out. */
const MIN_ATTEMPT_MS = 100;

export interface AttemptContext {
  /** Aborted when the attempt times out or the deadline passes. */
  signal: AbortSignal;
  /** Time this attempt may take, in ms (already clipped to the deadline). */
  timeoutMs: number;
  /** 1 for the first attempt. */
  attempt: number;
}

export interface ClassifiedError {
  retryable: boolean;
  /** For the log: may quote the provider. */
  message: string;
  /** For tenants: what kind of failure, never the provider's words. */
  code: SummarizerFailure;
  /** Wait the provider asked for (`retry-after-ms` / `retry-after`), in ms. */
  retryAfterMs?: number;
}

export type RetryResult<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; error: string; code: SummarizerFailure; attempts: number };

class AttemptTimeout extends Error {
  override readonly name = "AttemptTimeout";
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

export interface RetryDeps {
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/**
 * Runs `attempt` until it succeeds, fails for a non-retryable reason, runs out of attempts or
 * would pass the deadline. Never throws; the last error is returned as `{ ok: false }`.
 * A hanging attempt is abandoned at its timeout even if the client ignores the abort signal.
 */
export async function callWithRetries<T>(
  policy: RetryPolicy,
  attempt: (ctx: AttemptContext) => Promise<T>,
  classify: (err: unknown) => ClassifiedError,
  deps: RetryDeps = {},
): Promise<RetryResult<T>> {
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + policy.deadlineMs;
  let lastError = "no attempt was made";
  let lastCode: SummarizerFailure = "provider_timeout";

  for (let n = 1; n <= policy.maxAttempts; n++) {
    const remaining = deadline - now();
    if (remaining < MIN_ATTEMPT_MS) {
      return { ok: false, error: `deadline of ${policy.deadlineMs} ms reached; ${lastError}`, code: "provider_timeout", attempts: n - 1 };
    }
    const timeoutMs = Math.min(policy.attemptTimeoutMs, remaining);
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new AttemptTimeout(timeoutMs));
      }, timeoutMs);
    });
    try {
      let value: T;
      try {
        value = await Promise.race([
          attempt({ signal: controller.signal, timeoutMs, attempt: n }),
          timedOut,
        ]);
      } finally {
        clearTimeout(timer);
      }
      return { ok: true, value, attempts: n };
    } catch (err) {
      const classified: ClassifiedError =
        err instanceof AttemptTimeout ? { retryable: true, message: err.message, code: "provider_timeout" } : classify(err);
      lastError = classified.message;
      lastCode = classified.code;
      if (!classified.retryable || n === policy.maxAttempts) {
        return { ok: false, error: attemptsNote(n, lastError), code: lastCode, attempts: n };
      }
      const wait = classified.retryAfterMs ?? backoffDelay(n, { baseMs: policy.backoffMs, capMs: policy.deadlineMs }, deps.random);
      if (now() + wait + MIN_ATTEMPT_MS > deadline) {
        return {
          ok: false,
          error: `${attemptsNote(n, lastError)}; no retry: waiting ${wait} ms would pass the deadline of ${policy.deadlineMs} ms`,
          code: lastCode,
          attempts: n,
        };
      }
      await sleep(wait);
    }
  }
  return { ok: false, error: lastError, code: lastCode, attempts: policy.maxAttempts };
}

function attemptsNote(n: number, message: string): string {
  return n === 1 ? message : `${message} (after ${n} attempts)`;
}

/** HTTP statuses worth another attempt: request timeout, conflict, rate limit, server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Classifies an error thrown by the openai or @anthropic-ai/sdk client. Both SDKs share the same
 * error shapes (`status`, `headers`, class names), so one duck-typed reader serves both.
 */
export function classifySdkError(provider: string, err: unknown): ClassifiedError {
  const e = err as { status?: unknown; headers?: unknown; name?: unknown; message?: unknown };
  const name = typeof e?.name === "string" ? e.name : "";
  const message = clip(typeof e?.message === "string" ? e.message : String(err));

  if (typeof e?.status === "number") {
    const retryAfterMs = readRetryAfter(e.headers);
    return {
      retryable: isRetryableStatus(e.status),
      message: `${provider} answered HTTP ${e.status}: ${message}`,
      code: statusCode(e.status),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  if (name === "APIConnectionTimeoutError") {
    return { retryable: true, message: `${provider} request timed out`, code: "provider_timeout" };
  }
  if (name === "APIUserAbortError") {
    return { retryable: true, message: `${provider} request aborted at its time limit`, code: "provider_timeout" };
  }
  if (name === "APIConnectionError") {
    return { retryable: true, message: `${provider} connection failed: ${message}`, code: "provider_unreachable" };
  }
  return { retryable: false, message: `${provider} call failed: ${message}`, code: "summarizer_error" };
}

/** The code tenants see for an HTTP status (docs/summarizers.md, "Failures"). */
function statusCode(status: number): SummarizerFailure {
  if (status === 429) return "provider_rate_limited";
  return isRetryableStatus(status) ? "provider_unavailable" : "provider_rejected";
}

function readRetryAfter(headers: unknown): number | undefined {
  const get = (key: string): string | null => {
    if (headers && typeof (headers as Headers).get === "function") return (headers as Headers).get(key);
    return null;
  };
  const ms = Number.parseFloat(get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = get("retry-after");
  if (!raw) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

function clip(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
