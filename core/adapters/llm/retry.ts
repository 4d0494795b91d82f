/**
 * Bounded retries for summarizer calls: a per-attempt timeout, a cap on attempts and an overall
 * deadline, so a slow or failing provider ends as a failure well inside API Gateway's 29 s.
 *
 * The SDKs' own retry loops are switched off (`maxRetries: 0`) because they sleep for whatever a
 * `retry-after` header asks, without regard to any deadline (openai 6.x ignores the abort signal
 * while sleeping). This loop keeps each attempt's time on its clock and aborts the attempt's
 * signal when it is up; the SDK client's own timer is only a backstop at the whole deadline
 * (docs/summarizers.md, "Time bounds").
 */
import { summarizerError, type SummarizerError, type SummarizerFailure } from "../../ports/summarizer.js";
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

/**
 * The time the retry loop reads and waits on: the system clock in production, a fake one in the
 * tests, which then decide when each attempt times out and each wait ends.
 */
export interface RetryClock {
  /** Milliseconds on a monotonic-enough scale (Date.now in production). */
  now(): number;
  /** Resolves after `ms`; resolves at once, and stops timing, when `cancel` aborts. */
  sleep(ms: number, cancel?: AbortSignal): Promise<void>;
}

export const systemRetryClock: RetryClock = {
  now: Date.now,
  sleep: (ms, cancel) =>
    new Promise<void>((resolve) => {
      if (cancel?.aborted) return resolve();
      const timer = setTimeout(resolve, ms);
      cancel?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    }),
};

export interface AttemptContext {
  /** Aborted when the attempt times out or the deadline passes. */
  signal: AbortSignal;
  /** Time this attempt may take, in ms (already clipped to the deadline). */
  timeoutMs: number;
  /** 1 for the first attempt. */
  attempt: number;
}

/** A failed attempt, classified: a {@link SummarizerError} and the wait the provider asked for. */
export interface AttemptFailure extends SummarizerError {
  /** Wait the provider asked for (`retry-after-ms` / `retry-after`), in ms. */
  retryAfterMs?: number;
}

export type RetryResult<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; failure: SummarizerError; attempts: number };

export interface RetryDeps {
  /** Default: {@link systemRetryClock}. */
  clock?: RetryClock;
  /** The jitter of the backoff; default Math.random. */
  random?: () => number;
}

/**
 * Runs `attempt` until it succeeds, fails for a non-retryable reason, runs out of attempts or
 * would pass the deadline. Never throws; the last failure is returned as `{ ok: false }`.
 * A hanging attempt is abandoned at its timeout even if the client ignores the abort signal.
 */
export async function callWithRetries<T>(
  policy: RetryPolicy,
  attempt: (ctx: AttemptContext) => Promise<T>,
  classify: (err: unknown) => AttemptFailure,
  deps: RetryDeps = {},
): Promise<RetryResult<T>> {
  const clock = deps.clock ?? systemRetryClock;
  const deadline = clock.now() + policy.deadlineMs;
  let last: SummarizerError = summarizerError("provider_timeout", "no attempt was made");

  for (let n = 1; n <= policy.maxAttempts; n++) {
    const remaining = deadline - clock.now();
    if (remaining < MIN_ATTEMPT_MS) {
      const failure = summarizerError("provider_timeout", `deadline of ${policy.deadlineMs} ms reached; ${last.message}`);
      return { ok: false, failure, attempts: n - 1 };
    }
    const timeoutMs = Math.min(policy.attemptTimeoutMs, remaining);
    const controller = new AbortController();
    const settled = new AbortController();
    // Rejects when the attempt's time is up; never settles once the attempt has.
    const timedOut = clock.sleep(timeoutMs, settled.signal).then(() => {
      if (settled.signal.aborted) return new Promise<never>(() => {});
      controller.abort();
      throw new AttemptTimeout(timeoutMs);
    });
    let failed: AttemptFailure;
    try {
      const value = await Promise.race([attempt({ signal: controller.signal, timeoutMs, attempt: n }), timedOut]);
      return { ok: true, value, attempts: n };
    } catch (err) {
      failed = err instanceof AttemptTimeout ? summarizerError("provider_timeout", err.message) : classify(err);
    } finally {
      settled.abort();
    }
    last = { kind: failed.kind, retryable: failed.retryable, message: failed.message };
    if (!failed.retryable || n === policy.maxAttempts) {
      return { ok: false, failure: { ...last, message: attemptsNote(n, last.message) }, attempts: n };
    }
    const wait = failed.retryAfterMs ?? backoffDelay(n, { baseMs: policy.backoffMs, capMs: policy.deadlineMs }, deps.random);
    if (clock.now() + wait + MIN_ATTEMPT_MS > deadline) {
      const message = `${attemptsNote(n, last.message)}; no retry: waiting ${wait} ms would pass the deadline of ${policy.deadlineMs} ms`;
      return { ok: false, failure: { ...last, message }, attempts: n };
    }
    await clock.sleep(wait);
  }
  return { ok: false, failure: last, attempts: policy.maxAttempts };
}

class AttemptTimeout extends Error {
  override readonly name = "AttemptTimeout";
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

function attemptsNote(n: number, message: string): string {
  return n === 1 ? message : `${message} (after ${n} attempts)`;
}

/** HTTP statuses worth another attempt: request timeout, conflict, rate limit, server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Classifies an error thrown by the openai or @anthropic-ai/sdk client by its shape, which both
 * SDKs share: an HTTP answer carries a numeric `status` (and `headers`); a request that got no
 * answer is an API error whose `status` is undefined. Anything else is an adapter failure.
 * The attempt's own timeout never reaches here (callWithRetries reports it).
 */
export function classifySdkError(provider: string, err: unknown): AttemptFailure {
  const e = (typeof err === "object" && err !== null ? err : {}) as { status?: unknown; headers?: unknown; message?: unknown };
  const message = clip(typeof e.message === "string" ? e.message : String(err));

  if (typeof e.status === "number") {
    const retryAfterMs = readRetryAfter(e.headers);
    return {
      ...summarizerError(statusKind(e.status), `${provider} answered HTTP ${e.status}: ${message}`, isRetryableStatus(e.status)),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  if (err instanceof Error && "status" in err) {
    // The SDKs' connection errors: the request got no HTTP answer.
    return summarizerError("provider_unreachable", `${provider} connection failed: ${message}`);
  }
  return summarizerError("summarizer_error", `${provider} call failed: ${message}`);
}

/** The kind tenants see for an HTTP status (docs/summarizers.md, "Failures"). */
function statusKind(status: number): SummarizerFailure {
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
