/**
 * The provider emulator's compaction endpoints through the real SDKs: Anthropic's on-demand
 * compaction (the keep-recent-turns form, its block, the role and tool-pair rules, kept thinking
 * after the swap, the Models API capability) and OpenAI's `/responses/compact` (the window, its
 * encrypted item readable only here, reasoning after it).
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { COMPACTION_BETA } from "../../tools/provider-emulator/anthropic-compaction.js";
import { startProviderEmulator, type ProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";

let emulator: ProviderEmulator;
let other: ProviderEmulator;
let claude: Anthropic;
let gpt: OpenAI;
beforeAll(async () => {
  [emulator, other] = await Promise.all([startProviderEmulator(), startProviderEmulator()]);
  claude = new Anthropic({ apiKey: "sk-ant-test", baseURL: emulator.url, maxRetries: 0 });
  gpt = new OpenAI({ apiKey: "sk-test", baseURL: `${emulator.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await Promise.all([emulator.close(), other.close()]);
});
beforeEach(() => {
  emulator.reset();
  other.reset();
});

const tools: Anthropic.Beta.BetaTool[] = [{ name: "read_log", input_schema: { type: "object", properties: { runner: { type: "string" } } } }];
const base = { model: "claude-fable-5-1", max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, system: "You keep CI green.", tools };
const betas = [COMPACTION_BETA];
type Msg = Anthropic.Beta.BetaMessageParam;

/** A thinking tool loop of `steps` calls: the history as the engine keeps it. */
let calls = 0;
async function toolLoop(history: Msg[], steps: number): Promise<Msg[]> {
  const out = [...history];
  for (let n = 0; n < steps; n++) {
    const id = `toolu_${++calls}`;
    emulator.anthropic.script({ thinking: `Step ${out.length}.`, toolUses: [{ id, name: "read_log", input: { runner: `ci-${n}` } }] });
    const answer = await claude.beta.messages.create({ ...base, messages: out, betas });
    out.push({ role: "assistant", content: answer.content as Anthropic.Beta.BetaContentBlockParam[] });
    out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: `log of ci-${n}: Node 18` }] });
  }
  return out;
}

async function failure(p: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const e = await p.then(() => null, (x: unknown) => x);
  expect(e).toBeInstanceOf(Anthropic.APIError);
  return e as InstanceType<typeof Anthropic.APIError>;
}

