/**
 * The pure rules of native content (core/domain/native): the projection by format, the structural
 * checks with their paths, the split into inline content and blobs and back (a message's, and a
 * memory's provider block), and a turn's request.
 */
import { describe, expect, it } from "vitest";
import { MessageInput } from "../../core/domain/fields.js";
import { NATIVE_INLINE_MAX_BYTES, NATIVE_INLINE_PART_BYTES, NATIVE_MAX_DEPTH, joinNative, jsonDepth, sha256Hex, splitNative } from "../../core/domain/native/blob-parts.js";
import { nativeProblems } from "../../core/domain/native/checks.js";
import type { NativeContent } from "../../core/domain/native/formats.js";
import { blobOfStored, blockBytes, blockFormat, joinBlock, splitBlock, storedBlock } from "../../core/domain/native/memory-block.js";
import { NATIVE_PROJECTION_MAX_BYTES, capText, projectMessage } from "../../core/domain/native/message-input.js";
import { projectNative } from "../../core/domain/native/projection.js";
import { replayRequest } from "../../core/domain/native/replay-request.js";
import type { Message } from "../../core/domain/model.js";

const block = { staticBlock: "## Earlier Conversation (compacted)\nsummary", dynamicBlock: "" };

describe("projection", () => {
  it("anthropic: thinking is never in the text; tool_use becomes a tool call; all tool_result blocks make a TOOL message", () => {
    const p = projectNative("anthropic", [
      { type: "thinking", thinking: "secret plan", signature: "sig" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.ts" } },
    ]);
    expect(p).toMatchObject({ role: "ASSISTANT", text: "Let me look.", toolCalls: [{ id: "toolu_1", name: "read", arguments: '{"path":"a.ts"}' }] });
    expect(p.reasoningChars).toBe("secret plan".length + 3 + 6);
    const r = projectNative("anthropic", [
      { type: "tool_result", tool_use_id: "toolu_1", content: "one" },
      { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "two" }, { type: "image", source: {} }] },
    ]);
    expect(r).toMatchObject({ role: "TOOL", text: "one\ntwo\n[image]", toolCallIds: ["toolu_1", "toolu_2"], mediaParts: 1 });
    expect(projectNative("anthropic", [{ type: "tool_result", tool_use_id: "t", content: "x" }, { type: "text", text: "and more" }]).role).toBe("USER");
    expect(projectNative("anthropic", [{ type: "text", text: "hi" }]).role).toBeUndefined();
  });

  it("openai-responses: encrypted reasoning counts as reasoning, hosted items are labelled, outputs answer their call", () => {
    const p = projectNative("openai-responses", [
      { type: "reasoning", encrypted_content: "xxxx", summary: [{ type: "summary_text", text: "sum" }] },
      { type: "web_search_call", id: "ws_1", status: "completed" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] },
      { type: "custom_tool_call", call_id: "c9", name: "apply_patch", input: "*** patch" },
    ]);
    expect(p).toMatchObject({ role: "ASSISTANT", text: "[web_search_call]\nDone.", toolCalls: [{ id: "c9", name: "apply_patch", arguments: "*** patch" }], reasoningChars: 7 });
    expect(projectNative("openai-responses", [{ type: "function_call_output", call_id: "c1", output: "ok" }])).toMatchObject({ role: "TOOL", toolCallIds: ["c1"], text: "ok" });
    expect(projectNative("openai-responses", [{ role: "user", content: "hello" }])).toMatchObject({ role: "USER", text: "hello" });
  });

  it("gemini: thought parts and signatures are reasoning; calls without ids are named by their function", () => {
    const p = projectNative("gemini", [{ text: "thinking…", thought: true }, { functionCall: { name: "f", args: { a: 1 } }, thoughtSignature: "abcd" }]);
    expect(p).toMatchObject({ role: "ASSISTANT", text: "", toolCalls: [{ id: "f", name: "f", arguments: '{"a":1}' }], reasoningChars: 13 });
    expect(projectNative("gemini", [{ functionResponse: { name: "f", response: { r: 2 } } }])).toMatchObject({ role: "TOOL", toolCallIds: ["f"], text: '{"r":2}' });
  });

  it("ai-sdk: provider-executed calls are labelled, not tool calls the engine answers", () => {
    const p = projectNative("ai-sdk", [
      { type: "reasoning", text: "r" },
      { type: "tool-call", toolCallId: "w1", toolName: "web_search", input: {}, providerExecuted: true },
      { type: "tool-call", toolCallId: "c1", toolName: "run", input: { cmd: "ls" } },
    ]);
    expect(p.toolCalls).toEqual([{ id: "c1", name: "run", arguments: '{"cmd":"ls"}' }]);
    expect(p.text).toBe("[web_search call]");
  });

  it("a lone surrogate in native text becomes U+FFFD in the projection (the store holds no lone surrogate)", () => {
    expect(projectNative("anthropic", [{ type: "text", text: "a\ud800b" }]).text).toBe("a\ufffdb");
  });

  it("tool call ids outside the safe alphabet are printed safely in the projection", () => {
    expect(projectNative("anthropic", [{ type: "tool_use", id: "x\n]<", name: "n", input: {} }]).toolCalls[0]!.id).toBe("x___");
  });
});

