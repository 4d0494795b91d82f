/**
 * The emulator's OpenAI Responses rules on reasoning items, as pure functions: sealed
 * `encrypted_content`, its verification, and dropping reasoning after a prefix change.
 */
import { describe, expect, it } from "vitest";
import {
  buildOpenAIResponse,
  checkOpenAIResponsesRequest,
  expandItemReferences,
  openAIPrefixHash,
} from "../../tools/provider-emulator/openai-responses-rules.js";
import { createSigner } from "../../tools/provider-emulator/signing.js";

const signer = createSigner();
const tools = [{ type: "function", name: "read_log", parameters: { type: "object", properties: {} }, strict: false }];
const firstRequest = {
  model: "gpt-6",
  instructions: "You keep CI green.",
  input: "Why does ci-7 fail?",
  tools,
  reasoning: { effort: "medium" },
  include: ["reasoning.encrypted_content"],
  store: false,
};
const none = new Map<string, string>();

function toolLoop() {
  const answer = buildOpenAIResponse(
    firstRequest,
    { reasoning: "Read the log first.", functionCalls: [{ callId: "call_1", name: "read_log", arguments: {} }] },
    { signer, id: "resp_1", inputTransformations: [] },
  );
  const second: any = {
    ...firstRequest,
    input: [
      { role: "user", content: "Why does ci-7 fail?" },
      ...structuredClone(answer.body.output),
      { type: "function_call_output", call_id: "call_1", output: "ERROR: node 18 is not supported" },
    ],
  };
  return { answer, second };
}

