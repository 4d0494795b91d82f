/**
 * Provider folds through the service (SUMMARIZER=anthropic-compaction against the provider
 * emulator): a compaction stores the provider's block verbatim beside its readable text, the
 * engine continues from the block with the kept turns' thinking valid, undo keeps the block for
 * audit and the next fold chains again, and export/import and deletion carry the block.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient } from "../../client/index.js";
import type { Memory, Message } from "../../client/types.js";
import { startProviderEmulator, type ProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let emulator: ProviderEmulator;
const MODEL = "claude-fable-5-1";
beforeAll(async () => {
  emulator = await startProviderEmulator();
  ctx = await startTestService({ env: { SUMMARIZER: "anthropic-compaction", ANTHROPIC_BASE_URL: emulator.url, SUMMARIZER_MODEL: MODEL } });
});
afterAll(async () => {
  await ctx?.service.stop();
  await emulator?.close();
});

const memory = () => createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
const model = { name: MODEL, contextWindow: 1_000_000 };
const tools: Anthropic.Tool[] = [{ name: "read_file", input_schema: { type: "object", properties: { path: { type: "string" } } } }];
const engine = { model: MODEL, max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, tools };

/** The engine's request after a fold: the block first, then the active messages as stored. */
function continuation(summary: Memory, active: Message[]): Anthropic.MessageParam[] {
  const covered = new Set(summary.metadata.providerFold?.covered ?? []);
  return [
    { role: "assistant", content: summary.native!.content as Anthropic.ContentBlockParam[] },
    ...active.filter((m) => !covered.has(m.id)).map((m) => ({ role: m.role === "ASSISTANT" ? ("assistant" as const) : ("user" as const), content: m.native!.content as Anthropic.ContentBlockParam[] })),
  ];
}

/** `steps` tool calls appended as the engine appends them; `history` is what the engine sends. */
async function loop(pid: string, history: Anthropic.MessageParam[], steps: number, tag: string) {
  const client = memory();
  const anthropic = new Anthropic({ apiKey: "k", baseURL: emulator.url, maxRetries: 0 });
  for (let i = 0; i < steps; i++) {
    emulator.anthropic.script({ thinking: `${tag} ${i}: read the next file.`, toolUses: [{ id: `toolu_${tag}_${i}`, name: "read_file", input: { path: `src/${tag}-${i}.ts` } }] });
    const reply = await anthropic.messages.create({ ...engine, messages: history });
    await client.appendMessage(pid, { native: { format: "anthropic", content: reply.content } });
    const result: Anthropic.ContentBlockParam[] = [{ type: "tool_result", tool_use_id: `toolu_${tag}_${i}`, content: `contents of src/${tag}-${i}.ts: exports parse${i}()` }];
    await client.appendMessage(pid, { role: "TOOL", native: { format: "anthropic", content: result } });
    history = [...history, { role: "assistant", content: reply.content }, { role: "user", content: result }];
  }
  return history;
}

async function okSummary(pid: string): Promise<Memory> {
  const { items } = await memory().listMemories(pid, { includeSuperseded: false });
  const ok = items.filter((m) => m.status === "OK");
  expect(ok).toHaveLength(1);
  return ok[0]!;
}

