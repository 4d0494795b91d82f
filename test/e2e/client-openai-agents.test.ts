/**
 * The Agents SDK session with the real `@openai/agents` runner and a fake model, against the local
 * runner: what the model receives, what the service stores, and compaction across runs.
 */
import { Agent, run, setTracingDisabled, tool, Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryClient, type MemoryClient } from "../../client/index.js";
import { createMemorySession, toMessages } from "../../client/openai-agents.js";
import { countingClient } from "../support/counting-client.js";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let memory: MemoryClient;

beforeAll(async () => {
  setTracingDisabled(true);
  ctx = await startTestService();
  memory = createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
});
afterAll(async () => ctx?.service.stop());

/** A model that answers from a script and keeps every request it got. */
function fakeModel(script: (request: ModelRequest, n: number) => ModelResponse["output"]): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async getResponse(request) {
      requests.push(structuredClone({ ...request, signal: undefined, tracing: undefined, tools: [], handoffs: [], outputType: undefined }) as unknown as ModelRequest);
      return { usage: new Usage(), output: script(request, requests.length - 1), responseId: `resp_${requests.length}` };
    },
    // eslint-disable-next-line require-yield
    async *getStreamedResponse() {
      throw new Error("the tests run without streaming");
    },
  };
}

const say = (text: string): ModelResponse["output"] => [
  { type: "message", role: "assistant", status: "completed", id: `msg_${text.length}`, content: [{ type: "output_text", text }] },
];
const active = async (processId: string) => (await memory.listMessages(processId, { view: "active", limit: 1000 })).items;

