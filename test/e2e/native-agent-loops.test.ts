/**
 * Agent loops through the service against the provider emulator (tools/provider-emulator): each
 * step is one turn naming the engine's format, the model call takes the turn's `request`, and the
 * model's answer is appended as native content. The emulator signs what it issues and refuses
 * what comes back changed, so a loop that completes shows that every assistant turn reached the
 * model again exactly as the model returned it. The window is large: nothing folds here.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { startProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { serviceBeside } from "../support/service-beside.js";
import { anthropicStep, responsesStep } from "../support/engine-steps.js";

const STEPS = 60;
const stack = serviceBeside(() => startProviderEmulator({ preservedThinking: true, preservedReasoning: true }));

const model = { name: "claude-fable-5-1", contextWindow: 1_000_000 };

describe(`a ${STEPS}-step tool loop`, { timeout: 180_000 }, () => {
  it("Anthropic with thinking: 0 errors, and every assistant turn comes back with the thinking blocks it was issued", async () => {
    stack.provider.reset();
    const client = stack.memory;
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: stack.provider.url, maxRetries: 0 });
    await client.upsertProcess("loop-anthropic", { projectId: "agents" });
    stack.provider.anthropic.script(
      ...Array.from({ length: STEPS }, (_, i) => ({
        thinking: `Step ${i}: read the next file before deciding — ${"why ".repeat(40)}`,
        toolUses: [{ id: `toolu_${i}`, name: "read_file", input: { path: `src/file-${i}.ts` } }],
      })),
      { thinking: "All files read.", text: "Done: 60 files read." },
    );
    let next: Anthropic.ContentBlockParam[] = [{ type: "text", text: "Read every file of src/ and report." }];
    let role: "USER" | "TOOL" = "USER";
    for (let step = 0; step <= STEPS; step++) {
      const { call } = await anthropicStep(client, anthropic, "loop-anthropic", { role, content: next }, model);
      if (!call) break;
      next = [{ type: "tool_result", tool_use_id: call.id, content: `// contents of ${(call.input as { path: string }).path}` }];
      role = "TOOL";
    }
    expect(stack.provider.records.filter((r) => r.status !== 200)).toEqual([]);
    expect(stack.provider.records).toHaveLength(STEPS + 1);
    expect(stack.provider.anthropic.missingThinking()).toEqual([]);
    // The last request carried all 60 earlier thinking blocks, each verified against its signature.
    expect(stack.provider.records.at(-1)!.thinking!.verified).toHaveLength(STEPS);
    expect(stack.provider.records.at(-1)!.thinking!.dropped ?? []).toEqual([]);
  });

  it("OpenAI Responses with encrypted reasoning: 0 errors and 0 reasoning items dropped", async () => {
    stack.provider.reset();
    const client = stack.memory;
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${stack.provider.url}/v1`, maxRetries: 0 });
    await client.upsertProcess("loop-openai", { projectId: "agents" });
    stack.provider.openai.script(
      ...Array.from({ length: STEPS }, (_, i) => ({
        reasoning: `Step ${i}: run the next test file.`,
        functionCalls: [{ callId: `call_${i}`, name: "run_tests", arguments: { file: `test/${i}.test.ts` } }],
      })),
      { reasoning: "All green.", text: "60 test files pass." },
    );
    let next: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Run every test file." }];
    let role: "USER" | "TOOL" = "USER";
    for (let step = 0; step <= STEPS; step++) {
      const { call } = await responsesStep(client, openai, "loop-openai", { role, content: next }, { name: "gpt-6", contextWindow: 1_000_000 });
      if (!call) break;
      next = [{ type: "function_call_output", call_id: call.call_id, output: "ok: 12 passed" }];
      role = "TOOL";
    }
    expect(stack.provider.records.filter((r) => r.status !== 200)).toEqual([]);
    expect(stack.provider.records).toHaveLength(STEPS + 1);
    const counts = stack.provider.openai.reasoningCounts();
    expect(counts.dropped).toBe(0);
    // Each request sent back every earlier reasoning item: 0 + 1 + … + 60.
    expect(counts.kept).toBe((STEPS * (STEPS + 1)) / 2);
  });
});
