/**
 * The `openai-compaction` provider fold through the service against the provider emulator: the
 * memory holds the window `/responses/compact` returned beside a readable summary the service
 * wrote from the same range, and the engine continuing from the turn's `request` (the window as
 * returned, then the kept items) keeps every later reasoning item.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { startProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { serviceBeside } from "../support/service-beside.js";

const stack = serviceBeside(() => startProviderEmulator(), (url) => ({ SUMMARIZER: "openai-compaction", OPENAI_BASE_URL: `${url}/v1`, SUMMARIZER_MODEL: "gpt-5" }));

type Item = OpenAI.Responses.ResponseInputItem;
const request = {
  model: "gpt-5",
  store: false,
  include: ["reasoning.encrypted_content" as const],
  reasoning: { effort: "medium" as const },
  tools: [{ type: "function" as const, name: "run_tests", parameters: { type: "object", properties: {} }, strict: false }],
};

describe("openai-compaction through the service", () => {
  it("keeps the window verbatim beside a readable summary; reasoning after the window is kept", async () => {
    const client = stack.memory;
    const openai = new OpenAI({ apiKey: "k", baseURL: `${stack.provider.url}/v1`, maxRetries: 0 });
    const pid = "provider-fold-openai";
    await client.upsertProcess(pid, { projectId: "agents" });
    const task: Item = { role: "user", content: "Run every test file." };
    await client.appendMessage(pid, { native: { format: "openai-responses", content: [task] } });
    let history: Item[] = [task];
    for (let i = 0; i < 8; i++) {
      stack.provider.openai.script({ reasoning: `Step ${i}.`, functionCalls: [{ callId: `call_${i}`, name: "run_tests", arguments: { file: `t${i}` } }] });
      const r = await openai.responses.create({ ...request, input: history });
      await client.appendMessage(pid, { native: { format: "openai-responses", content: r.output } });
      const out: Item = { type: "function_call_output", call_id: `call_${i}`, output: `t${i}: 12 passed` };
      await client.appendMessage(pid, { native: { format: "openai-responses", content: [out] } });
      history = [...history, ...(r.output as Item[]), out];
    }

    const folded = await client.compact(pid, { model: { name: "gpt-5", contextWindow: 1_000_000 }, force: "HARD" });
    expect(folded).toMatchObject({ compacted: true, fold: { by: "openai-compaction", kind: "provider", block: true } });
    const summary = (await client.listMemories(pid)).items.find((m) => m.status === "OK")!;
    expect(summary.metadata.providerFold).toMatchObject({ format: "openai-responses", block: true });
    const window = summary.native!.content as Item[];
    expect(window.map((i) => i.type)).toEqual(["message", "compaction"]);
    // The readable summary came from the service's own summarizer over the same range.
    expect(summary.content).toContain("t0: 12 passed");
    expect(stack.provider.requests.some((r) => r.path === "/v1/chat/completions")).toBe(true);

    // The engine continues from the service's request: the window as returned, then the kept items.
    const turn = await client.beginTurn(pid, { model: { name: "gpt-5", contextWindow: 1_000_000 }, format: "openai-responses" });
    expect(turn.providerBlock).toEqual({ memoryId: summary.id, format: "openai-responses", sent: true });
    const { input } = turn.request as unknown as { input: Item[] };
    expect(input.slice(0, window.length)).toEqual(window);
    stack.provider.openai.script({ reasoning: "All green.", text: "Done." });
    await openai.responses.create({ ...request, input });
    const last = stack.provider.records.at(-1)!;
    expect([last.status, last.expanded]).toEqual([200, true]);
    expect(last.reasoning!.dropped).toEqual([]);
    expect(last.reasoning!.kept.length).toBe(8);
  });
});

const STEPS = Number(process.env.PROVIDER_LOOP_STEPS ?? 300);

describe("a window the provider cannot read", () => {
  it("answered invalid_encrypted_content: the next turn says so and replays the readable chain with 0 errors; the next fold starts from the summary", async () => {
    const client = stack.memory;
    const openai = new OpenAI({ apiKey: "k", baseURL: `${stack.provider.url}/v1`, maxRetries: 0 });
    const pid = "provider-fold-openai-refused";
    const model = { name: "gpt-5", contextWindow: 1_000_000 };
    await client.upsertProcess(pid, { projectId: "agents", conversation: { tools: request.tools } });
    await client.appendMessage(pid, { native: { format: "openai-responses", content: [{ role: "user", content: "Run every test file." }] } });
    let next: Item[] | undefined;
    /** One step on the turn's own request (appending the previous result); the model's answer or its error. */
    const step = async (i: number, blockRefused?: { memoryId: string; error: string }) => {
      const message = next ? { message: { role: "TOOL" as const, native: { format: "openai-responses" as const, content: next } } } : {};
      const turn = await client.beginTurn(pid, { ...message, model, format: "openai-responses", ...(blockRefused ? { blockRefused } : {}) });
      next = undefined;
      const { input } = turn.request as unknown as { input: Item[] };
      stack.provider.openai.script({ reasoning: `Step ${i}.`, functionCalls: [{ callId: `call_r${i}`, name: "run_tests", arguments: { file: `t${i}` } }] });
      const r = await openai.responses.create({ ...request, input }).catch((e: { status: number; code?: string }) => ({ failed: e }));
      if (!("failed" in r)) {
        await client.appendMessage(pid, { native: { format: "openai-responses", content: r.output } });
        next = [{ type: "function_call_output", call_id: `call_r${i}`, output: `t${i}: 12 passed` }];
      }
      return { turn, input, r };
    };
    for (let i = 0; i < 6; i++) await step(i);
    await client.appendMessage(pid, { native: { format: "openai-responses", content: next! } });
    next = undefined;
    await client.compact(pid, { model, force: "HARD" });
    const summary = (await client.listMemories(pid)).items.find((m) => m.status === "OK")!;
    expect(summary.metadata.providerFold).toMatchObject({ block: true });

    // Another backend (the emulator forgets the windows it issued): the window is refused.
    stack.provider.reset();
    const refused = await step(6);
    expect(refused.turn.providerBlock).toEqual({ memoryId: summary.id, format: "openai-responses", sent: true });
    expect("failed" in refused.r && [refused.r.failed.status, refused.r.failed.code]).toEqual([400, "invalid_encrypted_content"]);

    // The engine reports it: this turn and the later ones replay the readable chain, accepted.
    const fallback = await step(7, { memoryId: summary.id, error: "invalid_encrypted_content" });
    expect(fallback.turn.providerBlock).toEqual({ memoryId: summary.id, format: "openai-responses", sent: false, reason: "refused" });
    expect(fallback.turn.prefix).toEqual({ kept: false, reason: "block_refused" });
    expect(fallback.input.some((x) => x.type === "compaction")).toBe(false);
    expect(JSON.stringify(fallback.input)).toContain(JSON.stringify(summary.content.slice(0, 40)).slice(1, -1));
    expect("failed" in fallback.r ? fallback.r.failed : null).toBeNull();
    const later = await step(8);
    expect([later.turn.prefix, later.turn.providerBlock?.reason]).toEqual([{ kept: true }, "refused"]);
    expect((await client.getMemory(pid, summary.id)).memory.metadata.providerFold).toMatchObject({ refused: { error: "invalid_encrypted_content" } });

    // The next fold sends the readable summary, not the refused window; its new window is sent again.
    await client.appendMessage(pid, { native: { format: "openai-responses", content: next! } });
    next = undefined;
    await client.compact(pid, { model, force: "HARD" });
    const compact = stack.provider.records.filter((r) => r.request.path === "/v1/responses/compact").at(-1)!;
    expect(JSON.stringify(compact.request.body.input)).not.toContain(String((summary.native!.content as Array<{ encrypted_content?: string }>)[1]!.encrypted_content));
    const resumed = await step(9);
    expect(resumed.turn.providerBlock).toMatchObject({ sent: true });
    expect("failed" in resumed.r ? resumed.r.failed : null).toBeNull();
    expect(stack.provider.records.filter((r) => r.status !== 200).map((r) => r.rule)).toEqual(["invalid_encrypted_content"]);
  }, 120_000);
});

