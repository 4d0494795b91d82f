/**
 * The AI SDK middleware in an agent loop on Claude with thinking on (`@ai-sdk/anthropic` against
 * the provider emulator, tools/provider-emulator): 60 tool steps through `generateText`, each
 * step one turn of the service. The emulator refuses a tool loop whose assistant turn comes back
 * without the thinking it issued, so a loop that completes shows the middleware hands the model
 * every assistant turn of the active messages as the model returned it.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { memoryMiddleware } from "../../client/ai-sdk.js";
import { startProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { serviceBeside } from "../support/service-beside.js";

const STEPS = 60;
const stack = serviceBeside(() => startProviderEmulator({ preservedThinking: true }));

it(`an AI SDK loop of ${STEPS} tool steps on Claude with thinking: 0 errors, every assistant turn back with its thinking`, { timeout: 120_000 }, async () => {
  const memory = stack.memory;
  await memory.upsertProcess("ai-sdk-thinking", { projectId: "agents" });
  stack.provider.anthropic.script(
    ...Array.from({ length: STEPS }, (_, i) => ({
      thinking: `Step ${i}: list the next folder before answering.`,
      toolUses: [{ id: `toolu_${i}`, name: "list", input: { dir: `src/${i}` } }],
    })),
    { thinking: "Every folder listed.", text: "Listed 60 folders." },
  );
  const anthropic = createAnthropic({ apiKey: "sk-ant-test", baseURL: `${stack.provider.url}/v1` });
  const model = wrapLanguageModel({
    model: anthropic("claude-fable-5-1"),
    middleware: memoryMiddleware({ client: memory, processId: "ai-sdk-thinking", contextWindow: 1_000_000 }),
  });
  const result = await generateText({
    model,
    system: "You explore repositories.",
    prompt: "List every folder of src/.",
    tools: { list: tool({ inputSchema: z.object({ dir: z.string() }), execute: async ({ dir }) => `${dir}: a.ts b.ts` }) },
    stopWhen: stepCountIs(STEPS + 1),
    providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } },
    maxRetries: 0,
  });
  expect(result.text).toBe("Listed 60 folders.");
  expect(stack.provider.records.filter((r) => r.status !== 200)).toEqual([]);
  expect(stack.provider.records).toHaveLength(STEPS + 1);
  expect(stack.provider.anthropic.missingThinking()).toEqual([]);
  expect(stack.provider.records.at(-1)!.thinking!.verified).toHaveLength(STEPS);
  // What the service keeps of each answer is what the model returned: its reasoning with its signature.
  const stored = (await memory.listMessages("ai-sdk-thinking", { limit: 1000 })).items.filter((m) => m.role === "ASSISTANT");
  expect(stored).toHaveLength(STEPS + 1);
  for (const m of stored) expect(JSON.stringify(m.native)).toContain('"signature"');
});