describe("anthropic-compaction through the service", () => {
  it("stores the block verbatim with its readable text; the engine continues from it with the kept thinking valid", async () => {
    const client = memory();
    const pid = "provider-fold-a";
    // The engine's tools, as it sends them: the compaction request carries the same.
    await client.upsertProcess(pid, { projectId: "agents", conversation: { tools } });
    const task: Anthropic.MessageParam = { role: "user", content: [{ type: "text", text: "Map every parser in src/." }] };
    await client.appendMessage(pid, { role: "USER", native: { format: "anthropic", content: task.content as Anthropic.ContentBlockParam[] } });
    await loop(pid, [task], 8, "a");

    const folded = await client.compact(pid, { model, force: "HARD" });
    expect(folded, JSON.stringify(folded)).toMatchObject({ compacted: true, fold: { by: "anthropic-compaction", kind: "provider", block: true } });
    expect(folded.fold!.inputTokens).toBeGreaterThan(0);
    const summary = await okSummary(pid);
    expect(summary.metadata.provider).toBe("anthropic-compaction");
    // The task message stays active (the turn's own USER message): the block stands for it too.
    expect(summary.metadata.providerFold).toMatchObject({ format: "anthropic", block: true, covered: [expect.any(String)] });
    const block = (summary.native!.content as Array<{ type: string; content: string }>)[0]!;
    expect(block.type).toBe("compaction");
    // The readable summary is the block's own text.
    expect(summary.content).toBe(block.content);
    expect((summary.metadata.usage as { inputTokens: number }).inputTokens).toBeGreaterThan(0);

    const active = (await client.listMessages(pid, { view: "active" })).items;
    const anthropic = new Anthropic({ apiKey: "k", baseURL: emulator.url, maxRetries: 0 });
    emulator.anthropic.script({ thinking: "Done.", text: "Mapped." });
    await anthropic.messages.create({ ...engine, messages: continuation(summary, active) });
    const last = emulator.records.at(-1)!;
    expect([last.status, last.rule]).toEqual([200, undefined]);
    expect(last.expanded).toBe(true);
    expect(last.thinking!.dropped).toEqual([]);
    expect(last.thinking!.verified.length).toBe(8);
  }, 120_000);

  it("undo keeps the block on the REVERTED memory; the next fold chains from the previous block; export and import carry it", async () => {
    const client = memory();
    const pid = "provider-fold-b";
    await client.upsertProcess(pid, { projectId: "agents", conversation: { tools } });
    const task: Anthropic.MessageParam = { role: "user", content: [{ type: "text", text: "Map every lexer in src/." }] };
    await client.appendMessage(pid, { role: "USER", native: { format: "anthropic", content: task.content as Anthropic.ContentBlockParam[] } });
    const history = await loop(pid, [task], 6, "b");
    await client.compact(pid, { model, force: "HARD" });
    const first = await okSummary(pid);

    const reverted = await client.revertMemory(pid, first.id);
    expect(reverted.memory.status).toBe("REVERTED");
    expect(reverted.memory.native).toEqual(first.native);
    await client.compact(pid, { model, force: "HARD" });
    const again = await okSummary(pid);
    expect(again.native?.format).toBe("anthropic");

    // More work after the fold, then a second fold: the provider gets the previous block first.
    const active = (await client.listMessages(pid, { view: "active" })).items;
    await loop(pid, continuation(again, active), 4, "c");
    await client.compact(pid, { model, force: "HARD" });
    const chained = emulator.records.filter((r) => r.compaction).at(-1)!;
    expect(chained.request.body.messages[0].content[0].signature).toBe((again.native!.content[0] as { signature: string }).signature);
    const second = await okSummary(pid);
    expect(second.metadata.supersededMemoryId).toBe(again.id);
    expect(history.length).toBeGreaterThan(0);

    const lines: string[] = [];
    for await (const line of client.exportProcess(pid)) lines.push(line);
    const copy = "provider-fold-b-copy";
    const imported = await client.importProcess(copy, lines);
    expect(imported.memories).toBeGreaterThan(0);
    const { items } = await client.listMemories(copy, { includeReverted: true });
    const byId = new Map(items.map((m) => [m.id, m]));
    expect(byId.get(second.id)?.native).toEqual(second.native);
    expect(byId.get(first.id)?.native).toEqual(first.native);
    expect((await client.getProcess(copy)).conversation).toEqual({ tools });

    await client.deleteProcess(copy);
    await expect(client.listMemories(copy)).rejects.toMatchObject({ status: 404 });
  }, 120_000);
});
