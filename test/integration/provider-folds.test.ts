/**
 * The provider folds (`anthropic-compaction`, `openai-compaction`) through the real SDKs against
 * the provider emulator: the fold sends the folded turns as stored, the block comes back verbatim
 * with a readable summary, the engine's next request with the block first keeps the kept turns'
 * thinking and reasoning valid, the chain sends the previous block, and a model or a block the
 * provider refuses leaves the readable summary alone, saying why.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicCompactionSummarizer } from "../../core/adapters/llm/anthropic-compaction.js";
import { createOpenAICompactionSummarizer } from "../../core/adapters/llm/openai-compaction.js";
import type { Role } from "../../core/domain/model.js";
import type { SummarySourceMessage } from "../../core/ports/summarizer.js";
import { startProviderEmulator, type ProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";

let emulator: ProviderEmulator;
let other: ProviderEmulator;
beforeAll(async () => {
  [emulator, other] = await Promise.all([startProviderEmulator(), startProviderEmulator()]);
});
afterAll(async () => {
  await Promise.all([emulator.close(), other.close()]);
});
beforeEach(() => {
  emulator.reset();
  other.reset();
});

let ids = 0;
const source = (role: Role, native: SummarySourceMessage["native"], content = ""): SummarySourceMessage => ({
  id: `m${++ids}`,
  role,
  content,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, ids)).toISOString(),
  ...(native ? { native } : {}),
});

describe("anthropic-compaction", () => {
  const system = "You keep CI green.";
  const tools = [{ name: "read_log", input_schema: { type: "object" as const, properties: { runner: { type: "string" } } } }];
  const base = { model: "claude-fable-5-1", max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, system, tools };
  const claude = () => new Anthropic({ apiKey: "k", baseURL: emulator.url, maxRetries: 0 });
  type Msg = Anthropic.MessageParam;

  /** `steps` tool calls by the engine; returns its history. */
  async function engineLoop(history: Msg[], steps: number): Promise<Msg[]> {
    const out = [...history];
    for (let n = 0; n < steps; n++) {
      const id = `toolu_${++ids}`;
      emulator.anthropic.script({ thinking: `Step ${id}.`, toolUses: [{ id, name: "read_log", input: { runner: `ci-${n}` } }] });
      const answer = await claude().beta.messages.create({ ...base, messages: out as Anthropic.Beta.BetaMessageParam[], betas: ["compact-2026-09-04"] });
      out.push({ role: "assistant", content: answer.content as Anthropic.ContentBlockParam[] });
      out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: `ci-${n}: Node 18` }] });
    }
    return out;
  }
  const asSources = (history: Msg[]) =>
    history.map((m) => {
      const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
      const role: Role = m.role === "assistant" ? "ASSISTANT" : content.every((b) => b.type === "tool_result") ? "TOOL" : "USER";
      return source(role, { format: "anthropic", content }, "text");
    });

  it("folds the range before the cut into a signed block; the kept turns' thinking stays valid after it, and the chain sends it again", async () => {
    const summarizer = createAnthropicCompactionSummarizer({ apiKey: "k", baseURL: emulator.url, model: "claude-fable-5-1" });
    expect(summarizer.foldFormat).toBe("anthropic");
    const history = await engineLoop([{ role: "user", content: "Why does CI fail on ci-0?" }], 3);
    const providerFold = { system, tools };
    const first = await summarizer.summarize({ priorSummary: null, messages: asSources(history.slice(0, 3)), providerFold });
    if (!first.ok) throw new Error(first.failure.message);
    expect(first.summary).toContain("Why does CI fail on ci-0?");
    expect(first.native?.format).toBe("anthropic");
    const block = first.native!.content as Anthropic.Beta.BetaContentBlockParam[];
    expect(block[0]).toMatchObject({ type: "compaction", content: first.summary });
    expect(first.usage?.inputTokens).toBeGreaterThan(0);
    // The engine continues with the block first and the kept turns as they were.
    const continued = await engineLoop([{ role: "assistant", content: block as Anthropic.ContentBlockParam[] }, ...history.slice(3)], 2);
    expect(emulator.records.at(-1)!.status).toBe(200);
    expect(emulator.anthropic.missingThinking()).toEqual([]);
    // The next fold sends the previous block with the newer turns.
    const second = await summarizer.summarize({ priorSummary: first.summary, messages: asSources(continued.slice(1, 5)), providerFold: { ...providerFold, priorNative: first.native! } });
    if (!second.ok) throw new Error(second.failure.message);
    const compactionRequest = emulator.records.at(-1)!;
    expect(compactionRequest.compaction).toBe(true);
    expect(compactionRequest.request.body.messages[0].content[0].signature).toBe((block[0] as { signature: string }).signature);
    await engineLoop([{ role: "assistant", content: second.native!.content as Anthropic.ContentBlockParam[] }, ...continued.slice(5)], 1);
    const last = emulator.records.at(-1)!;
    expect([last.status, last.thinking!.dropped.length]).toEqual([200, 0]);
    expect(last.thinking!.verified.length).toBe(5);
  });

  it("a model the Models API reports without compaction is summarized readable alone, and says so", async () => {
    const summarizer = createAnthropicCompactionSummarizer({ apiKey: "k", baseURL: emulator.url, model: "claude-3-5-haiku-latest" });
    emulator.anthropic.script({ thinking: false, text: "<summary>\nCI fails on Node 18.\n</summary>" });
    const out = await summarizer.summarize({ priorSummary: null, messages: [source("USER", undefined, "CI fails on Node 18.")] });
    if (!out.ok) throw new Error(out.failure.message);
    expect(out.native).toBeUndefined();
    expect(out.nativeNote).toMatch(/^model_unsupported/);
    expect(emulator.records.some((r) => r.compaction)).toBe(false);
  });

  it("a previous block the provider cannot read starts the chain again from the readable summary", async () => {
    const summarizer = createAnthropicCompactionSummarizer({ apiKey: "k", baseURL: emulator.url, model: "claude-fable-5-1" });
    const foreign = createAnthropicCompactionSummarizer({ apiKey: "k", baseURL: other.url, model: "claude-fable-5-1" });
    const first = await foreign.summarize({ priorSummary: null, messages: [source("USER", undefined, "hello")] });
    if (!first.ok) throw new Error(first.failure.message);
    const out = await summarizer.summarize({ priorSummary: first.summary, messages: [source("USER", undefined, "more")], providerFold: { priorNative: first.native! } });
    if (!out.ok) throw new Error(out.failure.message);
    const attempts = emulator.records.filter((r) => r.request.path === "/v1/messages");
    expect(attempts.map((r) => r.status)).toEqual([400, 200]);
    expect(attempts[1]!.request.body.messages[0].content[0].text).toContain(first.summary);
    expect(out.native?.format).toBe("anthropic");
  });
});