describe("checks", () => {
  it("names the path of each problem and passes unknown types", () => {
    expect(nativeProblems("anthropic", [{ type: "thinking", thinking: "t" }, "str", { type: "tool_use", id: "a", name: "n", input: [] }, { type: "future_block" }])).toEqual([
      { path: [0, "signature"], message: "must be string" },
      { path: [1], message: "must be an object" },
      { path: [2, "input"], message: "must be object" },
    ]);
    expect(nativeProblems("gemini", [{ functionCall: { args: {} } }])).toEqual([{ path: [0, "functionCall", "name"], message: "must be string" }]);
    expect(nativeProblems("openai-responses", [{ type: "function_call", call_id: 1, name: "n", arguments: "{}" }])[0]!.path).toEqual([0, "call_id"]);
  });

  it("answers at most 20 problems for a hostile body of many bad elements", () => {
    expect(nativeProblems("anthropic", Array.from({ length: 100_000 }, () => 1))).toHaveLength(20);
  });

  it("refuses nesting past the depth limit, at the limit accepted", () => {
    const nest = (n: number): unknown => (n <= 1 ? {} : { a: nest(n - 1) });
    const at = [{ type: "future", a: nest(NATIVE_MAX_DEPTH - 2) }];
    expect(jsonDepth(at)).toBe(NATIVE_MAX_DEPTH);
    expect(MessageInput.safeParse({ role: "USER", native: { format: "anthropic", content: at } }).success).toBe(true);
    const past = MessageInput.safeParse({ role: "USER", native: { format: "anthropic", content: [{ type: "future", a: nest(NATIVE_MAX_DEPTH - 1) }] } });
    expect(past.success).toBe(false);
    expect(past.error!.issues[0]!.path).toEqual(["native", "content"]);
  });
});

describe("message input", () => {
  it("derives role, content and tool calls; the caller's own content replaces the derived text", () => {
    const native = { format: "anthropic" as const, content: [{ type: "text", text: "derived" }, { type: "tool_use", id: "t", name: "n", input: {} }] };
    expect(MessageInput.parse({ native })).toMatchObject({ role: "ASSISTANT", content: "derived", toolCalls: [{ id: "t", name: "n", arguments: "{}" }], native });
    expect(MessageInput.parse({ native, content: "mine" }).content).toBe("mine");
  });

  it("cuts a long projection at its byte limit and still counts the whole message's tokens", () => {
    const long = "é".repeat(NATIVE_PROJECTION_MAX_BYTES);
    const out = projectMessage({ role: "USER", native: { format: "anthropic", content: [{ type: "text", text: long }] } });
    if (!out.ok) throw new Error("refused");
    expect(Buffer.byteLength(out.message.content)).toBeLessThanOrEqual(NATIVE_PROJECTION_MAX_BYTES);
    expect(out.message.content).toContain("more characters are in the message's native content");
    expect(out.message.tokens).toBeGreaterThan(long.length / 4);
    expect(capText("short", 100)).toBe("short");
  });
});

describe("blob parts", () => {
  it("keeps small content inline and returns it unchanged", () => {
    const native = { format: "anthropic" as const, content: [{ type: "text", text: "hi" }] };
    const { stored, parts } = splitNative(native);
    expect(parts).toEqual([]);
    expect(stored.blobs).toBeUndefined();
    expect(joinNative(stored, new Map())).toEqual(native);
  });

  it("cuts strings past the part size into content-addressed blobs, deduplicated, and joins them back exactly", () => {
    const big = "A".repeat(NATIVE_INLINE_PART_BYTES + 1);
    const odd = "\ud800" + "é".repeat(NATIVE_INLINE_PART_BYTES);
    const native = {
      format: "anthropic" as const,
      content: [{ type: "image", source: { type: "base64", data: big } }, { type: "text", text: big }, { type: "text", text: odd, __proto__: "kept" } as never],
    };
    const { stored, parts } = splitNative(native);
    expect(parts).toHaveLength(2);
    expect(stored.blobs!.map((b) => b.path)).toEqual([[0, "source", "data"], [1, "text"], [2, "text"]]);
    expect(JSON.stringify(stored.content)).not.toContain("AAAA");
    const joined = joinNative(stored, new Map(parts.map((p) => [p.sha256, p.bytes])));
    expect(JSON.stringify(joined.content)).toBe(JSON.stringify(native.content));
    expect((joined.content[2] as { text: string }).text).toBe(odd);
  });

  it("keeps content still too large inline as one blob", () => {
    const many = Array.from({ length: 2000 }, (_, i) => ({ type: "text", text: `item ${i} `.repeat(5) }));
    const { stored, parts } = splitNative({ format: "anthropic", content: many });
    expect(JSON.stringify(many).length).toBeGreaterThan(NATIVE_INLINE_MAX_BYTES);
    expect(stored.content).toEqual([]);
    expect(stored.blobs).toEqual([{ path: [], sha256: parts[0]!.sha256, bytes: parts[0]!.bytes.byteLength }]);
    expect(joinNative(stored, new Map([[parts[0]!.sha256, parts[0]!.bytes]])).content).toEqual(many);
  });
});

