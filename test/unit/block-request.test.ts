/**
 * The turn's `request` when the replayed summary holds a provider's block (docs/turns.md, "The
 * provider's block"): which turns get the block, and where it goes in each format.
 */
import { describe, expect, it } from "vitest";
import type { Memory, Message, Role } from "../../core/domain/model.js";
import { modelFamily } from "../../core/domain/model-windows.js";
import { blockReplay, blockRequest } from "../../core/domain/native/block-request.js";
import { CONTINUATION_TEXT } from "../../core/domain/native/replay-request.js";
import { makeMemory } from "../support/fixtures.js";

let n = 0;
const msg = (role: Role, native?: Message["native"]): Message => ({
  id: `m${++n}`, processId: "p", role, content: `${role} ${n}`, tags: [], createdAt: "2026-01-01T00:00:00.000Z", archivedInMemoryId: null, tokens: 3, ...(native ? { native } : {}),
});
const compaction = [{ type: "compaction", content: "earlier", signature: "sig" }];
const window = [{ type: "message", role: "user", content: [{ type: "input_text", text: "task" }] }, { type: "compaction", id: "cmp_1", encrypted_content: "enc" }];
const fold = (native: Memory["native"], model: string, over: Partial<NonNullable<Memory["metadata"]["providerFold"]>> = {}) =>
  makeMemory("p", {
    native,
    metadata: { ...makeMemory("p").metadata, provider: "x-compaction", model, providerFold: { format: native!.format, block: true, ...over } },
  });

describe("modelFamily", () => {
  it("names the vendor family at a name boundary, router-style names included", () => {
    expect(modelFamily("claude-fable-5-1")).toBe("claude");
    expect(modelFamily("anthropic/claude-sonnet-4-5")).toBe("claude");
    expect(modelFamily("gpt-5")).toBe("openai");
    expect(modelFamily("o3-mini")).toBe("openai");
    expect(modelFamily("gemini-3-pro")).toBe("gemini");
    expect(modelFamily("gptx")).toBeUndefined();
    expect(modelFamily("llama-3")).toBeUndefined();
    expect(modelFamily(undefined)).toBeUndefined();
  });
});

describe("blockReplay", () => {
  const head = fold({ format: "anthropic", content: compaction }, "claude-fable-5-1");
  it("sends the block to the format and model family that wrote it", () => {
    expect(blockReplay(head, "anthropic", "claude-opus-5-5")).toEqual({ memoryId: head.id, format: "anthropic", sent: true });
  });
  it("the readable chain for another format, another family, an unnamed model, or a refused block", () => {
    expect(blockReplay(head, "openai-responses", "claude-fable-5-1")).toMatchObject({ sent: false, reason: "format" });
    expect(blockReplay(head, "anthropic", "gpt-5")).toMatchObject({ sent: false, reason: "model" });
    expect(blockReplay(head, "anthropic", undefined)).toMatchObject({ sent: false, reason: "model" });
    const refused = fold({ format: "anthropic", content: compaction }, "claude-fable-5-1", { refused: { at: "2026-01-01T00:00:00.000Z" } });
    expect(blockReplay(refused, "anthropic", "claude-fable-5-1")).toMatchObject({ sent: false, reason: "refused" });
  });
  it("says nothing without a format, without a block, or for a summary the service wrote", () => {
    expect(blockReplay(head, undefined, "claude-fable-5-1")).toBeUndefined();
    expect(blockReplay(makeMemory("p"), "anthropic", "claude-fable-5-1")).toBeUndefined();
    expect(blockReplay(null, "anthropic", "claude-fable-5-1")).toBeUndefined();
    const noBlock = fold({ format: "anthropic", content: compaction }, "claude-fable-5-1", { block: false });
    expect(blockReplay(noBlock, "anthropic", "claude-fable-5-1")).toBeUndefined();
  });
});

describe("blockRequest", () => {
  const thinking = { type: "thinking", thinking: "why", signature: "s1" };
  it("Anthropic: the block as the first message, the kept turns after it as stored (thinking kept), nothing in system", () => {
    const pinned = msg("USER", { format: "anthropic", content: [{ type: "text", text: "task" }] });
    const kept = msg("ASSISTANT", { format: "anthropic", content: [thinking, { type: "tool_use", id: "t1", name: "read", input: {} }] });
    const result = msg("TOOL", { format: "anthropic", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] });
    const head = fold({ format: "anthropic", content: compaction }, "claude-fable-5-1", { covered: [pinned.id] });
    const request = blockRequest("anthropic", [pinned, kept, result], head, { stripReasoningBefore: "2030-01-01T00:00:00.000Z" }) as { system: unknown[]; messages: Array<{ role: string; content: unknown[] }> };
    expect(request.system).toEqual([]);
    expect(request.messages[0]).toEqual({ role: "assistant", content: compaction });
    // The covered message is left out, no stand-in user turn, and the kept thinking stays.
    expect(request.messages.map((m) => m.role)).toEqual(["assistant", "assistant", "user"]);
    expect(request.messages[1]!.content[0]).toEqual(thinking);
    expect(JSON.stringify(request)).not.toContain(CONTINUATION_TEXT);
  });
  it("OpenAI Responses: the window as returned, in order, then the kept items", () => {
    const reasoning = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "e1" };
    const kept = msg("ASSISTANT", { format: "openai-responses", content: [reasoning, { type: "function_call", call_id: "c1", name: "run", arguments: "{}" }] });
    const head = fold({ format: "openai-responses", content: window }, "gpt-5");
    const request = blockRequest("openai-responses", [kept], head, { cacheKey: "vm-1", stripReasoningBefore: "2030-01-01T00:00:00.000Z" }) as { input: unknown[]; prompt_cache_key: string };
    expect(request.input).toEqual([...window, reasoning, { type: "function_call", call_id: "c1", name: "run", arguments: "{}" }]);
    expect(request.prompt_cache_key).toBe("vm-1");
  });
});
