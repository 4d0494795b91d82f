/**
 * The pure parts of provider folds: where an Anthropic fold may cut, what each provider is sent,
 * which OpenAI models compact, the process's conversation bounds, and the answer's fold report.
 */
import { describe, expect, it } from "vitest";
import { Conversation, MAX_CONVERSATION_BYTES } from "../../core/domain/fields.js";
import { foldReport } from "../../core/domain/fold/lifecycle.js";
import type { Message, Role } from "../../core/domain/model.js";
import { supportsResponsesCompaction } from "../../core/domain/model-windows.js";
import { anthropicCut, anthropicFoldMessages, PRIOR_SUMMARY_LEAD, responsesFoldItems } from "../../core/domain/native/provider-fold.js";
import { makeMemory } from "../support/fixtures.js";

let n = 0;
const msg = (role: Role, over: Partial<Message> = {}): Message => ({
  id: `m${++n}`, processId: "p", role, content: `${role} ${n}`, tags: [], createdAt: "2026-01-01T00:00:00.000Z", archivedInMemoryId: null, tokens: 3, ...over,
});
const call = (id: string) => msg("ASSISTANT", { toolCalls: [{ id, name: "read", arguments: "{}" }] });
const result = (id: string) => msg("TOOL", { toolCallId: id });

describe("anthropicCut", () => {
  it("folds everything when the first kept message has the other role and no call is split", () => {
    const fold = [msg("USER"), call("a"), result("a")];
    expect(anthropicCut(fold, call("b"))).toEqual(fold);
  });

  it("moves back before a tool group when the first kept message repeats the last folded role", () => {
    const fold = [msg("USER"), call("a"), result("a"), call("b"), result("b")];
    // A user turn after the results: the cut moves before `call b`, whose result must stay with it.
    expect(anthropicCut(fold, msg("USER"))).toEqual(fold.slice(0, 3));
  });

  it("never leaves a call folded whose result is kept", () => {
    const fold = [msg("USER"), call("a")];
    expect(anthropicCut(fold, result("a"), new Set(["a"]))).toEqual(fold.slice(0, 1));
    // Nothing qualifies: the only cut left would split the call from its kept result.
    expect(anthropicCut([call("c")], result("c"), new Set(["c"]))).toEqual([]);
  });
});

describe("what a provider fold sends", () => {
  const native = { format: "anthropic" as const, content: [{ type: "text", text: "hello" }] };
  const source = { id: "s1", role: "USER" as const, content: "hello", createdAt: "2026-01-01T00:00:00.000Z", native };

  it("Anthropic: the previous block's message first, the turns as stored after it", () => {
    const block = { format: "anthropic" as const, content: [{ type: "compaction", content: "earlier", signature: "sig" }] };
    const assistant = { id: "s2", role: "ASSISTANT" as const, content: "hi", createdAt: source.createdAt };
    const messages = anthropicFoldMessages({ priorSummary: "earlier", messages: [assistant, source], providerFold: { priorNative: block } });
    expect(messages[0]).toEqual({ role: "assistant", content: block.content });
    // No stand-in user turn between the block and the kept assistant turn.
    expect(messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "hi" }] });
    expect(messages[2]).toEqual({ role: "user", content: native.content });
  });

  it("Anthropic: without a block, the prior summary as the first user turn; SYSTEM notes as user text", () => {
    const system = { id: "s3", role: "SYSTEM" as const, content: "range folded", createdAt: source.createdAt };
    const messages = anthropicFoldMessages({ priorSummary: "earlier", messages: [system] });
    expect(JSON.stringify(messages)).toContain(PRIOR_SUMMARY_LEAD);
    expect(JSON.stringify(messages)).toContain("[system] range folded");
  });

  it("OpenAI: the previous window as returned, then the items", () => {
    const window = { format: "openai-responses" as const, content: [{ type: "message", role: "user", content: [{ type: "input_text", text: "q" }] }, { type: "compaction", encrypted_content: "x" }] };
    const input = responsesFoldItems({ priorSummary: "s", messages: [{ ...source, native: { format: "openai-responses", content: [{ role: "user", content: "more" }] } }], providerFold: { priorNative: window } });
    expect(input).toEqual([...window.content, { role: "user", content: "more" }]);
  });
});

describe("supportsResponsesCompaction", () => {
  it("takes the models of the reference's list and their dated snapshots only", () => {
    expect(supportsResponsesCompaction("gpt-5")).toBe(true);
    expect(supportsResponsesCompaction("openai/gpt-5.4")).toBe(true);
    expect(supportsResponsesCompaction("gpt-4.1-mini-2025-04-14")).toBe(true);
    expect(supportsResponsesCompaction("gpt-5-turbo-x")).toBe(false);
    expect(supportsResponsesCompaction("llama3:8b")).toBe(false);
  });
});

describe("a process's conversation", () => {
  const sized = (bytes: number) => {
    const shell = { system: "" };
    return { system: "x".repeat(bytes - JSON.stringify(shell).length) };
  };
  it("is accepted at 64 KiB of JSON and refused one byte past it", () => {
    expect(JSON.stringify(sized(MAX_CONVERSATION_BYTES)).length).toBe(MAX_CONVERSATION_BYTES);
    expect(Conversation.safeParse(sized(MAX_CONVERSATION_BYTES)).success).toBe(true);
    expect(Conversation.safeParse(sized(MAX_CONVERSATION_BYTES + 1)).success).toBe(false);
    expect(Conversation.safeParse({ system: "s", history: [] }).success).toBe(false);
  });
});

describe("foldReport", () => {
  it("says who wrote the fold, whether a provider did and its block came, its tokens and ms", () => {
    const service = makeMemory("p", { metadata: { compactedMessages: 3, provider: "openai", model: "m", usage: { inputTokens: 10, outputTokens: 4 }, summarizerMs: 12 } });
    expect(foldReport(service)).toEqual({ by: "openai", kind: "service", block: false, inputTokens: 10, outputTokens: 4, ms: 12 });
    const provider = makeMemory("p", {
      native: { format: "anthropic", content: [{ type: "compaction" }] },
      metadata: { compactedMessages: 3, provider: "anthropic-compaction", model: "m", providerFold: { format: "anthropic", block: true } },
    });
    expect(foldReport(provider)).toMatchObject({ by: "anthropic-compaction", kind: "provider", block: true });
  });
});