describe("OpenAI Responses reasoning rules", () => {
  it("answers a reasoning item with encrypted_content first, then the scripted function call", () => {
    const { answer } = toolLoop();
    expect(answer.body.output.map((o: any) => o.type)).toEqual(["reasoning", "function_call"]);
    expect(answer.body.output[0]).toMatchObject({ id: "rs_1", summary: [], encrypted_content: expect.any(String) });
    expect(answer.body.output[1]).toMatchObject({ call_id: "call_1", name: "read_log", arguments: "{}" });
    expect(answer.reasoning.map((r) => r.id)).toEqual(["rs_1"]);
  });

  it("leaves encrypted_content out unless include asks for it, and reasoning out unless requested", () => {
    const { include: _i, ...noInclude } = firstRequest;
    expect(buildOpenAIResponse(noInclude, {}, { signer, id: "resp_2", inputTransformations: [] }).body.output[0]).not.toHaveProperty(
      "encrypted_content",
    );
    const { reasoning: _r, ...noReasoning } = firstRequest;
    expect(buildOpenAIResponse(noReasoning, { text: "hi" }, { signer, id: "resp_3", inputTransformations: [] }).body.output.map((o: any) => o.type)).toEqual([
      "message",
    ]);
  });

  it("keeps a reasoning item sent back after an unchanged prefix", () => {
    const { second } = toolLoop();
    expect(checkOpenAIResponsesRequest(second, { signer, stored: none })).toEqual({
      ok: true,
      kept: ["rs_1"],
      dropped: [],
      inputTransformations: [],
    });
  });

  it("does not count ids, statuses or string-vs-part content as a prefix change", () => {
    const { second } = toolLoop();
    second.input[0] = { type: "message", role: "user", id: "msg_u", status: "completed", content: [{ type: "input_text", text: "Why does ci-7 fail?" }] };
    const check = checkOpenAIResponsesRequest(second, { signer, stored: none });
    expect(check.ok && check.kept).toEqual(["rs_1"]);
  });

  it("rejects tampered encrypted_content with invalid_encrypted_content in OpenAI's error shape", () => {
    const { second } = toolLoop();
    const blob: string = second.input[1].encrypted_content;
    second.input[1].encrypted_content = blob.slice(0, 20) + (blob[20] === "A" ? "B" : "A") + blob.slice(21);
    const check = checkOpenAIResponsesRequest(second, { signer, stored: none });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.status).toBe(400);
    expect(check.body).toEqual({
      error: { message: check.message, type: "invalid_request_error", param: null, code: "invalid_encrypted_content" },
    });
    expect(check.message).toMatch(/^The encrypted content .+ could not be verified\./);
  });

  it("rejects encrypted_content moved onto another reasoning item id", () => {
    const { second } = toolLoop();
    second.input[1].id = "rs_other";
    const check = checkOpenAIResponsesRequest(second, { signer, stored: none });
    expect(!check.ok && check.rule).toBe("invalid_encrypted_content");
  });

  it("answers 404 for a reasoning item with no encrypted_content that was never stored", () => {
    const { second } = toolLoop();
    delete second.input[1].encrypted_content;
    const check = checkOpenAIResponsesRequest(second, { signer, stored: none });
    expect(!check.ok && [check.status, check.rule]).toEqual([404, "reasoning_item_not_found"]);
    const stored = new Map([["rs_1", openAIPrefixHash(firstRequest, 1)]]);
    expect(checkOpenAIResponsesRequest(second, { signer, stored }).ok).toBe(true);
  });

  it.each([
    ["an edited earlier input item", (r: any) => (r.input[0] = { role: "user", content: "Why does ci-8 fail?" })],
    ["changed tools", (r: any) => (r.tools = [...tools, { type: "function", name: "rerun", parameters: {} }])],
    ["changed instructions", (r: any) => (r.instructions = "You keep CI green. Today is Tuesday.")],
    ["a changed text.format", (r: any) => (r.text = { format: { type: "json_object" } })],
  ])("drops the reasoning item after %s and reports it in input_transformations", (_name, change) => {
    const { second } = toolLoop();
    change(second);
    expect(checkOpenAIResponsesRequest(second, { signer, stored: none })).toEqual({
      ok: true,
      kept: [],
      dropped: ["rs_1"],
      inputTransformations: [{ type: "reasoning", id: "rs_1", action: "removed", reason: "prefix_mismatch" }],
    });
  });

  it("keeps the reasoning item when only what follows it changes", () => {
    const { second } = toolLoop();
    second.input[3].output = "ERROR: shortened";
    const check = checkOpenAIResponsesRequest(second, { signer, stored: none });
    expect(check.ok && check.kept).toEqual(["rs_1"]);
  });

  it("does not count instructions when the model appends them after the input", () => {
    const answer = buildOpenAIResponse(firstRequest, {}, { signer, id: "resp_9", inputTransformations: [], instructionsInPrefix: false });
    const second = { ...firstRequest, instructions: "Other.", input: [{ role: "user", content: "Why does ci-7 fail?" }, ...answer.body.output] };
    const check = checkOpenAIResponsesRequest(second, { signer, stored: none, instructionsInPrefix: false });
    expect(check.ok && check.kept).toEqual(["rs_9"]);
  });

  it("keeps reasoning after a prefix change on models that do not drop it", () => {
    const { second } = toolLoop();
    second.instructions = "Changed.";
    const check = checkOpenAIResponsesRequest(second, { signer, stored: none, preservedReasoning: false });
    expect(check.ok && check.kept).toEqual(["rs_1"]);
  });

  it("expands item_reference items from stored responses, and answers 404 for an unknown one", () => {
    const { answer, second } = toolLoop();
    const stored = new Map<string, unknown>(answer.body.output.map((o: any) => [o.id, o]));
    const referenced = { ...second, input: second.input.map((i: any) => (i.id ? { type: "item_reference", id: i.id } : i)) };
    const expanded = expandItemReferences(referenced, stored);
    expect(expanded.ok && expanded.body.input).toEqual(second.input);
    const missing = expandItemReferences({ input: [{ type: "item_reference", id: "rs_gone" }] }, stored);
    expect(!missing.ok && [missing.status, missing.message]).toEqual([404, "Item with id 'rs_gone' not found."]);
  });
});
