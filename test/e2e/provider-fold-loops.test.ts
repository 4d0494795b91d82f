/**
 * Long agent loops with provider folds through the service against the provider emulator: 300
 * tool steps on Claude with thinking, a provider fold every 50 steps (SUMMARIZER=anthropic-compaction),
 * every step sending the turn's own `request` (after a fold: the memory's block, then the kept
 * turns); then the same kind of session switched halfway to the OpenAI Responses API, whose
 * turns carry the readable chain. Every request must be accepted, no kept thinking dropped, and
 * the request may change only once per fold.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { AppendMessageInput } from "../../client/index.js";
import { startProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { serviceBeside } from "../support/service-beside.js";

const STEPS = Number(process.env.PROVIDER_LOOP_STEPS ?? 300);
const FOLD_EVERY = 50;
const MODEL = "claude-fable-5-1";
const stack = serviceBeside(() => startProviderEmulator(), (url) => ({ SUMMARIZER: "anthropic-compaction", ANTHROPIC_BASE_URL: url, SUMMARIZER_MODEL: MODEL }));

const model = { name: MODEL, contextWindow: 1_000_000 };
const system = "You read code.";
const tools: Anthropic.Tool[] = [{ name: "read_file", input_schema: { type: "object", properties: { path: { type: "string" } } } }];
const engine = { model: MODEL, max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, tools };

type AnthropicRequest = { system: Anthropic.TextBlockParam[]; messages: Anthropic.MessageParam[] };
const strip = (v: unknown) => JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x));

/** Tracks the service's requests: how often one did not start with the one before. */
function prefixWatch() {
  let previous: unknown[] | null = null;
  let changes = 0;
  return {
    /** `items`: what the engine sends besides its own system and tools, in order. */
    see(items: unknown[]) {
      if (previous && previous.some((x, i) => strip(x) !== strip(items[i]))) changes++;
      previous = items;
    },
    get changes() {
      return changes;
    },
  };
}

/**
 * One tool step of the Claude engine on the service's own `request`: the turn appends the previous
 * step's tool result (or nothing), the engine sends what the turn answered, and appends its reply.
 */
async function claudeStep(pid: string, anthropic: Anthropic, step: number, message: AppendMessageInput | undefined, watch: ReturnType<typeof prefixWatch>) {
  const client = stack.memory;
  const turn = await client.beginTurn(pid, { ...(message ? { message } : {}), model, format: "anthropic" });
  const request = turn.request as unknown as AnthropicRequest;
  watch.see([...request.system, ...request.messages]);
  stack.provider.anthropic.script({ thinking: `Step ${step}: read the next file.`, toolUses: [{ id: `toolu_${pid}_${step}`, name: "read_file", input: { path: `src/f${step}.ts` } }] });
  const reply = await anthropic.messages.create({ ...engine, system: [{ type: "text", text: system }, ...request.system], messages: request.messages });
  await client.appendMessage(pid, { native: { format: "anthropic", content: reply.content } });
  const result: Anthropic.ContentBlockParam[] = [{ type: "tool_result", tool_use_id: `toolu_${pid}_${step}`, content: `src/f${step}.ts exports parse${step}()` }];
  return { turn, next: { role: "TOOL", native: { format: "anthropic", content: result } } satisfies AppendMessageInput };
}

async function start(pid: string) {
  const client = stack.memory;
  await client.upsertProcess(pid, { projectId: "loops", conversation: { system, tools } });
  await client.appendMessage(pid, { role: "USER", native: { format: "anthropic", content: [{ type: "text", text: "Read every file of src/ and report." }] } });
}