describe("openai-compaction", () => {
  const fn = { type: "function" as const, name: "read_log", parameters: { type: "object", properties: {} }, strict: false };
  const include: OpenAI.Responses.ResponseIncludable[] = ["reasoning.encrypted_content"];
  const req = { model: "gpt-5", store: false, include, reasoning: { effort: "medium" as const }, tools: [fn] };
  const gpt = () => new OpenAI({ apiKey: "k", baseURL: `${emulator.url}/v1`, maxRetries: 0 });
  type Item = OpenAI.Responses.ResponseInputItem;

  async function engineLoop(input: Item[], steps: number): Promise<Item[]> {
    const out = [...input];
    for (let n = 0; n < steps; n++) {
      const callId = `call_${++ids}`;
      emulator.openai.script({ functionCalls: [{ callId, name: "read_log" }] });
      const r = await gpt().responses.create({ ...req, input: out });
      out.push(...(r.output as Item[]));
      out.push({ type: "function_call_output", call_id: callId, output: `ci-${n}: Node 18` });
    }
    return out;
  }
  /** One service message per user turn, model response and tool output. */
  function asSources(items: Item[]): SummarySourceMessage[] {
    const out: SummarySourceMessage[] = [];
    for (const item of items) {
      const it = item as { type?: string; role?: string };
      if (it.type === "function_call_output") out.push(source("TOOL", { format: "openai-responses", content: [item] }, "Node 18"));
      else if (it.role === "user") out.push(source("USER", { format: "openai-responses", content: [item] }, "Why does CI fail?"));
      else {
        const prev = out[out.length - 1];
        if (prev?.role === "ASSISTANT") prev.native!.content.push(item);
        else out.push(source("ASSISTANT", { format: "openai-responses", content: [item] }, "reading the log"));
      }
    }
    return out;
  }

  it("compacts the range into a window beside a readable summary; reasoning after the window is kept", async () => {
    const summarizer = createOpenAICompactionSummarizer({ apiKey: "k", baseURL: `${emulator.url}/v1`, model: "gpt-5" });
    const history = await engineLoop([{ role: "user", content: "Why does CI fail?" }], 3);
    const cut = 7;
    const out = await summarizer.summarize({ priorSummary: null, messages: asSources(history.slice(0, cut)) });
    if (!out.ok) throw new Error(out.failure.message);
    expect(out.summary).toContain("Why does CI fail?");
    const window = out.native!.content as Item[];
    expect(window.map((i) => i.type)).toEqual(["message", "compaction"]);
    // Billed: the readable summary's call and the compaction's.
    const paths = emulator.requests.map((r) => r.path);
    expect(paths.filter((p) => p === "/v1/chat/completions" || p === "/v1/responses/compact").length).toBe(2);
    await engineLoop([...window, ...history.slice(cut)], 1);
    const last = emulator.records.at(-1)!;
    expect(last.expanded).toBe(true);
    expect(last.reasoning!.dropped).toEqual([]);
    expect(emulator.openai.reasoningCounts().dropped).toBe(0);
  });

  it("commits the readable summary alone when the compaction is refused or the model is not in the table", async () => {
    const foreign = createOpenAICompactionSummarizer({ apiKey: "k", baseURL: `${other.url}/v1`, model: "gpt-5" });
    const theirs = await foreign.summarize({ priorSummary: null, messages: [source("USER", { format: "openai-responses", content: [{ role: "user", content: "hi" }] }, "hi")] });
    if (!theirs.ok) throw new Error(theirs.failure.message);
    const summarizer = createOpenAICompactionSummarizer({ apiKey: "k", baseURL: `${emulator.url}/v1`, model: "gpt-5" });
    const out = await summarizer.summarize({ priorSummary: theirs.summary, messages: [source("USER", undefined, "more")], providerFold: { priorNative: theirs.native! } });
    if (!out.ok) throw new Error(out.failure.message);
    expect(out.native).toBeUndefined();
    expect(out.nativeNote).toMatch(/^provider_rejected/);
    const local = createOpenAICompactionSummarizer({ apiKey: "k", baseURL: `${emulator.url}/v1`, model: "llama3:8b" });
    const plain = await local.summarize({ priorSummary: null, messages: [source("USER", undefined, "hello")] });
    expect(plain.ok && plain.nativeNote?.startsWith("model_unsupported")).toBe(true);
  });
});
