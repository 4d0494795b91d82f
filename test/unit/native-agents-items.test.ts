/**
 * The OpenAI Agents SDK hands its session items in its own spelling of the Responses API items
 * (`callId`, `function_call_result`); the service stores them as `openai-responses` content and
 * reads them for its projection like the API's own items (docs/integrations.md, "OpenAI Agents SDK: `createMemorySession`").
 */
import { describe, expect, it } from "vitest";
import { nativeProblems } from "../../core/domain/native/checks.js";
import { projectMessage } from "../../core/domain/native/message-input.js";

const call = { type: "function_call", callId: "call_1", name: "lookup", arguments: '{"id":"7"}', status: "completed", providerData: { id: "fc_1" } };
const result = { type: "function_call_result", callId: "call_1", name: "lookup", status: "completed", output: { type: "text", text: "packed" } };

describe("Agents SDK items as openai-responses content", () => {
  it("a function_call with callId passes the checks and projects its call", () => {
    expect(nativeProblems("openai-responses", [call])).toEqual([]);
    const p = projectMessage({ native: { format: "openai-responses", content: [{ type: "reasoning", id: "rs_1", content: [], providerData: { encrypted_content: "gAAA" } }, call] } });
    expect(p).toMatchObject({ ok: true, message: { role: "ASSISTANT", toolCalls: [{ id: "call_1", name: "lookup", arguments: '{"id":"7"}' }] } });
  });

  it("a function_call_result is a TOOL message answering its callId, its text part read", () => {
    const p = projectMessage({ native: { format: "openai-responses", content: [result] } });
    expect(p).toMatchObject({ ok: true, message: { role: "TOOL", toolCallId: "call_1", content: "packed" } });
    const plain = projectMessage({ native: { format: "openai-responses", content: [{ ...result, output: "done" }] } });
    expect(plain).toMatchObject({ ok: true, message: { role: "TOOL", content: "done" } });
  });

  it("a function_call with neither call_id nor callId is refused at its call_id", () => {
    expect(nativeProblems("openai-responses", [{ type: "function_call", name: "f", arguments: "{}" }])).toEqual([{ path: [0, "call_id"], message: "must be string" }]);
    expect(nativeProblems("openai-responses", [{ type: "function_call_result", output: "x" }])).toEqual([{ path: [0, "callId"], message: "must be string" }]);
  });
});
