/**
 * The Agents SDK session in an agent loop against the provider emulator's Responses API
 * (tools/provider-emulator): 6 runs of 10 tool steps each, every run starting from the items the
 * session reads back from the service. The emulator verifies every reasoning item's encrypted content and reports any it drops
 * after a prefix change, so 0 dropped shows the session hands the model back what it returned.
 */
import { Agent, OpenAIProvider, run, setTracingDisabled, tool } from "@openai/agents";
import { expect, it } from "vitest";
import { z } from "zod";
import { createMemorySession } from "../../client/openai-agents.js";
import { startProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { serviceBeside } from "../support/service-beside.js";

const RUNS = 6;
const STEPS = 10;
setTracingDisabled(true);
const stack = serviceBeside(() => startProviderEmulator({ preservedReasoning: true }));

it(`${RUNS} Agents SDK runs of ${STEPS} tool steps on the Responses API: 0 errors, 0 reasoning items dropped`, { timeout: 120_000 }, async () => {
  const memory = stack.memory;
  await memory.upsertProcess("agents-emulator", { projectId: "agents" });
  const model = await new OpenAIProvider({ baseURL: `${stack.provider.url}/v1`, apiKey: "sk-test", useResponses: true }).getModel("gpt-6");
  const agent = new Agent({
    name: "Desk",
    instructions: "You check orders.",
    model,
    modelSettings: { store: false, reasoning: { effort: "medium" }, providerData: { include: ["reasoning.encrypted_content"] } },
    tools: [tool({ name: "lookup_order", description: "Find an order", parameters: z.object({ id: z.string() }), execute: async ({ id }) => `order ${id}: shipped` })],
  });
  const session = createMemorySession({ client: memory, processId: "agents-emulator", model: { name: "gpt-6", contextWindow: 1_000_000 } });
  for (let r = 0; r < RUNS; r++) {
    stack.provider.openai.script(
      ...Array.from({ length: STEPS }, (_, i) => ({
        reasoning: `Run ${r}, step ${i}: check the next order.`,
        functionCalls: [{ callId: `call_${r}_${i}`, name: "lookup_order", arguments: { id: `${r}-${i}` } }],
      })),
      { reasoning: "All checked.", text: `Batch ${r}: ${STEPS} orders shipped.` },
    );
    const result = await run(agent, `Check batch ${r}.`, { session, maxTurns: STEPS + 2 });
    expect(result.finalOutput).toBe(`Batch ${r}: ${STEPS} orders shipped.`);
  }
  const calls = RUNS * (STEPS + 1);
  expect(stack.provider.records.filter((r) => r.status !== 200)).toEqual([]);
  expect(stack.provider.records).toHaveLength(calls);
  expect(stack.provider.openai.reasoningCounts().dropped).toBe(0);
  // The last request carried every reasoning item issued before it, the earlier runs' read back from the service.
  expect(stack.provider.records.at(-1)!.reasoning!.kept).toHaveLength(calls - 1);
});
