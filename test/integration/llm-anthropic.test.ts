/**
 * The Anthropic summarizer through the real `@anthropic-ai/sdk` against a local server speaking
 * the Messages API wire format.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createAnthropicSummarizer,
  type AnthropicSummarizerOptions,
} from "../../core/adapters/llm/anthropic-summarizer.js";
import { createSummarizerFromEnv } from "../../core/adapters/llm/create-summarizer.js";
import { answerTokenLimit } from "../../core/domain/summary-prompt.js";
import type { SummarizeInput, SummarySourceMessage } from "../../core/ports/summarizer.js";
import {
  anthropicErrorBody,
  anthropicMessageBody,
  startLlmWireServer,
  type LlmWireServer,
} from "../../tools/llm-wire-server.js";
import { createFakeClock } from "../support/fake-clock.js";
import { hangingProvider } from "../support/hanging-provider.js";

const at = (minute: number) => `2024-09-03T08:${String(minute).padStart(2, "0")}:00.000Z`;
const history: SummarySourceMessage[] = [
  { id: "m1", role: "USER", content: "Our CI on runner ci-7 fails since commit a1b2c3d.", createdAt: at(1) },
  {
    id: "m2",
    role: "ASSISTANT",
    content: "Let me read the log.",
    createdAt: at(2),
    toolCalls: [{ id: "toolu_1", name: "read_log", arguments: '{"runner":"ci-7"}' }],
  },
  { id: "m3", role: "TOOL", content: "ERROR: node 18 is not supported", toolCallId: "toolu_1", createdAt: at(3) },
  { id: "m4", role: "ASSISTANT", content: "We decided to move ci-7 to Node 20.", createdAt: at(4) },
];
const triggering: SummarySourceMessage = {
  id: "m5",
  role: "USER",
  content: "TRIGGER-TURN: did it work?",
  createdAt: at(5),
};
const input: SummarizeInput = {
  priorSummary: "PRIOR-SUMMARY: you are helping the user keep CI green.",
  messages: history,
  instructions: "Keep runner names.",
  topicLabel: "CI failure on ci-7",
};
const goodAnswer =
  "<analysis>SCRATCH: ci-7, a1b2c3d, node 18 unsupported, decided Node 20.</analysis>" +
  "<summary>The user reported CI failing on runner ci-7 since a1b2c3d; the log showed Node 18 unsupported, and you decided to move ci-7 to Node 20.</summary>";

let server: LlmWireServer;
beforeAll(async () => {
  server = await startLlmWireServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

const summarizerAt = (options: AnthropicSummarizerOptions = {}) =>
  createAnthropicSummarizer({
    apiKey: "sk-ant-test",
    baseURL: server.url,
    retry: { backoffMs: 20 },
    ...options,
  });

describe("Anthropic summarizer over the wire", () => {
  it("sends the model, max_tokens, the system prompt and one user turn with only the given messages", async () => {
    server.reply({ body: anthropicMessageBody(goodAnswer) });
    const outcome = await summarizerAt().summarize(input);

    expect(outcome.ok).toBe(true);
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/v1/messages");
    // @anthropic-ai/sdk 1.x sends the API key as a bearer token.
    expect(req.headers.authorization).toBe("Bearer sk-ant-test");
    expect(req.headers["anthropic-version"]).toBeTruthy();
    expect(req.body.model).toBe("claude-3-5-haiku-latest");
    expect(req.body.max_tokens).toBe(answerTokenLimit(400));
    expect(req.body.system).toMatch(/^You are the assistant of a long-running conversation/);
    expect(req.body.system).toContain("<guidance>\nKeep runner names.\n</guidance>");
    expect(req.body.messages).toHaveLength(1);
    expect(req.body.messages[0].role).toBe("user");
    const user: string = req.body.messages[0].content;
    expect(user).toContain("PRIOR-SUMMARY: you are helping the user keep CI green.");
    expect(user).toContain("This stretch of the conversation is about: CI failure on ci-7.");
    for (const m of history) expect(user).toContain(m.content);
    expect(user).toContain('(you called tool read_log [toolu_1] with {"runner":"ci-7"})');
    expect(req.rawBody).not.toContain("TRIGGER-TURN");
    expect(triggering.content).toContain("TRIGGER-TURN");
  });

  it("returns only the summary block, with the provider's token usage", async () => {
    server.reply({ body: anthropicMessageBody(goodAnswer, { inputTokens: 2048, outputTokens: 180 }) });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome).toEqual({
      ok: true,
      summary:
        "The user reported CI failing on runner ci-7 since a1b2c3d; the log showed Node 18 unsupported, and you decided to move ci-7 to Node 20.",
      usage: { inputTokens: 2048, outputTokens: 180 },
    });
  });

  it("fails when the summary tag is missing", async () => {
    server.reply({ body: anthropicMessageBody("<analysis>I will now summarize.</analysis> CI is fine.") });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(false);
    expect(outcome).not.toHaveProperty("summary");
    if (!outcome.ok) expect(outcome.failure.message).toMatch(/no <summary> block/);
  });

  it("fails when the summary block is empty", async () => {
    server.reply({ body: anthropicMessageBody("<analysis>x</analysis><summary>\n</summary>") });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure.message).toMatch(/empty/);
  });

  it("fails when the analysis used up the output limit", async () => {
    server.reply({
      body: anthropicMessageBody("<analysis>ci-7, a1b2c3d, Node 18, Node 20, and more", { stopReason: "max_tokens" }),
    });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure.message).toMatch(/inside the <analysis> block.*stop_reason=max_tokens/);
  });

  it("retries a 503 and succeeds", async () => {
    server.reply({ status: 503, body: anthropicErrorBody("unavailable") }, { body: anthropicMessageBody(goodAnswer) });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it("retries Anthropic's 529 overloaded_error", async () => {
    server.reply(
      { status: 529, body: anthropicErrorBody("Overloaded", "overloaded_error") },
      { body: anthropicMessageBody(goodAnswer) },
    );
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it("does not retry a 401", async () => {
    server.setFallback({ status: 401, body: anthropicErrorBody("invalid x-api-key", "authentication_error") });
    const outcome = await summarizerAt().summarize(input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome).toMatchObject({ failure: { kind: "provider_rejected", message: expect.stringMatching(/HTTP 401/) } });
    expect(server.requests).toHaveLength(1);
  });

  it("ends a hanging provider as a failure within the bound", async () => {
    const arrivals = hangingProvider(server, anthropicMessageBody(goodAnswer));
    const clock = createFakeClock();
    const pending = summarizerAt({ retry: { attemptTimeoutMs: 250, deadlineMs: 2_000, backoffMs: 50 }, clock, random: () => 1 }).summarize(input);
    await arrivals.next();
    await clock.fire(250);
    await clock.fire(50);
    await arrivals.next();
    await clock.fire(250);
    const outcome = await pending;
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome).toMatchObject({ failure: { kind: "provider_timeout", message: expect.stringMatching(/no answer within 250 ms \(after 2 attempts\)/) } });
    expect(server.requests).toHaveLength(2);
    expect(clock.now()).toBe(550);
  });

  it("exposes provider, model and context window", () => {
    const s = summarizerAt({ model: "claude-sonnet-4-5" });
    expect([s.provider, s.model, s.contextWindow, s.maxOutputTokens]).toEqual([
      "anthropic",
      "claude-sonnet-4-5",
      200_000,
      400,
    ]);
  });
});

describe("createSummarizerFromEnv with Anthropic settings", () => {
  it("picks Anthropic when SUMMARIZER is unset, no OpenAI key exists and ANTHROPIC_API_KEY is set", async () => {
    server.reply({ body: anthropicMessageBody(goodAnswer) });
    const s = createSummarizerFromEnv({ ANTHROPIC_API_KEY: "sk-ant-env", ANTHROPIC_BASE_URL: server.url });
    expect([s.provider, s.model]).toEqual(["anthropic", "claude-3-5-haiku-latest"]);
    const outcome = await s.summarize(input);
    expect(outcome.ok).toBe(true);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-ant-env");
  });

  it("lets SUMMARIZER=anthropic win over an OpenAI key, with SUMMARIZER_MODEL on the wire", async () => {
    server.reply({ body: anthropicMessageBody(goodAnswer) });
    const s = createSummarizerFromEnv({
      SUMMARIZER: "anthropic",
      SUMMARIZER_MODEL: "claude-haiku-4-5",
      OPENAI_API_KEY: "sk-openai-unused",
      ANTHROPIC_API_KEY: "sk-ant-env",
      ANTHROPIC_BASE_URL: server.url,
    });
    await s.summarize(input);
    expect(s.provider).toBe("anthropic");
    expect(server.requests[0]!.body.model).toBe("claude-haiku-4-5");
  });
});
