/**
 * The summarizer's retry policy (core/adapters/llm/retry.ts, docs/summarizers.md
 * "Time bounds") on a fake clock: how many attempts, how long each may take, how long it waits between
 * them, which failures it retries and when it gives up.
 */
import { describe, expect, it } from "vitest";
import { callWithRetries, classifySdkError, type AttemptFailure, type RetryPolicy } from "../../core/adapters/llm/retry.js";
import { summarizerError } from "../../core/ports/summarizer.js";
import { createFakeClock } from "../support/fake-clock.js";

const policy: RetryPolicy = { attemptTimeoutMs: 1_000, maxAttempts: 3, deadlineMs: 10_000, backoffMs: 400 };
const failWith = (failure: AttemptFailure) => Object.assign(new Error(failure.message), { failure });
const classify = (err: unknown): AttemptFailure => (err as { failure: AttemptFailure }).failure;
const busy = () => failWith(summarizerError("provider_unavailable", "HTTP 503"));

/** An attempt function that plays `steps` in order: a value, or an error to throw. */
function scripted<T>(...steps: Array<T | Error>) {
  const calls: Array<{ attempt: number; timeoutMs: number; signal: AbortSignal }> = [];
  const attempt = async (ctx: { attempt: number; timeoutMs: number; signal: AbortSignal }) => {
    calls.push(ctx);
    const step = steps[calls.length - 1];
    if (step instanceof Error) throw step;
    return step as T;
  };
  return { attempt, calls };
}

