/**
 * The OpenAI summarizer through the real `openai` SDK against a local server speaking the Chat
 * Completions wire format (the same path an OpenAI-compatible server such as vLLM takes).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSummarizerFromEnv, PLACEHOLDER_API_KEY } from "../../core/adapters/llm/create-summarizer.js";
import { createOpenAISummarizer, type OpenAISummarizerOptions } from "../../core/adapters/llm/openai-summarizer.js";
import { answerTokenLimit } from "../../core/domain/summary-prompt.js";
import type { SummarizeInput, SummarySourceMessage } from "../../core/ports/summarizer.js";
import {
  chatCompletionBody,
  openAIErrorBody,
  startLlmWireServer,
  type LlmWireServer,
} from "../../tools/llm-wire-server.js";
import { createFakeClock } from "../support/fake-clock.js";
import { hangingProvider } from "../support/hanging-provider.js";

const at = (minute: number) => `2024-05-01T10:${String(minute).padStart(2, "0")}:00.000Z`;
const history: SummarySourceMessage[] = [
  { id: "m1", role: "USER", content: "I'm Dana. Plan the Kestrel launch for 2024-06-12, budget $4,200.", createdAt: at(1) },
  { id: "m2", role: "ASSISTANT", content: "Noted: Kestrel launch on 2024-06-12 with $4,200.", createdAt: at(2) },
  { id: "m3", role: "USER", content: "Book the venue in Lisbon first.", createdAt: at(3) },
];
// The triggering turn: the caller never passes it to the summarizer.
const triggering: SummarySourceMessage = {
  id: "m4",
  role: "USER",
  content: "TRIGGER-TURN: what is left to do?",
  createdAt: at(4),
};
const input: SummarizeInput = {
  priorSummary: "PRIOR-SUMMARY: the user is planning a product launch.",
  messages: history,
};
const goodAnswer =
  "<analysis>SCRATCH: Dana, Kestrel, 2024-06-12, $4,200, Lisbon venue open.</analysis>\n" +
  "<summary>The user, Dana, asked you to plan the Kestrel launch on 2024-06-12 with a $4,200 budget; booking the Lisbon venue is still open.</summary>";

let server: LlmWireServer;
beforeAll(async () => {
  server = await startLlmWireServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

const summarizerAt = (options: OpenAISummarizerOptions = {}) =>
  createOpenAISummarizer({
    apiKey: "sk-test",
    baseURL: `${server.url}/v1`,
    retry: { backoffMs: 20 },
    ...options,
  });

describe("OpenAI summarizer over the wire", () => {
  it("sends the model, the output budget, the prior summary and only the given messages", async () => {
    server.reply({ body: chatCompletionBody(goodAnswer) });
    const outcome = await summarizerAt().summarize(input);

    expect(outcome.ok).toBe(true);
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-test");
    expect(req.body.model).toBe("gpt-4o-mini");
    // A compatible server gets the widely supported field; the summary budget plus the scratch pass.
    expect(req.body.max_tokens).toBe(answerTokenLimit(400));
    expect(req.body.max_completion_tokens).toBeUndefined();
    expect(req.body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    const user: string = req.body.messages[1].content;
    expect(user).toContain("PRIOR-SUMMARY: the user is planning a product launch.");
    for (const m of history) expect(user).toContain(m.content);
    expect(req.rawBody).not.toContain("TRIGGER-TURN");
    expect(triggering.content).toContain("TRIGGER-TURN");
  });

  it("uses max_completion_tokens when told to (OpenAI's own endpoint) and honours SUMMARY_MAX_TOKENS-sized budgets", async () => {
    server.reply({ body: chatCompletionBody(goodAnswer) });
    await summarizerAt({ tokenLimitParam: "max_completion_tokens", maxOutputTokens: 250 }).summarize(input);
    const body = server.requests[0]!.body;
    expect(body.max_completion_tokens).toBe(answerTokenLimit(250));
    expect(body.max_tokens).toBeUndefined();
    expect(body.messages[0].content).toContain("within 250 tokens");
  });

  it("returns only the summary block, with the provider's token usage", async () => {
    server.reply({ body: chatCompletionBody(goodAnswer, { promptTokens: 1234, completionTokens: 321 }) });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome).toEqual({
      ok: true,
      summary:
        "The user, Dana, asked you to plan the Kestrel launch on 2024-06-12 with a $4,200 budget; booking the Lisbon venue is still open.",
      usage: { inputTokens: 1234, outputTokens: 321 },
    });
  });

  it("fails, without a summary, when the answer has no summary block", async () => {
    server.reply({ body: chatCompletionBody("Sure! Dana wants a launch in Lisbon.", { completionTokens: 9 }) });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(false);
    expect(outcome).not.toHaveProperty("summary");
    if (!outcome.ok) expect(outcome).toMatchObject({ failure: { kind: "answer_unusable", message: expect.stringMatching(/no <summary> block/) } });
    expect(outcome.usage).toEqual({ inputTokens: 1000, outputTokens: 9 });
  });

  it("fails when the output limit cut the summary block open", async () => {
    server.reply({ body: chatCompletionBody("<analysis>a</analysis><summary>The user, Dana, asked", { finishReason: "length" }) });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure.message).toMatch(/not closed.*finish_reason=length/);
  });

  it("truncates a summary that overshoots the budget at a sentence boundary", async () => {
    const long = Array.from({ length: 60 }, (_, i) => `You confirmed item ${i} with Dana.`).join(" ");
    server.reply({ body: chatCompletionBody(`<summary>${long}</summary>`) });
    const outcome = await summarizerAt({ maxOutputTokens: 100 }).summarize(input);
    expect(outcome.ok).toBe(true);
    if (outcome.ok) {
      expect(outcome.summary.length).toBeLessThanOrEqual(400);
      expect(outcome.summary).toMatch(/with Dana\.$/);
    }
  });

  it("retries a 503 and succeeds on the second attempt", async () => {
    server.reply({ status: 503, body: openAIErrorBody("overloaded") }, { body: chatCompletionBody(goodAnswer) });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it("gives up after two attempts of 5xx", async () => {
    server.setFallback({ status: 500, body: openAIErrorBody("boom") });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome).toMatchObject({ failure: { kind: "provider_unavailable", message: expect.stringMatching(/HTTP 500.*after 2 attempts/) } });
    expect(server.requests).toHaveLength(2);
  });

  it("does not retry a 4xx such as 400", async () => {
    server.setFallback({ status: 400, body: openAIErrorBody("bad request", "invalid_request_error") });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome).toMatchObject({ failure: { kind: "provider_rejected", message: expect.stringMatching(/HTTP 400/) } });
    expect(server.requests).toHaveLength(1);
  });

  it("waits what a 429's retry-after-ms asks when it fits the deadline", async () => {
    server.reply(
      { status: 429, body: openAIErrorBody("slow down", "rate_limit_error"), headers: { "retry-after-ms": "150" } },
      { body: chatCompletionBody(goodAnswer) },
    );
    const clock = createFakeClock();
    const pending = summarizerAt({ clock }).summarize(input);
    await clock.fire(150);
    expect((await pending).ok).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(clock.now()).toBe(150);
  });

  it("does not wait past the deadline for a long retry-after", async () => {
    server.setFallback({ status: 429, body: openAIErrorBody("slow down"), headers: { "retry-after": "60" } });
    const clock = createFakeClock();
    const outcome = await summarizerAt({ retry: { deadlineMs: 2_000 }, clock }).summarize(input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure).toMatchObject({ kind: "provider_rate_limited", message: expect.stringMatching(/no retry: waiting 60000 ms/) });
    // Gave up at once: the only timer ever set was the first attempt's.
    expect(clock.requested).toEqual([2_000]);
    expect(server.requests).toHaveLength(1);
  });

  it("ends a hanging provider as a failure within the attempt and deadline bounds", async () => {
    const arrivals = hangingProvider(server, chatCompletionBody(goodAnswer));
    const clock = createFakeClock();
    const pending = summarizerAt({ retry: { attemptTimeoutMs: 300, deadlineMs: 2_000, backoffMs: 50 }, clock, random: () => 1 }).summarize(input);
    await arrivals.next();
    await clock.fire(300);
    await clock.fire(50);
    await arrivals.next();
    await clock.fire(300);
    const outcome = await pending;
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure).toMatchObject({ kind: "provider_timeout", message: expect.stringMatching(/no answer within 300 ms \(after 2 attempts\)/) });
    expect(server.requests).toHaveLength(2); // one retry, then the bound
    expect(clock.now()).toBe(650);
  });

  it("stops at the overall deadline even when one attempt may take longer", async () => {
    const arrivals = hangingProvider(server, chatCompletionBody(goodAnswer));
    const clock = createFakeClock();
    const pending = summarizerAt({ retry: { attemptTimeoutMs: 5_000, deadlineMs: 400 }, clock }).summarize(input);
    await arrivals.next();
    // The attempt's timer is clipped to the 400 ms deadline, not the 5 s attempt timeout.
    await clock.fire(400);
    const outcome = await pending;
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure).toMatchObject({ kind: "provider_timeout", message: expect.stringMatching(/no answer within 400 ms; no retry/) });
    expect(server.requests).toHaveLength(1);
  });

  it("exposes provider, model and the model's context window", () => {
    const s = summarizerAt({ model: "gpt-4.1-mini", maxOutputTokens: 300 });
    expect([s.provider, s.model, s.contextWindow, s.maxOutputTokens]).toEqual(["openai", "gpt-4.1-mini", 1_047_576, 300]);
    expect(summarizerAt({ model: "llama3.1:8b" }).contextWindow).toBe(8_192);
  });
});

describe("createSummarizerFromEnv with OpenAI settings", () => {
  it("serves an OpenAI-compatible server with no key through OPENAI_BASE_URL and a placeholder key", async () => {
    server.reply({ body: chatCompletionBody(goodAnswer) });
    const s = createSummarizerFromEnv({
      SUMMARIZER: "openai",
      OPENAI_BASE_URL: `${server.url}/v1`,
      SUMMARIZER_MODEL: "qwen2.5:7b",
    });
    expect([s.provider, s.model]).toEqual(["openai", "qwen2.5:7b"]);
    const outcome = await s.summarize(input);
    expect(outcome.ok).toBe(true);
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${PLACEHOLDER_API_KEY}`);
    expect(server.requests[0]!.body.model).toBe("qwen2.5:7b");
  });

  it("picks OpenAI when SUMMARIZER is unset and OPENAI_API_KEY is set, even with an Anthropic key", async () => {
    server.reply({ body: chatCompletionBody(goodAnswer) });
    const s = createSummarizerFromEnv({
      OPENAI_API_KEY: "sk-from-env",
      OPENAI_BASE_URL: `${server.url}/v1`,
      ANTHROPIC_API_KEY: "sk-ant-unused",
      SUMMARY_MAX_TOKENS: "300",
    });
    expect([s.provider, s.model, s.maxOutputTokens]).toEqual(["openai", "gpt-4o-mini", 300]);
    await s.summarize(input);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-from-env");
    expect(server.requests[0]!.body.max_tokens).toBe(answerTokenLimit(300));
  });

  it("applies SUMMARIZER_TIMEOUT_MS and SUMMARIZER_DEADLINE_MS", async () => {
    const arrivals = hangingProvider(server, chatCompletionBody(goodAnswer));
    const clock = createFakeClock();
    const s = createSummarizerFromEnv(
      { SUMMARIZER: "openai", OPENAI_BASE_URL: `${server.url}/v1`, SUMMARIZER_TIMEOUT_MS: "200", SUMMARIZER_DEADLINE_MS: "300" },
      { clock },
    );
    const pending = s.summarize(input);
    await arrivals.next();
    await clock.fire(200);
    const outcome = await pending;
    expect(outcome.ok).toBe(false);
    // The 200 ms attempt ended it, and no wait fits in the 100 ms left of the 300 ms deadline.
    if (!outcome.ok) expect(outcome.failure.message).toMatch(/no answer within 200 ms; no retry: .* deadline of 300 ms/);
    expect(clock.now()).toBe(200);
  });

  it("refuses SUMMARIZER=openai with neither a key nor a base URL", () => {
    expect(() => createSummarizerFromEnv({ SUMMARIZER: "openai" })).toThrow(/OPENAI_API_KEY/);
  });
});