describe("provider emulator: Anthropic on-demand compaction through the SDK", () => {
  it("keeps recent turns: the block first, the kept turns unchanged, their thinking still verifies", async () => {
    const history = await toolLoop([{ role: "user", content: "Why does CI fail?" }], 3);
    // Cut after the second tool result: kept turns start with Claude's reply (a different role).
    const cut = 5;
    const compacted = await claude.beta.messages.create({ ...base, messages: history.slice(0, cut), compaction: { type: "summarize" }, betas });
    expect(compacted.stop_reason).toBe("compaction");
    const block = compacted.content[0] as Anthropic.Beta.BetaCompactionBlock;
    expect(block.type).toBe("compaction");
    expect(block.content).toContain("Why does CI fail?");
    expect(typeof block.signature).toBe("string");
    expect(compacted.usage.iterations?.[0]?.type).toBe("compaction");
    const next = await claude.beta.messages.create({ ...base, messages: [{ role: "assistant", content: [block] }, ...history.slice(cut)], betas });
    expect(next.content[0]?.type).toBe("thinking");
    const record = emulator.records.at(-1)!;
    expect(record.status).toBe(200);
    expect(record.expanded).toBe(true);
    // The kept assistant turn's thinking verified under the conversation the block stands for.
    expect(record.thinking!.verified.length).toBe(3);
    expect(emulator.anthropic.missingThinking()).toEqual([]);
  });

  it("chains: the next compaction sends the previous block with the newer turns", async () => {
    const history = await toolLoop([{ role: "user", content: "Why does CI fail?" }], 2);
    const first = await claude.beta.messages.create({ ...base, messages: history.slice(0, 3), compaction: { type: "summarize" }, betas });
    const swapped: Msg[] = [{ role: "assistant", content: first.content as Anthropic.Beta.BetaContentBlockParam[] }, ...history.slice(3)];
    const longer = await toolLoop(swapped, 2);
    emulator.anthropic.scriptCompaction("CI fails on Node 18 (second summary).");
    const second = await claude.beta.messages.create({ ...base, messages: longer.slice(0, 5), compaction: { type: "summarize" }, betas });
    const block = second.content[0] as Anthropic.Beta.BetaCompactionBlock;
    expect(block.content).toBe("CI fails on Node 18 (second summary).");
    const after = await claude.beta.messages.create({ ...base, messages: [{ role: "assistant", content: [block] }, ...longer.slice(5)], betas });
    expect(after.content[0]?.type).toBe("thinking");
    expect(emulator.records.at(-1)!.thinking!.verified.length).toBe(4);
  });

  it("the role rule: a first kept message of the last summarized message's role is merged into it, and later thinking no longer verifies", async () => {
    const start = await toolLoop([{ role: "user", content: "Why does CI fail?" }], 1);
    const history = await toolLoop([...start, { role: "user", content: "Also check ci-9." }], 1);
    // Summarizing through the extra user message keeps the kept turns valid...
    const whole = await claude.beta.messages.create({ ...base, messages: history.slice(0, 4), compaction: { type: "summarize" }, betas });
    const good = whole.content[0] as Anthropic.Beta.BetaContentBlockParam;
    await claude.beta.messages.create({ ...base, messages: [{ role: "assistant", content: [good] }, ...history.slice(4)], betas });
    expect(emulator.records.at(-1)!.status).toBe(200);
    // ...keeping it instead repeats the last summarized role: the API merges it, and the kept thinking's prefix changes.
    const early = await claude.beta.messages.create({ ...base, messages: history.slice(0, 3), compaction: { type: "summarize" }, betas });
    const block = early.content[0] as Anthropic.Beta.BetaContentBlockParam;
    const merged = await failure(claude.beta.messages.create({ ...base, messages: [{ role: "assistant", content: [block] }, ...history.slice(3)], betas }));
    expect(merged.status).toBe(400);
    expect(emulator.records.at(-1)!.rule).toBe("thinking_prefix_mismatch");
  });

  it("the tool-pair rule: a compaction request ending on unanswered calls, and a kept result without its call, are refused", async () => {
    const history = await toolLoop([{ role: "user", content: "Why does CI fail?" }], 2);
    const incomplete = await failure(claude.beta.messages.create({ ...base, messages: history.slice(0, 2), compaction: { type: "summarize" }, betas }));
    expect(incomplete.status).toBe(400);
    expect(incomplete.errorCode).toBe("compaction_incomplete_turn");
    const compacted = await claude.beta.messages.create({ ...base, messages: history.slice(0, 1), compaction: { type: "summarize" }, betas });
    const block = compacted.content[0] as Anthropic.Beta.BetaContentBlockParam;
    // Cut between a call and its result: the result is kept, its call was summarized.
    const split = await failure(claude.beta.messages.create({ ...base, messages: [{ role: "assistant", content: [block] }, ...history.slice(2)], betas }));
    expect(emulator.records.at(-1)!.rule).toBe("tool_result_without_call");
    expect(split.status).toBe(400);
  });

  it("refuses a changed block, a block from another emulator, two blocks, and a block not first", async () => {
    const history = await toolLoop([{ role: "user", content: "Why does CI fail?" }], 1);
    const compacted = await claude.beta.messages.create({ ...base, messages: history, compaction: { type: "summarize" }, betas });
    const block = compacted.content[0] as Anthropic.Beta.BetaCompactionBlock;
    const ask = { role: "user" as const, content: "Go on." };
    const changed = await failure(claude.beta.messages.create({ ...base, messages: [{ role: "assistant", content: [{ ...block, content: `${block.content}!` }] }, ask], betas }));
    expect(changed.errorCode).toBe("compaction_content_mismatch");
    const foreign = new Anthropic({ apiKey: "k", baseURL: other.url, maxRetries: 0 });
    const elsewhere = await failure(foreign.beta.messages.create({ ...base, messages: [{ role: "assistant", content: [block] }, ask], betas }));
    expect(elsewhere.errorCode).toBe("compaction_signature_invalid");
    const twice = await failure(claude.beta.messages.create({ ...base, messages: [{ role: "assistant", content: [block, block] }, ask], betas }));
    expect(twice.errorCode).toBe("compaction_block_ambiguous");
    const late = await failure(claude.beta.messages.create({ ...base, messages: [ask, { role: "assistant", content: [block] }, ask], betas }));
    expect(late.errorCode).toBe("compaction_block_misplaced");
  });

  it("needs the beta header and a model whose Models API entry supports it", async () => {
    const info = await claude.beta.models.retrieve("claude-fable-5-1");
    expect(info.capabilities?.compaction?.summarize.supported).toBe(true);
    const old = await claude.beta.models.retrieve("claude-3-5-haiku-latest");
    expect(old.capabilities?.compaction?.supported).toBe(false);
    const messages: Msg[] = [{ role: "user", content: "hi" }];
    const noBeta = await failure(claude.beta.messages.create({ ...base, messages, compaction: { type: "summarize" } }));
    expect(noBeta.status).toBe(400);
    const unsupported = await failure(claude.beta.messages.create({ ...base, model: "claude-3-5-haiku-latest", messages, compaction: { type: "summarize" }, betas }));
    expect(emulator.records.at(-1)!.rule).toBe("compaction_unsupported_model");
    expect(unsupported.status).toBe(400);
  });
});

