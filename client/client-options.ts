/**
 * The client's options and its one error type, with the pieces its retries are made of: the
 * environment's defaults, `Retry-After`, and a wait the caller's signal can end.
 */

export interface MemoryClientOptions {
  /**
   * Where the service runs, e.g. `http://127.0.0.1:3000` or the API Gateway URL. Defaults to the
   * environment's `MEMORY_URL`.
   */
  baseUrl?: string;
  /** Defaults to the environment's `MEMORY_API_KEY`. */
  apiKey?: string;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Milliseconds one attempt may take before it is abandoned (and retried); default 60000. */
  timeout?: number;
  /**
   * How many times a call is sent again after a retryable failure (no answer, a timeout, 408, 429,
   * 5xx, a busy process), waiting 0.5 s, 1 s, 2 s… (or the answer's `Retry-After`); default 2, 0
   * turns retries off. A retried append sends the same idempotency key: the caller's, or one the
   * client adds, so an append that did reach the service is not stored twice.
   */
  maxRetries?: number;
}

/** Per-call options: the last argument of every method. */
export interface RequestOptions {
  /** Aborts the call (and its retries): it rejects with MemoryApiError `request.aborted`. */
  signal?: AbortSignal;
  /** Overrides the client's `timeout` for this call. */
  timeout?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
}

/** 409 codes that say "not now" rather than "never": worth the same call again. */
const TRANSIENT_CONFLICTS = new Set(["process.busy", "message.busy", "compaction.retry_later"]);

/**
 * An error answer of the service (`{ error: { code, message, details? } }`), or `status` 0 when no
 * answer arrived: `network.error`, `request.timeout`, or `request.aborted` (the caller's signal).
 */
export class MemoryApiError extends Error {
  override readonly name = "MemoryApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }

  /** The wait the answer asked for (`Retry-After`, or a 429's `details.retryAfterSeconds`). */
  readonly retryAfterMs: number | undefined;

  /**
   * Worth retrying (with the same idempotency key): no answer or a timeout, 408, 429, 5xx, or a
   * 409 that says the process or message is busy. Not an abort, not a 409 such as
   * `idempotency.key_reused` or `process.exists`.
   */
  get retryable(): boolean {
    if (this.status === 0) return this.code !== "request.aborted";
    if (this.status === 409) return TRANSIENT_CONFLICTS.has(this.code);
    return this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

/** The environment's variable, where there is one (Node, Deno, Bun; not a browser). */
export const fromEnv = (name: string): string | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name]?.trim() || undefined;

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;
/** A `Retry-After` longer than this is not waited for: the error goes to the caller. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** `Retry-After` in seconds or as an HTTP date, else a 429's `details.retryAfterSeconds`. */
export function retryAfterMs(headers: Headers, details: unknown): number | undefined {
  const header = headers.get("retry-after");
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const at = Date.parse(header);
    if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  }
  const seconds = (details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return typeof seconds === "number" && Number.isFinite(seconds) ? Math.max(0, seconds * 1000) : undefined;
}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export const aborted = (method: string, path: string, cause: unknown) =>
  new MemoryApiError(0, "request.aborted", `${method} ${path}: aborted by the caller's signal`, undefined, { cause });