describe(`a ${STEPS}-step Responses API loop with openai-compaction`, () => {
  it("a provider fold every 50 steps, 0 errors, every reasoning item accepted after every fold", async () => {
    stack.provider.reset();
    const client = stack.memory;
    const openai = new OpenAI({ apiKey: "k", baseURL: `${stack.provider.url}/v1`, maxRetries: 0 });
    const pid = "loop-provider-openai";
    const model = { name: "gpt-5", contextWindow: 1_000_000 };
    await client.upsertProcess(pid, { projectId: "loops", conversation: { tools: request.tools } });
    const task: Item = { role: "user", content: "Run every test file." };
    await client.appendMessage(pid, { native: { format: "openai-responses", content: [task] } });
    let folds = 0;
    let next: Item[] | undefined;
    let previous: Item[] | null = null;
    let prefixChanges = 0;
    const afterFold: Array<{ sent?: boolean; reason?: string }> = [];
    for (let step = 1; step <= STEPS; step++) {
      // Each step sends the turn's own request: the turn appends the previous step's result.
      const turn = await client.beginTurn(pid, { ...(next ? { message: { role: "TOOL", native: { format: "openai-responses", content: next } } } : {}), model, format: "openai-responses" });
      const { input } = turn.request as unknown as { input: Item[] };
      if (previous && previous.some((x, i) => JSON.stringify(x) !== JSON.stringify(input[i]))) prefixChanges++;
      previous = input;
      if (step > 1 && step % 50 === 1) afterFold.push({ sent: turn.providerBlock?.sent, reason: turn.prefix.reason });
      stack.provider.openai.script({ reasoning: `Step ${step}.`, functionCalls: [{ callId: `call_${step}`, name: "run_tests", arguments: { file: `t${step}` } }] });
      const r = await openai.responses.create({ ...request, input });
      await client.appendMessage(pid, { native: { format: "openai-responses", content: r.output } });
      next = [{ type: "function_call_output", call_id: `call_${step}`, output: `t${step}: 12 passed` }];
      if (step % 50 === 0) {
        await client.appendMessage(pid, { native: { format: "openai-responses", content: next } });
        next = undefined;
        const folded = await client.compact(pid, { model, force: "HARD" });
        expect(folded.fold).toMatchObject({ kind: "provider", block: true });
        folds++;
      }
    }
    // Every turn after a fold led with the new window; the request changed once per fold, no more.
    expect(afterFold).toEqual(Array.from({ length: afterFold.length }, () => ({ sent: true, reason: "fold" })));
    expect(prefixChanges).toBe(afterFold.length);
    expect(folds).toBeGreaterThanOrEqual(5);
    expect(stack.provider.records.filter((r) => r.status !== 200)).toEqual([]);
    const requests = stack.provider.records.filter((r) => r.request.path === "/v1/responses");
    expect(requests.filter((r) => r.expanded).length).toBeGreaterThan(0);
    expect(requests.flatMap((r) => r.reasoning!.dropped)).toEqual([]);
    expect(requests.at(-1)!.reasoning!.kept).toHaveLength(STEPS - 1);
  }, 600_000);
});
