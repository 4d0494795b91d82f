/**
 * Native content over HTTP (docs/api.md, "Native content"): stored exactly, returned exactly by
 * every read, projected for the service's own readers, refused with its path when malformed, and
 * replayed in the engine's format by a turn's `request`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_MESSAGE_BODY_BYTES } from "../../core/adapters/http/schemas.js";
import { NATIVE_INLINE_PART_BYTES, NATIVE_MAX_BLOBS } from "../../core/domain/native/blob-parts.js";
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

/** A request's content without its cache breakpoints, which only the request carries (docs/turns.md, "Prompt caching"). */
const withoutBreakpoints = (value: unknown) => JSON.parse(JSON.stringify(value), (k, v: unknown) => (k === "cache_control" ? undefined : v));

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
    const messages = withoutBreakpoints(t.body.request.messages);
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

describe("limits of native content", () => {
  /** A message body of exactly `bytes` bytes: one image block whose base64 data fills it up. */
  function bodyOf(bytes: number): string {
    const frame = (data: string) => JSON.stringify({ role: "USER", native: { format: "anthropic", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data } }] } });
    const data = "A".repeat(bytes - Buffer.byteLength(frame("")));
    const body = frame(data);
    expect(Buffer.byteLength(body)).toBe(bytes);
    return body;
  }

  it("an append of exactly 5 MiB is kept whole (its image a blob) and comes back byte-identical; one byte more is 413 and writes nothing", async () => {
    await create("n-limit");
    const at = bodyOf(MAX_MESSAGE_BODY_BYTES);
    const ok = await api("POST", "/v1/processes/n-limit/messages", { rawBody: at });
    expect(ok.status).toBe(201);
    const read = await api("GET", `/v1/processes/n-limit/messages/${ok.body.message.id}`);
    expect(JSON.stringify(read.body.message.native)).toBe(JSON.stringify(JSON.parse(at).native));
    expect(ok.body.message.content).toBe("[image]");

    const past = await api("POST", "/v1/processes/n-limit/messages", { rawBody: bodyOf(MAX_MESSAGE_BODY_BYTES + 1) });
    expect(past.status).toBe(413);
    expect(past.body.error.code).toBe("request.too_large");
    expect((await api("GET", "/v1/processes/n-limit/messages")).body.items).toHaveLength(1);
  });

  it(`at most ${NATIVE_MAX_BLOBS} parts past the inline size: one more is 413 message.too_many_parts, nothing written`, async () => {
    await create("n-parts");
    const part = (i: number) => ({ type: "text", text: `${i}`.padEnd(NATIVE_INLINE_PART_BYTES + 1, "x") });
    const at = await post("n-parts", { role: "USER", native: { format: "anthropic", content: Array.from({ length: NATIVE_MAX_BLOBS }, (_, i) => part(i)) } });
    expect(at.status).toBe(201);
    const past = await post("n-parts", { role: "USER", native: { format: "anthropic", content: Array.from({ length: NATIVE_MAX_BLOBS + 1 }, (_, i) => part(i)) } });
    expect(past.status).toBe(413);
    expect(past.body.error.code).toBe("message.too_many_parts");
    expect((await api("GET", "/v1/processes/n-parts/messages")).body.items).toHaveLength(1);
  });

  it("a turn's request carries a blob-backed part byte-identical", async () => {
    await create("n-blob-turn");
    const big = "é🧠".repeat(20_000);
    const content = [{ type: "tool_result", tool_use_id: "t1", content: big }];
    await post("n-blob-turn", { role: "ASSISTANT", native: { format: "anthropic", content: [{ type: "tool_use", id: "t1", name: "cat", input: {} }] } });
    await post("n-blob-turn", { native: { format: "anthropic", content } });
    const t = await turn("n-blob-turn", { format: "anthropic" });
    expect(withoutBreakpoints(t.body.request.messages.at(-1))).toEqual({ role: "user", content });
  });
});

describe("a turn's answer within Lambda's 6 MB", () => {
  // Screenshots of about 2.2 MB each: two fit an answer once, not twice; three never.
  const screenshot = (n: number) => ({
    format: "anthropic" as const,
    content: [
      { type: "text", text: `screenshot ${n}` },
      { type: "image", source: { type: "base64", media_type: "image/png", data: `${n}`.repeat(2_200_000) } },
    ],
  });

  it("leaves native content to `request` when both would pass the bound, and is a 413 when `request` alone would, with the turn's message stored", async () => {
    await create("n-big");
    for (const n of [1, 2]) expect((await post("n-big", { role: "USER", native: screenshot(n) })).status).toBe(201);

    const plain = await turn("n-big", {});
    expect(plain.status).toBe(200);
    expect(plain.body.messagesWithoutNative).toBeUndefined();
    expect(plain.body.messages[1].native).toEqual(screenshot(2));

    const asAnthropic = await turn("n-big", { format: "anthropic" });
    expect(asAnthropic.status).toBe(200);
    expect(asAnthropic.body.messagesWithoutNative).toBe(true);
    expect(asAnthropic.body.messages.map((m: { native?: unknown }) => m.native)).toEqual([undefined, undefined]);
    expect(asAnthropic.body.messages[1].content).toContain("screenshot 2");
    expect(withoutBreakpoints(asAnthropic.body.request.messages).map((m: { content: unknown }) => m.content)).toEqual([screenshot(1).content, screenshot(2).content]);

    const third = await turn("n-big", { format: "anthropic", message: { role: "USER", native: screenshot(3) } });
    expect(third.status).toBe(413);
    expect(third.body.error.code).toBe("turn.answer_too_large");
    expect(third.body.error.message).toMatch(/past the 6000000 an answer may hold; the turn's message is stored/);
    // Nothing lost: the message is there, and small pages read every native part back.
    const pages: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await api("GET", `/v1/processes/n-big/messages?view=active&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      pages.push(...page.body.items.map((m: { native: unknown }) => m.native));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(pages).toEqual([screenshot(1), screenshot(2), screenshot(3)]);
  }, 120_000);
});