const msg = (over: Partial<Message>): Message => ({
  id: over.id ?? "m",
  processId: "p",
  role: "USER",
  content: "",
  tags: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  archivedInMemoryId: null,
  tokens: 1,
  ...over,
});

describe("a turn's request", () => {
  const anthropicCall = [{ type: "thinking", thinking: "t", signature: "s" }, { type: "tool_use", id: "c1", name: "ls", input: {} }];
  const replay = [
    msg({ id: "1", role: "ASSISTANT", content: "", toolCalls: [{ id: "c1", name: "ls", arguments: "{}" }], native: { format: "anthropic", content: anthropicCall } }),
    msg({
      id: "2",
      role: "TOOL",
      toolCallId: "c1",
      content: "[tool result cleared: ls, 10 chars; full text: message 2]",
      cleared: { at: "x", toolName: "ls", chars: 10, tokens: 3 },
      native: { format: "anthropic", content: [{ type: "tool_result", tool_use_id: "c1", content: "0123456789", is_error: false }] },
    }),
    msg({ id: "3", role: "ASSISTANT", content: "", toolCalls: [{ id: "c2", name: "cat", arguments: '{"f":1}' }] }),
    msg({ id: "3.r0", role: "TOOL", toolCallId: "c2", content: "[no result was recorded for the cat call c2]", missingResult: true }),
  ];

  it("anthropic: native as stored, a cleared result's output replaced in its own block, a missing result answered, user first", () => {
    const r = replayRequest("anthropic", replay, block) as { system: unknown[]; messages: any[] };
    expect(r.system).toEqual([{ type: "text", text: block.staticBlock, cache_control: { type: "ephemeral" } }]);
    expect(r.messages[0].role).toBe("user");
    expect(r.messages[1]).toEqual({ role: "assistant", content: anthropicCall });
    expect(r.messages[2]).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: replay[1]!.content, is_error: false }] });
    expect(r.messages[3]).toEqual({ role: "assistant", content: [{ type: "tool_use", id: "c2", name: "cat", input: { f: 1 } }] });
    // The newest message carries the request's cache breakpoint (docs/turns.md, "Prompt caching").
    expect(r.messages[4]).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "c2", content: replay[3]!.content, cache_control: { type: "ephemeral" } }] });
  });

  it("gemini and openai-chat never carry another provider's thinking", () => {
    for (const format of ["gemini", "openai-chat", "openai-responses", "ai-sdk"] as const) {
      const text = JSON.stringify(replayRequest(format, replay, block));
      expect(text, format).not.toContain('"thinking"');
      expect(text, format).not.toContain('"signature"');
    }
  });

  it("openai-chat turns a result whose call is not in the list into text", () => {
    const r = replayRequest("openai-chat", [msg({ role: "TOOL", toolCallId: "gone", content: "out" })], { staticBlock: "", dynamicBlock: "" }) as { messages: any[] };
    expect(r.messages).toEqual([{ role: "user", content: "[tool result for call gone]\nout" }]);
  });
});

describe("a memory's provider block (splitBlock, joinBlock)", () => {
  /** A block of exactly `bytes` bytes of JSON, with a lone surrogate and an emoji. */
  const blockOf = (bytes: number): NativeContent => {
    const make = (pad: string) => ({ format: "openai-responses" as const, content: [{ type: "compaction", encrypted_content: pad, note: "\udc00 📜" }] });
    return make("e".repeat(bytes - Buffer.byteLength(JSON.stringify(make("")))));
  };

  it(`keeps a block of ${NATIVE_INLINE_MAX_BYTES} bytes inline and one byte more as a blob that joins back exactly`, () => {
    const at = blockOf(NATIVE_INLINE_MAX_BYTES);
    expect(blockBytes(at)).toBe(NATIVE_INLINE_MAX_BYTES);
    expect(splitBlock(at)).toEqual({ inline: at });
    const past = blockOf(NATIVE_INLINE_MAX_BYTES + 1);
    const split = splitBlock(past);
    if (!("blob" in split)) throw new Error("expected a blob");
    expect(split.blob).toEqual({ format: "openai-responses", sha256: sha256Hex(JSON.stringify(past.content)), bytes: split.part.bytes.byteLength });
    expect(split.part.sha256).toBe(split.blob.sha256);
    expect(JSON.stringify(joinBlock(split.blob, split.part.bytes))).toBe(JSON.stringify(past));
    // What the item stores names the blob, and reads back as the same reference.
    expect(blobOfStored(storedBlock(split.blob))).toEqual(split.blob);
    expect(blockFormat({ nativeBlob: split.blob })).toBe("openai-responses");
  });
});