describe("callWithRetries", () => {
  it("returns the first success without waiting", async () => {
    const clock = createFakeClock();
    const { attempt, calls } = scripted("done");
    expect(await callWithRetries(policy, attempt, classify, { clock })).toEqual({ ok: true, value: "done", attempts: 1 });
    expect(calls.map((c) => c.timeoutMs)).toEqual([1_000]);
    expect(clock.now()).toBe(0);
    expect(clock.pending()).toEqual([]);
  });

  it("retries a retryable failure after the backoff: half to all of backoffMs, doubling per retry", async () => {
    const clock = createFakeClock();
    const { attempt, calls } = scripted<string>(busy(), busy(), "done");
    const result = callWithRetries(policy, attempt, classify, { clock, random: () => 1 });
    await clock.fire(400); // ceiling of the first retry's wait
    await clock.fire(800); // doubled for the second
    expect(await result).toEqual({ ok: true, value: "done", attempts: 3 });
    expect(calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(clock.now()).toBe(1_200);
  });

  it("waits the lower half of the ceiling at the smallest jitter", async () => {
    const clock = createFakeClock();
    const { attempt } = scripted<string>(busy(), "done");
    const result = callWithRetries(policy, attempt, classify, { clock, random: () => 0 });
    await clock.fire(200);
    expect(await result).toMatchObject({ ok: true, attempts: 2 });
  });

  it("waits what the provider's retry-after asks instead of the backoff", async () => {
    const clock = createFakeClock();
    const limited = failWith({ ...summarizerError("provider_rate_limited", "HTTP 429"), retryAfterMs: 1_500 });
    const { attempt } = scripted<string>(limited, "done");
    const result = callWithRetries(policy, attempt, classify, { clock, random: () => 1 });
    await clock.fire(1_500);
    expect(await result).toMatchObject({ ok: true, attempts: 2 });
    expect(clock.now()).toBe(1_500);
  });

  it.each([
    ["provider_rejected", "HTTP 400"],
    ["answer_unusable", "no summary block"],
    ["summarizer_error", "adapter bug"],
  ] as const)("does not retry %s", async (kind, message) => {
    const clock = createFakeClock();
    const { attempt, calls } = scripted<string>(failWith(summarizerError(kind, message)), "never reached");
    const result = await callWithRetries(policy, attempt, classify, { clock });
    expect(result).toEqual({ ok: false, failure: { kind, retryable: false, message }, attempts: 1 });
    expect(calls).toHaveLength(1);
    expect(clock.now()).toBe(0);
  });

  it("gives up after maxAttempts with the last failure, noting the attempts", async () => {
    const clock = createFakeClock();
    const { attempt, calls } = scripted<string>(busy(), busy(), busy(), "never reached");
    const result = callWithRetries(policy, attempt, classify, { clock, random: () => 1 });
    await clock.fire(400);
    await clock.fire(800);
    expect(await result).toEqual({
      ok: false,
      failure: { kind: "provider_unavailable", retryable: true, message: "HTTP 503 (after 3 attempts)" },
      attempts: 3,
    });
    expect(calls).toHaveLength(3);
  });

  it("abandons a hanging attempt at its timeout, aborting its signal, and retries it", async () => {
    const clock = createFakeClock();
    const signals: AbortSignal[] = [];
    const hang = (ctx: { signal: AbortSignal }) => {
      signals.push(ctx.signal);
      return new Promise<string>(() => {}); // a client that ignores the signal
    };
    const result = callWithRetries(policy, hang, classify, { clock, random: () => 1 });
    await clock.fire(1_000);
    expect(signals[0]!.aborted).toBe(true);
    await clock.fire(400);
    await clock.fire(1_000);
    await clock.fire(800);
    await clock.fire(1_000);
    expect(await result).toEqual({
      ok: false,
      failure: { kind: "provider_timeout", retryable: true, message: "no answer within 1000 ms (after 3 attempts)" },
      attempts: 3,
    });
    expect(clock.now()).toBe(4_200);
  });

  it("clips an attempt's time to what is left of the deadline", async () => {
    const clock = createFakeClock();
    const tight: RetryPolicy = { attemptTimeoutMs: 5_000, maxAttempts: 2, deadlineMs: 400, backoffMs: 50 };
    const result = callWithRetries(tight, () => new Promise<string>(() => {}), classify, { clock, random: () => 1 });
    await clock.fire(400);
    const outcome = await result;
    expect(outcome).toMatchObject({ ok: false, failure: { kind: "provider_timeout" }, attempts: 1 });
    expect(clock.now()).toBe(400);
  });

  it("does not retry when the wait would pass the deadline", async () => {
    const clock = createFakeClock();
    const limited = failWith({ ...summarizerError("provider_rate_limited", "HTTP 429"), retryAfterMs: 60_000 });
    const { attempt, calls } = scripted<string>(limited, "never reached");
    const result = await callWithRetries(policy, attempt, classify, { clock });
    expect(result).toMatchObject({ ok: false, failure: { kind: "provider_rate_limited", retryable: true }, attempts: 1 });
    if (!result.ok) expect(result.failure.message).toMatch(/no retry: waiting 60000 ms would pass the deadline of 10000 ms/);
    expect(calls).toHaveLength(1);
    expect(clock.requested).toEqual([1_000]); // the first attempt's timer, and no wait
  });

  it("starts no attempt once less than 100 ms of the deadline is left", async () => {
    const clock = createFakeClock();
    const short: RetryPolicy = { attemptTimeoutMs: 1_000, maxAttempts: 3, deadlineMs: 200, backoffMs: 100 };
    const { attempt, calls } = scripted<string>(busy(), "never reached");
    const result = callWithRetries(short, attempt, classify, { clock, random: () => 0 });
    // The 50 ms wait leaves 150 ms, room for an attempt; it ends 80 ms late, leaving 70 ms: too few.
    await clock.fire(50, 80);
    expect(await result).toEqual({
      ok: false,
      failure: { kind: "provider_timeout", retryable: true, message: "deadline of 200 ms reached; HTTP 503" },
      attempts: 1,
    });
    expect(calls).toHaveLength(1);
  });
});

describe("classifySdkError", () => {
  const http = (status: number, headers: Record<string, string> = {}) =>
    Object.assign(new Error(`${status} upstream said no`), { status, headers: new Headers(headers) });

  it.each([
    [429, "provider_rate_limited", true],
    [503, "provider_unavailable", true],
    [529, "provider_unavailable", true],
    [408, "provider_unavailable", true],
    [409, "provider_unavailable", true],
    [400, "provider_rejected", false],
    [401, "provider_rejected", false],
    [404, "provider_rejected", false],
  ] as const)("reads HTTP %i as %s (retryable: %s)", (status, kind, retryable) => {
    expect(classifySdkError("openai", http(status))).toMatchObject({ kind, retryable, message: expect.stringContaining(`HTTP ${status}`) });
  });

  it("reads retry-after-ms, then retry-after in seconds", () => {
    expect(classifySdkError("openai", http(429, { "retry-after-ms": "150" })).retryAfterMs).toBe(150);
    expect(classifySdkError("anthropic", http(429, { "retry-after": "2" })).retryAfterMs).toBe(2_000);
    expect(classifySdkError("openai", http(503)).retryAfterMs).toBeUndefined();
  });

  it("reads an API error without a status (no HTTP answer) as unreachable, whatever its class is called", () => {
    const noAnswer = Object.assign(new Error("Connection error."), { name: "SomethingElse", status: undefined, headers: undefined });
    expect(classifySdkError("openai", noAnswer)).toEqual({ kind: "provider_unreachable", retryable: true, message: "openai connection failed: Connection error." });
  });

  it("reads anything else as an adapter failure that is not retried", () => {
    expect(classifySdkError("anthropic", new TypeError("cannot read properties of undefined"))).toEqual({
      kind: "summarizer_error",
      retryable: false,
      message: "anthropic call failed: cannot read properties of undefined",
    });
  });
});
