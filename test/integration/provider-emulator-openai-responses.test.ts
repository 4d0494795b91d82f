/**
 * The provider emulator's OpenAI Responses rules through the real `openai` SDK and the AI SDK's
 * `@ai-sdk/openai` Responses model: reasoning items sent back whole are kept, tampered
 * `encrypted_content` is a 400, and a prefix change drops the reasoning after it.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { startProviderEmulator, type ProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";

let emulator: ProviderEmulator;
let client: OpenAI;
beforeAll(async () => {
  emulator = await startProviderEmulator();
  client = new OpenAI({ apiKey: "sk-test", baseURL: `${emulator.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(() => emulator.reset());

const tools: OpenAI.Responses.Tool[] = [
  { type: "function", name: "read_log", description: "Reads a CI runner's log", parameters: { type: "object", properties: {} }, strict: false },
];
const base = {
  model: "gpt-6",
  instructions: "You keep CI green.",
  tools,
  reasoning: { effort: "medium" as const },
  include: ["reasoning.encrypted_content" as const],
  store: false,
};
const question: OpenAI.Responses.ResponseInputItem = { role: "user", content: "Why does ci-7 fail?" };
const output = { type: "function_call_output" as const, call_id: "call_1", output: "ERROR: node 18 is not supported" };

async function firstLeg() {
  emulator.openai.script(
    { reasoning: "Read the log first.", functionCalls: [{ callId: "call_1", name: "read_log", arguments: {} }] },
    { reasoning: "Node 18 is the cause.", text: "ci-7 runs Node 18." },
  );
  const first = await client.responses.create({ ...base, input: [question] });
  return first.output as OpenAI.Responses.ResponseInputItem[];
}

describe("provider emulator: OpenAI Responses reasoning through the SDK", () => {
  it("keeps reasoning items sent back after an unchanged prefix and counts them", async () => {
    const items = await firstLeg();
    expect(items.map((i) => i.type)).toEqual(["reasoning", "function_call"]);
    expect((items[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toEqual(expect.any(String));

    const second = await client.responses.create({ ...base, input: [question, ...items, output] });

    expect(second.output_text).toBe("ci-7 runs Node 18.");
    expect((second as unknown as { input_transformations: unknown[] }).input_transformations).toEqual([]);
    expect(emulator.records[1]!.reasoning).toMatchObject({ kept: [(items[0] as OpenAI.Responses.ResponseReasoningItem).id], dropped: [] });
    expect(emulator.openai.reasoningCounts()).toEqual({ kept: 1, dropped: 0 });
  });

  it("answers 400 invalid_encrypted_content when encrypted_content was altered", async () => {
    const items = await firstLeg();
    const reasoning = items[0] as OpenAI.Responses.ResponseReasoningItem;
    const blob = reasoning.encrypted_content!;
    const tampered = { ...reasoning, encrypted_content: blob.slice(0, 30) + (blob[30] === "A" ? "B" : "A") + blob.slice(31) };

    const error = await client.responses.create({ ...base, input: [question, tampered, items[1]!, output] }).then(
      () => null,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const e = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.code).toBe("invalid_encrypted_content");
    expect(e.type).toBe("invalid_request_error");
    expect(e.message).toMatch(/^400 The encrypted content .+ could not be verified\./);
  });

  it("drops reasoning that follows a prefix change and reports it in input_transformations", async () => {
    const items = await firstLeg();

    const second = await client.responses.create({
      ...base,
      input: [{ role: "user", content: "Why does ci-7 fail? (reworded)" }, ...items, output],
    });

    expect((second as unknown as { input_transformations: unknown[] }).input_transformations).toEqual([
      { type: "reasoning", id: (items[0] as OpenAI.Responses.ResponseReasoningItem).id, action: "removed", reason: "prefix_mismatch" },
    ]);
    expect(emulator.openai.reasoningCounts()).toEqual({ kept: 0, dropped: 1 });
  });

  it("keeps the reasoning of an AI SDK tool loop (generateText over the Responses model, store: false)", async () => {
    emulator.openai.script(
      { reasoning: "Read the log first.", functionCalls: [{ callId: "call_ai", name: "read_log", arguments: { runner: "ci-7" } }] },
      { reasoning: "Node 18.", text: "ci-7 runs Node 18." },
    );
    const provider = createOpenAI({ apiKey: "sk-test", baseURL: `${emulator.url}/v1` });
    const calls: string[] = [];

    const result = await generateText({
      model: provider.responses("gpt-6"),
      system: "You keep CI green.",
      prompt: "Why does ci-7 fail?",
      tools: {
        read_log: tool({
          description: "Reads a CI runner's log",
          inputSchema: z.object({ runner: z.string() }),
          execute: async ({ runner }) => {
            calls.push(runner);
            return "ERROR: node 18 is not supported";
          },
        }),
      },
      stopWhen: stepCountIs(3),
      providerOptions: { openai: { reasoningEffort: "medium", store: false, include: ["reasoning.encrypted_content"] } },
    });

    expect(result.text).toBe("ci-7 runs Node 18.");
    expect(calls).toEqual(["ci-7"]);
    expect(emulator.records.map((r) => r.status)).toEqual([200, 200]);
    expect(emulator.openai.reasoningCounts()).toEqual({ kept: 1, dropped: 0 });
  });

  it("streams the answer, with encrypted_content on the finished reasoning item (openai SDK stream)", async () => {
    emulator.openai.script({ reasoning: "Think.", text: "Streamed." });
    const stream = client.responses.stream({ ...base, reasoning: { effort: "medium", summary: "auto" }, input: [question] });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();

    expect(deltas).toEqual(["Streamed."]);
    expect(final.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
    expect((final.output[1] as OpenAI.Responses.ResponseOutputMessage).content).toMatchObject([{ type: "output_text", text: "Streamed." }]);
    const reasoning = final.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: "summary_text", text: "Think." }]);
    expect(reasoning.encrypted_content).toEqual(expect.any(String));

    await client.responses.create({ ...base, input: [question, ...(final.output as OpenAI.Responses.ResponseInputItem[])] });
    expect(emulator.openai.reasoningCounts()).toEqual({ kept: 1, dropped: 0 });
  });

  it("keeps the reasoning of an AI SDK streamText tool loop", async () => {
    emulator.openai.script(
      { reasoning: "Read the log first.", functionCalls: [{ callId: "call_st", name: "read_log", arguments: { runner: "ci-7" } }] },
      { reasoning: "Node 18.", text: "ci-7 runs Node 18." },
    );
    const provider = createOpenAI({ apiKey: "sk-test", baseURL: `${emulator.url}/v1` });

    const result = streamText({
      model: provider.responses("gpt-6"),
      system: "You keep CI green.",
      prompt: "Why does ci-7 fail?",
      tools: {
        read_log: tool({
          description: "Reads a CI runner's log",
          inputSchema: z.object({ runner: z.string() }),
          execute: async () => "ERROR: node 18 is not supported",
        }),
      },
      stopWhen: stepCountIs(3),
      providerOptions: { openai: { reasoningEffort: "medium", store: false, include: ["reasoning.encrypted_content"] } },
    });

    expect(await result.text).toBe("ci-7 runs Node 18.");
    expect(emulator.requests.map((r) => r.body.stream)).toEqual([true, true]);
    expect(emulator.openai.reasoningCounts()).toEqual({ kept: 1, dropped: 0 });
  });

  it("resolves the AI SDK's item references to stored reasoning (store left at its default)", async () => {
    emulator.openai.script(
      { reasoning: "Read the log first.", functionCalls: [{ callId: "call_ref", name: "read_log", arguments: { runner: "ci-7" } }] },
      { text: "ci-7 runs Node 18." },
    );
    const provider = createOpenAI({ apiKey: "sk-test", baseURL: `${emulator.url}/v1` });

    const result = await generateText({
      model: provider.responses("gpt-6"),
      prompt: "Why does ci-7 fail?",
      tools: {
        read_log: tool({ inputSchema: z.object({ runner: z.string() }), execute: async () => "ERROR: node 18 is not supported" }),
      },
      stopWhen: stepCountIs(3),
      providerOptions: { openai: { reasoningEffort: "medium" } },
    });

    expect(result.text).toBe("ci-7 runs Node 18.");
    const sent = emulator.requests[1]!.body.input as Array<{ type?: string }>;
    expect(sent.some((i) => i.type === "item_reference")).toBe(true);
    expect(emulator.openai.reasoningCounts()).toEqual({ kept: 1, dropped: 0 });
  });
});
