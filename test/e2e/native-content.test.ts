/**
 * Native content over HTTP (docs/api.md, "Native content"): stored exactly, returned exactly by
 * every read, projected for the service's own readers, refused with its path when malformed, and
 * replayed in the engine's format by a turn's `request`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];

beforeAll(async () => {
  ctx = await startTestService();
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

const create = (id: string) => api("PUT", `/v1/processes/${id}`, { body: { projectId: "proj" } });
const post = (id: string, body: unknown) => api("POST", `/v1/processes/${id}/messages`, { body });
const turn = (id: string, body: Record<string, unknown>) => api("POST", `/v1/processes/${id}/turns`, { body: { model: { contextWindow: 200_000 }, ...body } });

const thinking = {
  type: "thinking",
  thinking: "The user wants the file listed. I should call ls — ünïcødé 🧠.",
  signature: "EqQBCkYIARgCIkD" + "x".repeat(300),
};
const toolUse = { type: "tool_use", id: "toolu_01A", name: "ls", input: { path: "/tmp", deep: { a: [1, 2.5, null, true] } } };
const anthropicCall = [thinking, { type: "text", text: "Listing it." }, toolUse];
const anthropicResult = [{ type: "tool_result", tool_use_id: "toolu_01A", content: [{ type: "text", text: "a.txt\nb.txt" }] }];

describe("anthropic native content", () => {
  it("stores an assistant turn exactly, derives role, text and tool calls, and answers it on every read", async () => {
    await create("n-anth");
    await post("n-anth", { role: "USER", content: "list /tmp" });
    const call = await post("n-anth", { native: { format: "anthropic", content: anthropicCall } });
    expect(call.status).toBe(201);
    const m = call.body.message;
    expect(m.role).toBe("ASSISTANT");
    expect(m.content).toBe("Listing it.");
    expect(m.content).not.toContain("ls — ");
    expect(m.toolCalls).toEqual([{ id: "toolu_01A", name: "ls", arguments: JSON.stringify(toolUse.input) }]);
    expect(m.native).toEqual({ format: "anthropic", content: anthropicCall });

    const result = await post("n-anth", { native: { format: "anthropic", content: anthropicResult } });
    expect(result.body.message).toMatchObject({ role: "TOOL", toolCallId: "toolu_01A", content: "a.txt\nb.txt" });

    expect((await api("GET", `/v1/processes/n-anth/messages/${m.id}`)).body.message.native).toEqual({ format: "anthropic", content: anthropicCall });
    const all = (await api("GET", "/v1/processes/n-anth/messages?limit=10")).body.items;
    expect(all[1].native.content).toEqual(anthropicCall);
    const active = (await api("GET", "/v1/processes/n-anth/messages?view=active")).body.items;
    expect(active[2].native.content).toEqual(anthropicResult);
  });

  it("replays native messages exactly in `request`, and converts the others", async () => {
    const t = await turn("n-anth", { format: "anthropic", message: { role: "USER", content: "thanks" } });
    expect(t.status).toBe(200);
    const { messages } = t.body.request;
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "list /tmp" }] },
      { role: "assistant", content: anthropicCall },
      { role: "user", content: anthropicResult },
      { role: "user", content: [{ type: "text", text: "thanks" }] },
    ]);
    // Signatures come back byte-identical.
    expect(messages[1].content[0].signature).toBe(thinking.signature);
    expect(t.body.messages[1].native.content).toEqual(anthropicCall);
  });

  it("never sends another provider's reasoning: the same process asked as OpenAI Responses gets the projection", async () => {
    const t = await turn("n-anth", { format: "openai-responses" });
    const text = JSON.stringify(t.body.request.input);
    expect(text).not.toContain("thinking");
    expect(text).not.toContain(thinking.signature);
    expect(t.body.request.input).toContainEqual({ type: "function_call", call_id: "toolu_01A", name: "ls", arguments: JSON.stringify(toolUse.input) });
    expect(t.body.request.input).toContainEqual({ type: "function_call_output", call_id: "toolu_01A", output: "a.txt\nb.txt" });
  });

  it("a turn without format answers no request", async () => {
    expect((await turn("n-anth", {})).body.request).toBeUndefined();
  });
});

describe("other formats", () => {
  it("OpenAI Responses: reasoning with encrypted content and a function call come back exactly", async () => {
    await create("n-oai");
    await post("n-oai", { role: "USER", content: "weather?" });
    const items = [
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAA" + "Z".repeat(500) },
      { type: "function_call", id: "fc_1", call_id: "call_1", name: "weather", arguments: '{"city":"Lisbon"}', status: "completed" },
    ];
    const a = await post("n-oai", { native: { format: "openai-responses", content: items } });
    expect(a.body.message).toMatchObject({ role: "ASSISTANT", content: "", toolCalls: [{ id: "call_1", name: "weather", arguments: '{"city":"Lisbon"}' }] });
    const out = [{ type: "function_call_output", call_id: "call_1", output: "22C" }];
    expect((await post("n-oai", { native: { format: "openai-responses", content: out } })).body.message).toMatchObject({ role: "TOOL", toolCallId: "call_1" });
    const t = await turn("n-oai", { format: "openai-responses" });
    expect(t.body.request.input).toEqual([{ role: "user", content: "weather?" }, ...items, ...out]);
  });

  it("Gemini: thought signatures on function calls come back exactly", async () => {
    await create("n-gem");
    const parts = [{ functionCall: { name: "lookup", args: { q: "x" } }, thoughtSignature: "c2lnbmF0dXJl" }];
    expect((await post("n-gem", { native: { format: "gemini", content: parts } })).body.message.role).toBe("ASSISTANT");
    const resp = [{ functionResponse: { name: "lookup", response: { hits: 3 } } }];
    expect((await post("n-gem", { native: { format: "gemini", content: resp } })).body.message).toMatchObject({ role: "TOOL", toolCallId: "lookup" });
    const t = await turn("n-gem", { format: "gemini" });
    expect(t.body.request.contents).toEqual([
      { role: "model", parts },
      { role: "user", parts: resp },
    ]);
  });

  it("AI SDK: reasoning parts with providerOptions come back exactly", async () => {
    await create("n-ai");
    await post("n-ai", { role: "USER", content: "go" });
    const content = [
      { type: "reasoning", text: "hmm", providerOptions: { anthropic: { signature: "sig-123" } } },
      { type: "tool-call", toolCallId: "c1", toolName: "run", input: { cmd: "ls" } },
    ];
    await post("n-ai", { native: { format: "ai-sdk", content } });
    const res = [{ type: "tool-result", toolCallId: "c1", toolName: "run", output: { type: "text", value: "ok" } }];
    await post("n-ai", { native: { format: "ai-sdk", content: res } });
    const t = await turn("n-ai", { format: "ai-sdk" });
    const prompt = t.body.request.prompt.filter((m: any) => m.role !== "system");
    expect(prompt).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content },
      { role: "tool", content: res },
    ]);
  });

  it("unknown block and item types are kept as they are and labelled in the projection", async () => {
    await create("n-unknown");
    const content = [{ type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.org" }] }, { type: "brand_new_block", x: { y: [1] } }];
    const m = (await post("n-unknown", { role: "ASSISTANT", native: { format: "anthropic", content } })).body.message;
    expect(m.native.content).toEqual(content);
    expect(m.content).toContain("[brand_new_block]");
  });
});

describe("refusals name the path and write nothing", () => {
  it("a thinking block without its signature is a 400 at body.native.content.0.signature", async () => {
    await create("n-bad");
    const res = await post("n-bad", { native: { format: "anthropic", content: [{ type: "thinking", thinking: "x" }] } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain("body.native.content.0.signature");
    expect((await api("GET", "/v1/processes/n-bad/messages")).body.items).toEqual([]);
  });

  it("a role the content contradicts, a missing role, an element that is no object, an unknown format", async () => {
    const cases: Array<[unknown, string]> = [
      [{ role: "USER", native: { format: "anthropic", content: anthropicCall } }, "body.role"],
      [{ native: { format: "anthropic", content: [{ type: "text", text: "hi" }] } }, "body.role"],
      [{ role: "USER", native: { format: "openai-responses", content: ["text"] } }, "body.native.content.0"],
      [{ role: "USER", native: { format: "cohere", content: [] } }, "body.native.format"],
      [{ role: "USER" }, "body.content"],
    ];
    for (const [body, path] of cases) {
      const res = await post("n-bad", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(res.body.error)).toContain(path);
    }
    expect((await api("GET", "/v1/processes/n-bad/messages")).body.items).toEqual([]);
  });
});
