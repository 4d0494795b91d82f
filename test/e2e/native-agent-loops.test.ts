/**
 * Agent loops through the service against the provider emulator (tools/provider-emulator): each
 * step is one turn naming the engine's format, the model call takes the turn's `request`, and the
 * model's answer is appended as native content. The emulator signs what it issues and refuses
 * what comes back changed, so a loop that completes shows that every assistant turn reached the
 * model again exactly as the model returned it. The window is large: nothing folds here.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient } from "../../client/index.js";
import { startProviderEmulator, type ProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { KEY_A, startTestService } from "../support/service.js";

const STEPS = 60;
let ctx: Awaited<ReturnType<typeof startTestService>>;
let emulator: ProviderEmulator;
beforeAll(async () => {
  ctx = await startTestService();
  emulator = await startProviderEmulator({ preservedThinking: true, preservedReasoning: true });
});
afterAll(async () => {
  await emulator?.close();
  await ctx?.service.stop();
});

const memory = () => createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
const model = { name: "claude-fable-5-1", contextWindow: 1_000_000 };

describe(`a ${STEPS}-step tool loop`, { timeout: 180_000 }, () => {
  it("Anthropic with thinking: 0 errors, and every assistant turn comes back with the thinking blocks it was issued", async () => {
    emulator.reset();
    const client = memory();
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: emulator.url, maxRetries: 0 });
    await client.upsertProcess("loop-anthropic", { projectId: "agents" });
    emulator.anthropic.script(
      ...Array.from({ length: STEPS }, (_, i) => ({
        thinking: `Step ${i}: read the next file before deciding — ${"why ".repeat(40)}`,
        toolUses: [{ id: `toolu_${i}`, name: "read_file", input: { path: `src/file-${i}.ts` } }],
      })),
      { thinking: "All files read.", text: "Done: 60 files read." },
    );
    let next: Anthropic.ContentBlockParam[] = [{ type: "text", text: "Read every file of src/ and report." }];
    let role: "USER" | "TOOL" = "USER";
    for (let step = 0; step <= STEPS; step++) {
      const turn = await client.beginTurn("loop-anthropic", { message: { role, native: { format: "anthropic", content: next } }, model, format: "anthropic" });
      const request = turn.request as unknown as { system: Anthropic.TextBlockParam[]; messages: Anthropic.MessageParam[] };
      const reply = await anthropic.messages.create({
        model: model.name,
        max_tokens: 4096,
        thinking: { type: "enabled", budget_tokens: 2048 },
        system: [{ type: "text", text: "You read code." }, ...request.system],
        tools: [{ name: "read_file", input_schema: { type: "object", properties: { path: { type: "string" } } } }],
        messages: request.messages,
      });
      await client.appendMessage("loop-anthropic", { native: { format: "anthropic", content: reply.content } });
      const call = reply.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
      if (!call) break;
      next = [{ type: "tool_result", tool_use_id: call.id, content: `// contents of ${(call.input as { path: string }).path}` }];
      role = "TOOL";
    }
    expect(emulator.records.filter((r) => r.status !== 200)).toEqual([]);
    expect(emulator.records).toHaveLength(STEPS + 1);
    expect(emulator.anthropic.missingThinking()).toEqual([]);
    // The last request carried all 60 earlier thinking blocks, each verified against its signature.
    expect(emulator.records.at(-1)!.thinking!.verified).toHaveLength(STEPS);
    expect(emulator.records.at(-1)!.thinking!.dropped ?? []).toEqual([]);
  });

  it("OpenAI Responses with encrypted reasoning: 0 errors and 0 reasoning items dropped", async () => {
    emulator.reset();
    const client = memory();
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${emulator.url}/v1`, maxRetries: 0 });
    await client.upsertProcess("loop-openai", { projectId: "agents" });
    emulator.openai.script(
      ...Array.from({ length: STEPS }, (_, i) => ({
        reasoning: `Step ${i}: run the next test file.`,
        functionCalls: [{ callId: `call_${i}`, name: "run_tests", arguments: { file: `test/${i}.test.ts` } }],
      })),
      { reasoning: "All green.", text: "60 test files pass." },
    );
    let next: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Run every test file." }];
    let role: "USER" | "TOOL" = "USER";
    for (let step = 0; step <= STEPS; step++) {
      const turn = await client.beginTurn("loop-openai", { message: { role, native: { format: "openai-responses", content: next } }, model: { name: "gpt-6", contextWindow: 1_000_000 }, format: "openai-responses" });
      const { input } = turn.request as unknown as { input: OpenAI.Responses.ResponseInputItem[] };
      const response = await openai.responses.create({
        model: "gpt-6",
        instructions: "You run tests.",
        reasoning: { effort: "medium" },
        include: ["reasoning.encrypted_content"],
        store: false,
        tools: [{ type: "function", name: "run_tests", parameters: { type: "object", properties: {} }, strict: false }],
        input,
      });
      await client.appendMessage("loop-openai", { native: { format: "openai-responses", content: response.output } });
      const call = response.output.find((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === "function_call");
      if (!call) break;
      next = [{ type: "function_call_output", call_id: call.call_id, output: "ok: 12 passed" }];
      role = "TOOL";
    }
    expect(emulator.records.filter((r) => r.status !== 200)).toEqual([]);
    expect(emulator.records).toHaveLength(STEPS + 1);
    const counts = emulator.openai.reasoningCounts();
    expect(counts.dropped).toBe(0);
    // Each request sent back every earlier reasoning item: 0 + 1 + … + 60.
    expect(counts.kept).toBe((STEPS * (STEPS + 1)) / 2);
  });
});