describe("createMemorySession", () => {
  it("replays the summary and the active messages to the model, and stores the run's tool loop", async () => {
    await memory.upsertProcess("agents-1", { projectId: "agents" });
    await memory.appendMessage("agents-1", { role: "USER", content: "I run the returns desk; orders ship from Porto." });
    const from = new Date().toISOString();
    await memory.appendMessage("agents-1", { role: "ASSISTANT", content: "Noted: returns desk, shipping from Porto." });
    const to = new Date().toISOString();
    // The user moves on first: a range never folds the newest USER message (the triggering turn).
    await memory.appendMessage("agents-1", { role: "USER", content: "I have a question about an order." });
    await memory.compactRange("agents-1", { from, to, topicLabel: "introductions" });
    const { block } = await memory.getContext("agents-1");

    const model = fakeModel((_, n) =>
      n === 0
        ? [{ type: "function_call", id: "fc_1", callId: "call_42", name: "lookup_order", arguments: '{"id":"42"}', status: "completed" }]
        : say("Order 42 left Porto yesterday."),
    );
    const agent = new Agent({
      name: "Desk",
      instructions: "You answer order questions.",
      model,
      tools: [tool({ name: "lookup_order", description: "Find an order", parameters: z.object({ id: z.string() }), execute: async ({ id }) => `order ${id}: shipped yesterday` })],
    });
    const counted = countingClient(ctx.service.url, KEY_A);
    const session = createMemorySession({ client: counted.client, processId: "agents-1", model: { name: "fake", contextWindow: 8000 } });
    const result = await run(agent, "Where is order 42?", { session });

    // One turn for the history, then one append per stored message: user, call, result, answer.
    expect(counted.requests).toEqual(["POST /v1/processes/agents-1/turns", ...Array(4).fill("POST /v1/processes/agents-1/messages")]);

    expect(result.finalOutput).toBe("Order 42 left Porto yesterday.");
    expect(model.requests[0]!.systemInstructions).toBe("You answer order questions.");
    expect(model.requests[0]!.input).toEqual([
      { role: "system", content: block },
      { role: "user", content: "I run the returns desk; orders ship from Porto." },
      { role: "system", content: '[compaction] Topic "introductions" was completed; 1 messages were folded into the conversation summary.' },
      { role: "user", content: "I have a question about an order." },
      { type: "message", role: "user", content: "Where is order 42?" },
    ]);
    expect(block).toContain("## Earlier Conversation (compacted)");
    expect((model.requests[1]!.input as AgentInputItem[]).slice(-2)).toMatchObject([
      { type: "function_call", callId: "call_42", name: "lookup_order" },
      { type: "function_call_result", callId: "call_42", output: { type: "text", text: "order 42: shipped yesterday" } },
    ]);
    expect((await active("agents-1")).slice(-4).map((m) => ({ role: m.role, content: m.content, toolCallId: m.toolCallId, toolCalls: m.toolCalls }))).toEqual([
      { role: "USER", content: "Where is order 42?", toolCallId: undefined, toolCalls: undefined },
      { role: "ASSISTANT", content: "", toolCallId: undefined, toolCalls: [{ id: "call_42", name: "lookup_order", arguments: '{"id":"42"}' }] },
      { role: "TOOL", content: "order 42: shipped yesterday", toolCallId: "call_42", toolCalls: undefined },
      { role: "ASSISTANT", content: "Order 42 left Porto yesterday.", toolCallId: undefined, toolCalls: undefined },
    ]);
  });

  it("gives the next run the stored tool loop back as items, in order", async () => {
    await memory.upsertProcess("agents-2", { projectId: "agents" });
    const model = fakeModel((_, n) =>
      n === 0
        ? [{ type: "function_call", callId: "call_1", name: "lookup_order", arguments: '{"id":"7"}', status: "completed" }]
        : say(n === 1 ? "Order 7 is packed." : "You asked about order 7."),
    );
    const agent = new Agent({
      name: "Desk",
      instructions: "Answer.",
      model,
      tools: [tool({ name: "lookup_order", description: "Find an order", parameters: z.object({ id: z.string() }), execute: async () => "packed" })],
    });
    const session = createMemorySession({ client: memory, processId: "agents-2", model: { name: "fake", contextWindow: 8000 } });
    await run(agent, "Status of order 7?", { session });
    await run(agent, "What did I ask before?", { session });

    expect(model.requests[2]!.input).toMatchObject([
      { role: "user", content: "Status of order 7?" },
      { type: "function_call", callId: "call_1", name: "lookup_order", arguments: '{"id":"7"}' },
      { type: "function_call_result", callId: "call_1", name: "lookup_order", output: { type: "text", text: "packed" } },
      { role: "assistant", content: [{ type: "output_text", text: "Order 7 is packed." }] },
      { role: "user", content: "What did I ask before?" },
    ]);
    await expect(session.popItem()).rejects.toThrow(/never deletes/);
    await expect(session.clearSession()).rejects.toThrow(/never deletes/);
  });

  it("compacts across runs: once past the threshold the model gets the summary instead of the old turns", async () => {
    await memory.upsertProcess("agents-3", { projectId: "agents" });
    const model = fakeModel(() => say("Noted, a regression test goes in for that edge case."));
    const agent = new Agent({ name: "Desk", instructions: "Answer.", model });
    const session = createMemorySession({ client: memory, processId: "agents-3", model: { name: "fake", contextWindow: 1500 } });
    let runs = 0;
    const sawSummary = () => (model.requests.at(-1)?.input as AgentInputItem[] | undefined)?.some((i) => "role" in i && i.role === "system" && String(i.content).includes("Earlier Conversation"));
    while (!sawSummary()) {
      if (++runs > 40) throw new Error("no compaction within 40 runs");
      await run(agent, `Run ${runs}: settle edge case ${runs} of the tokenizer and add a regression test for it by Friday.`, { session });
    }
    const stored = (await memory.listMessages("agents-3", { limit: 1000 })).items;
    expect(stored).toHaveLength(2 * runs);
    const input = model.requests.at(-1)!.input as AgentInputItem[];
    expect(input.length).toBeLessThan(stored.length);
    expect(input.at(-1)).toEqual({ type: "message", role: "user", content: stored.at(-2)!.content });
  });

  it("maps items to messages: one response's output items as one message, each result as one, every item as given", () => {
    const user = { role: "user" as const, content: [{ type: "input_text" as const, text: "look" }, { type: "input_image" as const, image: "https://x/y.png" }] };
    const response: AgentInputItem[] = [
      { type: "reasoning", id: "rs_1", content: [{ type: "input_text", text: "thinking" }], providerData: { encrypted_content: "gAAAA-1" } },
      { role: "assistant", status: "completed", content: [{ type: "output_text", text: "Checking two things." }] },
      { type: "function_call", callId: "a", name: "f", arguments: "{}" },
      { type: "hosted_tool_call", name: "web_search_call", status: "completed", providerData: { id: "ws_1", type: "web_search_call" } },
      { type: "function_call", callId: "b", name: "g", arguments: '{"x":1}' },
    ];
    const a: AgentInputItem = { type: "function_call_result", callId: "a", name: "f", status: "completed", output: "one" };
    const b: AgentInputItem = { type: "function_call_result", callId: "b", name: "g", status: "completed", output: [{ type: "input_text", text: "two" }] };
    const answer: AgentInputItem = { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Done." }] };
    const native = (content: unknown[]) => ({ format: "openai-responses", content });
    expect(toMessages([user, ...response, a, b, answer])).toEqual([
      { native: native([user]) },
      { native: native(response) },
      { native: native([a]), idempotencyKey: "tool:a" },
      { native: native([b]), idempotencyKey: "tool:b" },
      { native: native([answer]) },
    ]);
  });
});