describe("provider emulator: OpenAI /responses/compact through the SDK", () => {
  const include: OpenAI.Responses.ResponseIncludable[] = ["reasoning.encrypted_content"];
  const fn: OpenAI.Responses.FunctionTool = { type: "function", name: "read_log", parameters: { type: "object", properties: {} }, strict: false };
  const req = { model: "gpt-5.4", store: false, include, reasoning: { effort: "medium" as const }, tools: [fn] };

  async function loop(input: OpenAI.Responses.ResponseInputItem[], steps: number) {
    const out = [...input];
    for (let n = 0; n < steps; n++) {
      const callId = `call_${out.length}`;
      emulator.openai.script({ functionCalls: [{ callId, name: "read_log" }] });
      const r = await gpt.responses.create({ ...req, input: out });
      out.push(...(r.output as OpenAI.Responses.ResponseInputItem[]));
      out.push({ type: "function_call_output", call_id: callId, output: "Node 18" });
    }
    return out;
  }

  it("returns the user messages then one compaction item; reasoning after the window stays valid", async () => {
    const history = await loop([{ role: "user", content: "Why does CI fail?" }], 3);
    const cut = 7; // three items per step after the question: reasoning, call, output
    const compacted = await gpt.responses.compact({ model: "gpt-5.4", input: history.slice(0, cut) });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.map((i) => i.type)).toEqual(["message", "compaction"]);
    const item = compacted.output[1] as OpenAI.Responses.ResponseCompactionItem;
    expect(item.encrypted_content.length).toBeGreaterThan(0);
    expect(compacted.usage.input_tokens).toBeGreaterThan(0);
    const window = compacted.output as OpenAI.Responses.ResponseInputItem[];
    await gpt.responses.create({ ...req, input: [...window, ...history.slice(cut)] });
    const record = emulator.records.at(-1)!;
    expect(record.expanded).toBe(true);
    expect(record.reasoning!.dropped).toEqual([]);
    // The compacted items are read in the window's place: all three reasoning items keep their prefix.
    expect(record.reasoning!.kept.length).toBe(3);
  });

  it("a window sent altered loses the kept reasoning; a foreign compaction item is invalid_encrypted_content", async () => {
    const history = await loop([{ role: "user", content: "Why does CI fail?" }], 2);
    const compacted = await gpt.responses.compact({ model: "gpt-5.4", input: history.slice(0, 4) });
    const [, item] = compacted.output as OpenAI.Responses.ResponseInputItem[];
    await gpt.responses.create({ ...req, input: [{ role: "user", content: "Something else." }, item!, ...history.slice(4)] });
    expect(emulator.records.at(-1)!.reasoning!.dropped.length).toBe(1);
    const foreign = new OpenAI({ apiKey: "k", baseURL: `${other.url}/v1`, maxRetries: 0 });
    const e = await foreign.responses.create({ ...req, input: [...(compacted.output as OpenAI.Responses.ResponseInputItem[]), ...history.slice(4)] }).then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as InstanceType<typeof OpenAI.APIError>).code).toBe("invalid_encrypted_content");
  });
});

describe("provider emulator: a block under other system or tools", () => {
  it("kept thinking is valid only under the compaction request's system and tools", async () => {
    const history = await toolLoop([{ role: "user", content: "Why does CI fail?" }], 2);
    const { system: _system, tools: _tools, thinking: _thinking, ...bare } = base;
    // The compaction request without the conversation's system and tools...
    const compacted = await claude.beta.messages.create({ ...bare, messages: history.slice(0, 3), compaction: { type: "summarize" }, betas });
    const block = compacted.content[0] as Anthropic.Beta.BetaContentBlockParam;
    const kept: Msg[] = [{ role: "assistant", content: [block] }, ...history.slice(3)];
    // ...then the conversation goes on with them: the kept thinking is bound to another conversation.
    const e = await failure(claude.beta.messages.create({ ...base, messages: kept, betas }));
    expect(e.status).toBe(400);
    expect(emulator.records.at(-1)!.rule).toBe("thinking_prefix_mismatch");
  });
});
