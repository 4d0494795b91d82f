/**
 * The AI SDK middleware with the real `ai` package: `generateText`/`streamText` over
 * `wrapLanguageModel` and the SDK's own mock model, against the local runner. Each test asserts
 * the prompt the model received and what the service stored.
 */
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { memoryMiddleware } from "../../client/ai-sdk.js";
import { createMemoryClient, type MemoryClient } from "../../client/index.js";
import { countingClient } from "../support/counting-client.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let memory: MemoryClient;

beforeAll(async () => {
  ctx = await startTestService();
  memory = createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
});
afterAll(async () => ctx?.service.stop());

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const answer = (text: string) => ({ content: [{ type: "text" as const, text }], finishReason: { unified: "stop" as const, raw: "stop" }, usage, warnings: [] });
const CACHE = { anthropic: { cacheControl: { type: "ephemeral" } } };
const active = async (processId: string) => (await memory.listMessages(processId, { view: "active", limit: 1000 })).items;

describe("memoryMiddleware", () => {
  it("replaces the caller's history with the replay: summary before the breakpoint, then the active messages", async () => {
    await memory.upsertProcess("ai-1", { projectId: "ai" });
    await memory.appendMessage("ai-1", { role: "USER", content: "We are migrating the billing service to Postgres." });
    const from = new Date().toISOString();
    await memory.appendMessage("ai-1", { role: "ASSISTANT", content: "Step one: dump the invoices table." });
    await memory.appendMessage("ai-1", { role: "USER", content: "The dump took an hour." });
    const to = new Date().toISOString();
    // The user moves on first: a range never folds the newest USER message (the triggering turn).
    await memory.appendMessage("ai-1", { role: "USER", content: "What comes next?" });
    await memory.compactRange("ai-1", { from, to, topicLabel: "migration start" });
    await memory.appendMessage("ai-1", { role: "ASSISTANT", content: "Next: replicate and cut over." });
    const { block } = await memory.getContext("ai-1");

    const model = new MockLanguageModelV3({ modelId: "mock-model", doGenerate: answer("Cut over on Sunday night.") });
    const { text } = await generateText({
      model: wrapLanguageModel({ model, middleware: memoryMiddleware({ client: memory, processId: "ai-1", contextWindow: 8000 }) }),
      system: "You are Frankie.",
      // A stale history from the caller: the service's replay replaces it.
      messages: [
        { role: "user", content: "stale message the service never saw" },
        { role: "assistant", content: "stale answer" },
        { role: "user", content: "When do we cut over?" },
      ],
    });

    expect(text).toBe("Cut over on Sunday night.");
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(model.doGenerateCalls[0]!.prompt).toEqual([
      { role: "system", content: `You are Frankie.\n\n${block}`, providerOptions: CACHE },
      { role: "user", content: [{ type: "text", text: "We are migrating the billing service to Postgres." }] },
      { role: "system", content: '[compaction] Topic "migration start" was completed; 2 messages were folded into the conversation summary.' },
      { role: "user", content: [{ type: "text", text: "What comes next?" }] },
      { role: "assistant", content: [{ type: "text", text: "Next: replicate and cut over." }] },
      { role: "user", content: [{ type: "text", text: "When do we cut over?" }] },
    ]);
    expect(block).toContain("## Earlier Conversation (compacted)");
    expect((await active("ai-1")).map((m) => [m.role, m.content]).slice(-2)).toEqual([
      ["USER", "When do we cut over?"],
      ["ASSISTANT", "Cut over on Sunday night."],
    ]);
  });

  it("stores a tool loop once: the user message, the call, the result, the answer, in two requests per model call", async () => {
    await memory.upsertProcess("ai-2", { projectId: "ai" });
    const counted = countingClient(ctx.service.url, KEY_A);
    const model = new MockLanguageModelV3({
      modelId: "mock-model",
      doGenerate: [
        {
          content: [{ type: "tool-call", toolCallId: "call-7", toolName: "weather", input: JSON.stringify({ city: "Lisbon" }) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        },
        answer("Sunny, 24 degrees."),
      ],
    });
    const { text } = await generateText({
      model: wrapLanguageModel({ model, middleware: memoryMiddleware({ client: counted.client, processId: "ai-2", contextWindow: 8000, cacheControl: false }) }),
      prompt: "Weather in Lisbon?",
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, sky: "sunny", celsius: 24 }) }) },
      stopWhen: stepCountIs(3),
    });

    expect(text).toBe("Sunny, 24 degrees.");
    // Per model call: the turn (user message, then the tool result) and the answer.
    expect(counted.requests).toEqual([
      "POST /v1/processes/ai-2/turns",
      "POST /v1/processes/ai-2/messages",
      "POST /v1/processes/ai-2/turns",
      "POST /v1/processes/ai-2/messages",
    ]);
    expect(model.doGenerateCalls[1]!.prompt).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Lisbon?" }] },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "call-7", toolName: "weather", input: { city: "Lisbon" } }] },
      {
        role: "tool",
        // The tool message as the SDK built it, not a text rendering of it.
        content: [{ type: "tool-result", toolCallId: "call-7", toolName: "weather", output: { type: "json", value: { city: "Lisbon", sky: "sunny", celsius: 24 } } }],
      },
    ]);
    expect((await active("ai-2")).map((m) => ({ role: m.role, content: m.content, toolCallId: m.toolCallId, toolCalls: m.toolCalls }))).toEqual([
      { role: "USER", content: "Weather in Lisbon?", toolCallId: undefined, toolCalls: undefined },
      { role: "ASSISTANT", content: "", toolCallId: undefined, toolCalls: [{ id: "call-7", name: "weather", arguments: '{"city":"Lisbon"}' }] },
      { role: "TOOL", content: '{"city":"Lisbon","sky":"sunny","celsius":24}', toolCallId: "call-7", toolCalls: undefined },
      { role: "ASSISTANT", content: "Sunny, 24 degrees.", toolCallId: undefined, toolCalls: undefined },
    ]);
  });

  it("streams: the answer is stored once the stream has been read", async () => {
    await memory.upsertProcess("ai-3", { projectId: "ai" });
    const model = new MockLanguageModelV3({
      modelId: "mock-model",
      doStream: {
        stream: convertArrayToReadableStream([
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "Hello " },
          { type: "text-delta", id: "t", delta: "there." },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
        ]),
      },
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: memoryMiddleware({ client: memory, processId: "ai-3", contextWindow: 8000 }) }),
      system: "Be brief.",
      prompt: "Say hello.",
    });
    expect(await result.text).toBe("Hello there.");
    expect(model.doStreamCalls[0]!.prompt).toEqual([
      { role: "system", content: "Be brief.", providerOptions: CACHE },
      { role: "user", content: [{ type: "text", text: "Say hello." }] },
    ]);
    expect((await active("ai-3")).map((m) => m.content)).toEqual(["Say hello.", "Hello there."]);
  });

  it("streams: reasoning with its provider metadata and a tool call are stored as the SDK records them, and sent back exactly", async () => {
    await memory.upsertProcess("ai-6", { projectId: "ai" });
    const signature = { anthropic: { signature: "EqQBCkYIARgCIkD" + "x".repeat(100) } };
    const redacted = { anthropic: { redactedData: "cmVkYWN0ZWQ=" } };
    const model = new MockLanguageModelV3({
      modelId: "mock-model",
      doStream: [
        {
          stream: convertArrayToReadableStream([
            { type: "reasoning-start", id: "r1" },
            { type: "reasoning-delta", id: "r1", delta: "Check the " },
            { type: "reasoning-delta", id: "r1", delta: "weather." },
            { type: "reasoning-end", id: "r1", providerMetadata: signature },
            { type: "reasoning-start", id: "r2", providerMetadata: redacted },
            { type: "reasoning-end", id: "r2" },
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "Looking." },
            { type: "text-end", id: "t" },
            { type: "tool-call", toolCallId: "call-9", toolName: "weather", input: '{"city":"Porto"}' },
            { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_use" }, usage },
          ]),
        },
        {
          stream: convertArrayToReadableStream([
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "Sunny." },
            { type: "text-end", id: "t" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
          ]),
        },
      ],
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: memoryMiddleware({ client: memory, processId: "ai-6", contextWindow: 8000 }) }),
      prompt: "Weather in Porto?",
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => "sunny" }) },
      stopWhen: stepCountIs(3),
    });
    expect(await result.text).toBe("Sunny.");
    const answer = [
      { type: "reasoning", text: "Check the weather.", providerOptions: signature },
      { type: "reasoning", text: "", providerOptions: redacted },
      { type: "text", text: "Looking." },
      { type: "tool-call", toolCallId: "call-9", toolName: "weather", input: { city: "Porto" } },
    ];
    expect(model.doStreamCalls[1]!.prompt[1]).toEqual({ role: "assistant", content: answer });
    const stored = await active("ai-6");
    expect(stored[1]!.native).toEqual({ format: "ai-sdk", content: answer });
    expect(stored[1]!.native).toEqual({ format: "ai-sdk", content: (await result.response).messages[0]!.content });
    expect(stored.map((m) => [m.role, m.content])).toEqual([
      ["USER", "Weather in Porto?"],
      ["ASSISTANT", "Looking."],
      ["TOOL", "sunny"],
      ["ASSISTANT", "Sunny."],
    ]);
  });

  it("sends a trailing assistant prefill as is, and stores it with the answer that continues it", async () => {
    await memory.upsertProcess("ai-5", { projectId: "ai" });
    const model = new MockLanguageModelV3({ modelId: "mock-model", doGenerate: answer(' "answer": 42 }') });
    await generateText({
      model: wrapLanguageModel({ model, middleware: memoryMiddleware({ client: memory, processId: "ai-5", contextWindow: 8000 }) }),
      messages: [
        { role: "user", content: "Reply in JSON." },
        { role: "assistant", content: "{" },
      ],
    });
    expect(model.doGenerateCalls[0]!.prompt.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "{" }] });
    // Nothing new from the user: the turn appends nothing; the stored answer is the whole assistant message.
    expect((await active("ai-5")).map((m) => [m.role, m.content])).toEqual([["ASSISTANT", '{ "answer": 42 }']]);
  });

  it("compacts on the turn that crosses a threshold, and the model gets the summary instead", async () => {
    await memory.upsertProcess("ai-4", { projectId: "ai" });
    const model = new MockLanguageModelV3({ modelId: "mock-model", doGenerate: answer("Noted; the regression test is in.") });
    const wrapped = wrapLanguageModel({ model, middleware: memoryMiddleware({ client: memory, processId: "ai-4", contextWindow: 1500 }) });
    let turns = 0;
    while (!model.doGenerateCalls.at(-1)?.prompt.some((m) => m.role === "system" && m.content.includes("Earlier Conversation"))) {
      if (++turns > 40) throw new Error("no compaction within 40 turns");
      await generateText({ model: wrapped, prompt: `Turn ${turns}: settle edge case ${turns} of the tokenizer and add a regression test for it by Friday.` });
      // Wait for the in-process worker to prepare a queued fold, however busy the machine is.
      await ctx.service.bus.drain();
    }
    const prompt = model.doGenerateCalls.at(-1)!.prompt;
    const stored = (await memory.listMessages("ai-4", { limit: 1000 })).items;
    expect(stored).toHaveLength(2 * turns);
    // The model saw only the active messages, and the summary that stands for the rest.
    expect(prompt.filter((m) => m.role !== "system").length).toBeLessThan(stored.length);
    expect(prompt.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: expect.stringMatching(new RegExp(`^Turn ${turns}:`)) }] });
  });

  it("with recall: \"message\", asks for recall with the user's message and sends the recall as a user message, not in the system role", async () => {
    // A summarizer that keeps nothing of the note, so recall has something to bring back.
    const own = await startTestService({ overrides: { summarizer: async () => createFakeSummarizer() } });
    try {
      const client = createMemoryClient({ baseUrl: own.service.url, apiKey: KEY_A });
      await client.upsertProcess("ai-recall", { projectId: "ai" });
      await client.appendMessage("ai-recall", { role: "USER", content: "Set up the release." });
      const from = new Date().toISOString();
      await client.appendMessage("ai-recall", { role: "ASSISTANT", content: "The deploy key lives in vault path ops/deploy; rotate it monthly." });
      await client.appendMessage("ai-recall", { role: "USER", content: "Thanks, noted." });
      const to = new Date().toISOString();
      await client.appendMessage("ai-recall", { role: "USER", content: "Now the changelog." });
      await client.compactRange("ai-recall", { from, to, topicLabel: "release setup" });
      await client.appendMessage("ai-recall", { role: "ASSISTANT", content: "Changelog drafted." });

      const counted = countingClient(own.service.url, KEY_A);
      const model = new MockLanguageModelV3({ modelId: "mock-model", doGenerate: answer("ops/deploy, rotated monthly.") });
      const middleware = memoryMiddleware({ client: counted.client, processId: "ai-recall", contextWindow: 8000, recall: "message" });
      await generateText({ model: wrapLanguageModel({ model, middleware }), system: "You are Frankie.", prompt: "Where does the deploy key live?" });

      expect(counted.bodies[0]).toMatchObject({ query: "Where does the deploy key live?" });
      const prompt = model.doGenerateCalls[0]!.prompt;
      // The service appends the recall after the message it answers (docs/turns.md, "Recall").
      const recall = prompt.at(-1)!;
      expect(recall).toMatchObject({ role: "user", content: [{ type: "text", text: expect.stringMatching(/^## Recalled From History\n/) }] });
      expect(JSON.stringify(recall)).toContain("vault path ops/deploy");
      expect(prompt.at(-2)).toEqual({ role: "user", content: [{ type: "text", text: "Where does the deploy key live?" }] });
      const system = prompt.filter((m) => m.role === "system").map((m) => m.content).join("\n");
      expect(system).toContain("## Earlier Conversation (compacted)");
      expect(system).not.toContain("Recalled From History");
    } finally {
      await own.service.stop();
    }
  });
});
