/**
 * The Agents SDK session keeps every item a run produced: `run()` with the SDK's own
 * OpenAIResponsesModel (from its OpenAIProvider), against a local server speaking the Responses
 * wire format, over several runs whose answers carry reasoning items with encrypted content.
 */
import { Agent, OpenAIProvider, run, setTracingDisabled, tool, type AgentInputItem, type Session } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemorySession } from "../../client/openai-agents.js";
import { startLlmWireServer } from "../../tools/llm-wire-server.js";
import { serviceBeside } from "../support/service-beside.js";

setTracingDisabled(true);
const stack = serviceBeside(() => startLlmWireServer());

const RUNS = 3;

/** The reasoning item of the n-th response, as the Responses API returns it. */
const reasoningItem = (n: number) => ({
  type: "reasoning",
  id: `rs_${n}`,
  encrypted_content: `gAAAAB${n}-` + "YmFy".repeat(150) + "—ünï🧠",
  summary: [{ type: "summary_text", text: `Response ${n}: look the order up first.` }],
});

/** Per run: a response that calls the tool, then one that answers; each opens with reasoning. */
function responseBody(n: number) {
  const output: unknown[] = [reasoningItem(n)];
  if (n % 2 === 0) output.push({ type: "function_call", id: `fc_${n}`, call_id: `call_${n}`, name: "lookup_order", arguments: JSON.stringify({ id: String(n) }), status: "completed" });
  else output.push({ type: "message", id: `msg_${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: `Order ${n - 1} shipped.`, annotations: [] }] });
  return { id: `resp_${n}`, object: "response", created_at: 1_700_000_000, model: "gpt-5", status: "completed", output, usage: { input_tokens: 100, output_tokens: 20, total_tokens: 120 } };
}

/** The session, recording what the runner hands `addItems` and what `getItems` gives back. */
function recorded(session: Session) {
  const added: AgentInputItem[] = [];
  const got: AgentInputItem[][] = [];
  const wrapped: Session = {
    ...session,
    async addItems(items) {
      added.push(...structuredClone(items));
      await session.addItems(items);
    },
    async getItems(limit) {
      const items = await session.getItems(limit);
      got.push(structuredClone(items));
      return items;
    },
  };
  return { session: wrapped, added, got };
}

describe("createMemorySession with native content", () => {
  it("sends every earlier reasoning item back exactly on every later request, and getItems returns the run's items as given", async () => {
    await stack.memory.upsertProcess("agents-native", { projectId: "agents" });
    let n = 0;
    stack.provider.setFallback(() => ({ body: responseBody(n++) }));
    const model = await new OpenAIProvider({ baseURL: `${stack.provider.url}/v1`, apiKey: "test-key", useResponses: true }).getModel("gpt-5");
    const agent = new Agent({
      name: "Desk",
      instructions: "You answer order questions.",
      model,
      modelSettings: { store: false, providerData: { include: ["reasoning.encrypted_content"] } },
      tools: [tool({ name: "lookup_order", description: "Find an order", parameters: z.object({ id: z.string() }), execute: async ({ id }) => `order ${id}: shipped` })],
    });
    const { session, added, got } = recorded(createMemorySession({ client: stack.memory, processId: "agents-native", model: { name: "gpt-5", contextWindow: 400_000 } }));

    for (let r = 0; r < RUNS; r++) {
      const result = await run(agent, `Where is order ${2 * r}?`, { session });
      expect(result.finalOutput).toBe(`Order ${2 * r} shipped.`);
    }

    const requests = stack.provider.requests.filter((q) => q.path === "/v1/responses");
    expect(requests).toHaveLength(2 * RUNS);
    requests.forEach((request, k) => {
      const sent = (request.body.input as Array<{ type?: string }>).filter((i) => i.type === "reasoning");
      // Every earlier reasoning item, exactly as the API returned it: none dropped, none changed.
      expect(sent, `request ${k}`).toEqual(Array.from({ length: k }, (_, j) => reasoningItem(j)));
    });

    // Each run starts from exactly the items the earlier runs handed over.
    expect(got).toHaveLength(RUNS);
    expect(got[0]).toEqual([]);
    const byRun = (r: number) => added.slice(0, (added.length / RUNS) * r);
    for (let r = 1; r < RUNS; r++) expect(got[r]).toEqual(byRun(r));

    // Stored as given: per run the user's item, a response's items, the result, the answer's items.
    const stored = (await stack.memory.listMessages("agents-native", { view: "active", limit: 1000 })).items;
    expect(stored.map((m) => m.role)).toEqual(Array.from({ length: RUNS }, () => ["USER", "ASSISTANT", "TOOL", "ASSISTANT"]).flat());
    expect(stored.flatMap((m) => m.native!.content)).toEqual(added);
    expect(stored.every((m) => m.native!.format === "openai-responses")).toBe(true);
    expect(stored[1]!.toolCalls).toEqual([{ id: "call_0", name: "lookup_order", arguments: '{"id":"0"}' }]);
    expect(stored[2]).toMatchObject({ toolCallId: "call_0", content: "order 0: shipped" });
    expect(stored[3]!.content).toBe("Order 0 shipped.");
  });
});
