/**
 * The AI SDK middleware keeps every part of what the model returned: `generateText` with
 * `@ai-sdk/openai`'s Responses model, against a local server speaking the Responses wire format,
 * over a tool loop of 12 model calls whose answers carry reasoning items with encrypted content.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool, wrapLanguageModel, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { memoryMiddleware } from "../../client/ai-sdk.js";
import { startLlmWireServer, type RecordedRequest } from "../../tools/llm-wire-server.js";
import { serviceBeside } from "../support/service-beside.js";

const stack = serviceBeside(() => startLlmWireServer());

const TOOL_STEPS = 11;

/** The reasoning item of the n-th answer, as the Responses API returns it (store: false). */
const reasoningItem = (n: number) => ({
  type: "reasoning",
  id: `rs_${n}`,
  encrypted_content: `gAAAAB${n}-` + "Zm9v".repeat(200) + "—ünï🧠",
  summary: [{ type: "summary_text", text: `Step ${n}: the next file to check is file-${n}.` }],
});

/** A Responses API answer: reasoning, then a function call until the last step, then text. */
function responseBody(request: RecordedRequest, n: number) {
  const output: unknown[] = [reasoningItem(n)];
  if (n < TOOL_STEPS) output.push({ type: "function_call", id: `fc_${n}`, call_id: `call_${n}`, name: "check", arguments: JSON.stringify({ file: `file-${n}` }), status: "completed" });
  else output.push({ type: "message", id: `msg_${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "All 11 files are fine.", annotations: [] }] });
  return { id: `resp_${n}`, object: "response", created_at: 1_700_000_000, model: request.body?.model ?? "gpt-5", status: "completed", output, usage: { input_tokens: 100, output_tokens: 20 } };
}

describe("memoryMiddleware with native content", () => {
  it("sends every earlier reasoning item back exactly on every later request, and stores each message as the SDK built it", async () => {
    await stack.memory.upsertProcess("ai-native", { projectId: "ai" });
    let n = 0;
    stack.provider.setFallback((request) => ({ body: responseBody(request, n++) }));
    const openai = createOpenAI({ baseURL: `${stack.provider.url}/v1`, apiKey: "test-key" });
    const model = wrapLanguageModel({ model: openai.responses("gpt-5"), middleware: memoryMiddleware({ client: stack.memory, processId: "ai-native", contextWindow: 400_000 }) });

    const result = await generateText({
      model,
      system: "You are Frankie.",
      prompt: "Check every file.",
      tools: { check: tool({ inputSchema: z.object({ file: z.string() }), execute: async ({ file }) => ({ file, ok: true }) }) },
      stopWhen: stepCountIs(TOOL_STEPS + 2),
      providerOptions: { openai: { store: false, include: ["reasoning.encrypted_content"] } },
    });

    expect(result.text).toBe("All 11 files are fine.");
    const requests = stack.provider.requests.filter((r) => r.path === "/v1/responses");
    expect(requests).toHaveLength(TOOL_STEPS + 1);
    requests.forEach((request, k) => {
      const sent = (request.body.input as Array<{ type?: string }>).filter((i) => i.type === "reasoning");
      // Every earlier reasoning item, exactly as the API returned it: none dropped, none changed.
      expect(sent, `request ${k}`).toEqual(Array.from({ length: k }, (_, j) => reasoningItem(j)));
    });
    // The caller's system prompt stays first (a reasoning model gets it as the developer role).
    expect(requests.at(-1)!.body.input[0]).toEqual({ role: "developer", content: "You are Frankie." });

    // What is stored is what the SDK itself made of each answer and each tool result.
    const stored = (await stack.memory.listMessages("ai-native", { view: "active", limit: 1000 })).items;
    const sdkMessages: ModelMessage[] = result.response.messages;
    expect(stored).toHaveLength(1 + sdkMessages.length);
    expect(stored[0]!.native).toEqual({ format: "ai-sdk", content: [{ type: "text", text: "Check every file." }] });
    sdkMessages.forEach((m, i) => {
      expect(stored[i + 1]!.role, `message ${i + 1}`).toBe(m.role === "assistant" ? "ASSISTANT" : "TOOL");
      expect(stored[i + 1]!.native, `message ${i + 1}`).toEqual({ format: "ai-sdk", content: m.content });
    });
    const firstAnswer = stored[1]!;
    expect(firstAnswer.native!.content[0]).toEqual({
      type: "reasoning",
      text: reasoningItem(0).summary[0]!.text,
      providerOptions: { openai: { itemId: "rs_0", reasoningEncryptedContent: reasoningItem(0).encrypted_content } },
    });
    // The text projection the service reads leaves reasoning out.
    expect(firstAnswer.content).toBe("");
    expect(firstAnswer.toolCalls).toEqual([{ id: "call_0", name: "check", arguments: '{"file":"file-0"}' }]);
    expect(stored.at(-1)!.content).toBe("All 11 files are fine.");
  });
});
