/**
 * The provider emulator's Anthropic rules through the real `@anthropic-ai/sdk`: a thinking tool
 * loop sent back whole is accepted, and each way of breaking it is the 400 the API gives.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startProviderEmulator, type ProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { THINKING_BINDING_BETA } from "../../tools/provider-emulator/anthropic-rules.js";

let emulator: ProviderEmulator;
let client: Anthropic;
beforeAll(async () => {
  emulator = await startProviderEmulator();
  client = new Anthropic({ apiKey: "sk-ant-test", baseURL: emulator.url, maxRetries: 0 });
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(() => emulator.reset());

const tools: Anthropic.Tool[] = [
  { name: "read_log", description: "Reads a CI runner's log", input_schema: { type: "object", properties: { runner: { type: "string" } } } },
];
const base = {
  model: "claude-fable-5-1",
  max_tokens: 4096,
  thinking: { type: "enabled" as const, budget_tokens: 2048 },
  system: "You keep CI green.",
  tools,
};
const question: Anthropic.MessageParam = { role: "user", content: "Why does ci-7 fail?" };

/** First leg of a tool loop: the model thinks, then calls read_log. */
async function firstLeg() {
  emulator.anthropic.script(
    { thinking: "Read the log before guessing.", toolUses: [{ id: "toolu_1", name: "read_log", input: { runner: "ci-7" } }] },
    { thinking: "Node 18 is the cause.", text: "ci-7 runs Node 18, which is no longer supported." },
  );
  const first = await client.messages.create({ ...base, messages: [question] });
  const result: Anthropic.MessageParam = {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ERROR: node 18 is not supported" }],
  };
  return { first, result };
}

async function rejection(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Anthropic.APIError);
  return error as InstanceType<typeof Anthropic.APIError>;
}

describe("provider emulator: Anthropic thinking through the SDK", () => {
  it("accepts the tool loop sent back exactly as returned and records the verified block", async () => {
    const { first, result } = await firstLeg();
    expect(first.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);

    const second = await client.messages.create({
      ...base,
      messages: [question, { role: "assistant", content: first.content }, result],
    });

    expect(second.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    expect(emulator.records.map((r) => r.status)).toEqual([200, 200]);
    const thinking = first.content[0] as Anthropic.ThinkingBlock;
    expect(emulator.records[1]!.thinking!.verified).toEqual([
      { path: "messages.1.content.0", type: "thinking", token: thinking.signature },
    ]);
    expect(emulator.anthropic.missingThinking()).toEqual([]);
  });

  it("answers 400 when the tool loop's assistant turn comes back without its thinking block", async () => {
    const { first, result } = await firstLeg();
    const stripped = first.content.filter((b) => b.type !== "thinking");

    const error = await rejection(
      client.messages.create({ ...base, messages: [question, { role: "assistant", content: stripped }, result] }),
    );

    expect(error.status).toBe(400);
    expect(error.type).toBe("invalid_request_error");
    expect(error.apiMessage).toMatch(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`/);
    expect(emulator.records[1]!.rule).toBe("tool_loop_thinking_missing");
    expect(emulator.anthropic.missingThinking()).toEqual([
      `request 1 messages.1: turn ${first.id} came back without 1 of its 1 thinking block(s)`,
    ]);
  });

  it("answers 400 when the thinking text was edited", async () => {
    const { first, result } = await firstLeg();
    const edited = first.content.map((b) => (b.type === "thinking" ? { ...b, thinking: `${b.thinking} (trimmed)` } : b));

    const error = await rejection(
      client.messages.create({ ...base, messages: [question, { role: "assistant", content: edited }, result] }),
    );

    expect(error.status).toBe(400);
    expect(error.apiMessage).toBe("messages.1.content.0: Invalid `signature` in `thinking` block.");
  });

  it("answers 400 when the system prompt changed since the block was issued", async () => {
    const { first, result } = await firstLeg();

    const error = await rejection(
      client.messages.create({
        ...base,
        system: "You keep CI green. Today is 2026-12-01.",
        messages: [question, { role: "assistant", content: first.content }, result],
      }),
    );

    expect(error.status).toBe(400);
    expect(error.apiMessage).toContain("The block is bound to a different conversation.");
    expect(emulator.records[1]!.rule).toBe("thinking_prefix_mismatch");
  });

  it("with drop_block, drops the block, proceeds, and lists it in input_transformations", async () => {
    const { first, result } = await firstLeg();

    const second = await client.beta.messages.create({
      ...base,
      betas: [THINKING_BINDING_BETA],
      thinking: { ...base.thinking, block_binding: { prefix_mismatch_behavior: "drop_block" } },
      system: "You keep CI green. Today is 2026-12-01.",
      messages: [question, { role: "assistant", content: first.content as Anthropic.Beta.BetaContentBlockParam[] }, result],
    });

    expect(second.input_transformations).toEqual([
      { type: "thinking_dropped", path: "messages.1.content.0", reason: "prefix_binding_mismatch" },
    ]);
    expect(emulator.records[1]!.thinking!.dropped.map((d) => d.path)).toEqual(["messages.1.content.0"]);
    // The block reached the emulator; it was dropped, not lost on the way.
    expect(emulator.anthropic.missingThinking()).toEqual([]);
  });

  it("answers 400 to manual thinking with a tool_choice that forces tool use", async () => {
    const error = await rejection(client.messages.create({ ...base, tool_choice: { type: "any" }, messages: [question] }));

    expect(error.status).toBe(400);
    expect(error.apiMessage).toBe("Thinking may not be enabled when tool_choice forces tool use.");
  });

  it("lets a verbatim reply from the wire server go first, so a retried overload still reaches the rules", async () => {
    emulator.wire.reply({ status: 529, headers: { "retry-after-ms": "1" }, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
    const retrying = new Anthropic({ apiKey: "sk-ant-test", baseURL: emulator.url, maxRetries: 1 });

    const answer = await retrying.messages.create({ ...base, messages: [question] });

    expect(emulator.requests).toHaveLength(2);
    expect(emulator.records.map((r) => r.status)).toEqual([200]);
    expect(answer.content[0]!.type).toBe("thinking");
  });

  it("streams the thinking block with its signature, and the streamed turn verifies when sent back", async () => {
    emulator.anthropic.script({ thinking: "Stream me.", toolUses: [{ id: "toolu_s", name: "read_log", input: { runner: "ci-7" } }] });
    const streamed = await client.messages.stream({ ...base, messages: [question] }).finalMessage();
    expect(streamed.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect((streamed.content[0] as Anthropic.ThinkingBlock).thinking).toBe("Stream me.");
    expect(streamed.content[1]).toMatchObject({ id: "toolu_s", input: { runner: "ci-7" } });

    await client.messages.create({
      ...base,
      messages: [
        question,
        { role: "assistant", content: streamed.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_s", content: "ok" }] },
      ],
    });
    expect(emulator.records[1]!.thinking!.verified.map((v) => v.path)).toEqual(["messages.1.content.0"]);
  });
});