describe(`a ${STEPS}-step loop with provider folds`, () => {
  it("Claude with thinking: a provider fold every 50 steps, 0 errors, the kept turns' thinking accepted after every fold", async () => {
    stack.provider.reset();
    const pid = "loop-provider-anthropic";
    const anthropic = new Anthropic({ apiKey: "k", baseURL: stack.provider.url, maxRetries: 0 });
    await start(pid);
    let folds = 0;
    const watch = prefixWatch();
    let next: AppendMessageInput | undefined;
    const afterFold: Array<{ sent?: boolean; reason?: string }> = [];
    for (let step = 1; step <= STEPS; step++) {
      const { turn, next: result } = await claudeStep(pid, anthropic, step, next, watch);
      if (step > 1 && step % FOLD_EVERY === 1) afterFold.push({ sent: turn.providerBlock?.sent, reason: turn.prefix.reason });
      next = result;
      if (step % FOLD_EVERY === 0) {
        // The result of this step's call is appended first: the fold never splits a call from its result.
        await stack.memory.appendMessage(pid, next);
        next = undefined;
        const folded = await stack.memory.compact(pid, { model, force: "HARD" });
        expect(folded.fold, JSON.stringify(folded)).toMatchObject({ kind: "provider", block: true });
        folds++;
      }
    }
    // Every turn after a fold led with the new block; the request changed once per fold, no more.
    expect(afterFold).toEqual(Array.from({ length: afterFold.length }, () => ({ sent: true, reason: "fold" })));
    expect(watch.changes).toBe(afterFold.length);
    const requests = stack.provider.records.filter((r) => !r.compaction);
    expect(stack.provider.records.filter((r) => r.status !== 200)).toEqual([]);
    expect(folds).toBeGreaterThanOrEqual(5);
    expect(stack.provider.records.filter((r) => r.compaction)).toHaveLength(folds);
    // After each fold the next request led with the block and verified every kept thinking block.
    const afterFolds = requests.filter((r) => r.expanded);
    expect(afterFolds.length).toBeGreaterThan(0);
    expect(requests.flatMap((r) => r.thinking!.dropped)).toEqual([]);
    expect(requests.at(-1)!.thinking!.verified).toHaveLength(STEPS - 1);
    expect(stack.provider.anthropic.missingThinking()).toEqual([]);
  }, 600_000);

  it("switched to the Responses API halfway: the session continues from the readable chain with 0 errors", async () => {
    stack.provider.reset();
    const pid = "loop-provider-switch";
    const anthropic = new Anthropic({ apiKey: "k", baseURL: stack.provider.url, maxRetries: 0 });
    const openai = new OpenAI({ apiKey: "k", baseURL: `${stack.provider.url}/v1`, maxRetries: 0 });
    await start(pid);
    const half = STEPS / 2;
    const watch = prefixWatch();
    let pending: AppendMessageInput | undefined;
    for (let step = 1; step <= half; step++) {
      pending = (await claudeStep(pid, anthropic, step, pending, watch)).next;
      if (step % FOLD_EVERY === 0) {
        await stack.memory.appendMessage(pid, pending);
        pending = undefined;
        await stack.memory.compact(pid, { model, force: "HARD" });
      }
    }
    const client = stack.memory;
    let next: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Go on with the Responses API." }];
    let role: "USER" | "TOOL" = "USER";
    for (let step = half + 1; step <= STEPS; step++) {
      const turn = await client.beginTurn(pid, { message: { role, native: { format: "openai-responses", content: next } }, model: { name: "gpt-5", contextWindow: 1_000_000 }, format: "openai-responses" });
      // The summary holds Anthropic's block: another provider gets the readable chain.
      if (turn.providerBlock) expect(turn.providerBlock).toMatchObject({ format: "anthropic", sent: false, reason: "format" });
      if (step === half + 1) expect(turn.providerBlock).toBeDefined();
      const { input } = turn.request as unknown as { input: OpenAI.Responses.ResponseInputItem[] };
      stack.provider.openai.script({ reasoning: `Step ${step}.`, functionCalls: [{ callId: `call_${step}`, name: "read_file", arguments: { path: `src/f${step}.ts` } }] });
      const response = await openai.responses.create({
        model: "gpt-5",
        reasoning: { effort: "medium" },
        include: ["reasoning.encrypted_content"],
        store: false,
        tools: [{ type: "function", name: "read_file", parameters: { type: "object", properties: {} }, strict: false }],
        input,
      });
      await client.appendMessage(pid, { native: { format: "openai-responses", content: response.output } });
      next = [{ type: "function_call_output", call_id: `call_${step}`, output: `src/f${step}.ts exports parse${step}()` }];
      role = "TOOL";
      if (step % FOLD_EVERY === 0) await client.compact(pid, { model, force: "HARD" });
    }
    expect(stack.provider.records.filter((r) => r.status !== 200)).toEqual([]);
    expect(stack.provider.records.filter((r) => r.provider === "openai-responses")).toHaveLength(half);
    // The readable chain changes the prefix at each fold: the Responses API re-reasons (no error).
    expect(stack.provider.records.filter((r) => r.provider === "openai-responses" && r.status === 200)).toHaveLength(half);
  }, 600_000);
});
