/**
 * Provider folds through the service (SUMMARIZER=anthropic-compaction against the provider
 * emulator): a compaction stores the provider's block verbatim beside its readable text, the
 * engine continues from the block with the kept turns' thinking valid, undo keeps the block for
 * audit and the next fold chains again, and export/import and deletion carry the block.
 */
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import type { AppendMessageInput, Memory } from "../../client/index.js";
import { startProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { serviceBeside } from "../support/service-beside.js";

const MODEL = "claude-fable-5-1";
const stack = serviceBeside(() => startProviderEmulator(), (url) => ({ SUMMARIZER: "anthropic-compaction", ANTHROPIC_BASE_URL: url, SUMMARIZER_MODEL: MODEL }));

const model = { name: MODEL, contextWindow: 1_000_000 };
const tools: Anthropic.Tool[] = [{ name: "read_file", input_schema: { type: "object", properties: { path: { type: "string" } } } }];
const engine = { model: MODEL, max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, tools };

type AnthropicRequest = { system: Anthropic.TextBlockParam[]; messages: Anthropic.MessageParam[] };

/** The engine's step on the service's own `request`: the turn (appending `message`, if any), then the model call. */
async function send(pid: string, message?: AppendMessageInput, o: { drop?: boolean; blockRefused?: { memoryId: string; error?: string } } = {}) {
  const turn = await stack.memory.beginTurn(pid, { ...(message ? { message } : {}), model, format: "anthropic", ...(o.blockRefused ? { blockRefused: o.blockRefused } : {}) });
  const request = turn.request as unknown as AnthropicRequest;
  const anthropic = new Anthropic({ apiKey: "k", baseURL: stack.provider.url, maxRetries: 0 });
  const reply = await anthropic.messages
    .create({
      ...engine,
      // On the readable chain the API drops a kept turn's thinking bound to the changed prefix ("What a fold may keep").
      ...(o.drop ? { thinking: { ...engine.thinking, block_binding: { prefix_mismatch_behavior: "drop_block" } } as Anthropic.ThinkingConfigParam } : {}),
      ...(request.system.length > 0 ? { system: request.system } : {}),
      messages: request.messages,
    })
    .catch((e: unknown) => ({ error: e as { status: number; error?: { error?: { message?: string } } } }));
  return { turn, reply };
}

/** `steps` tool calls, each sent as the turn's request; the last result is appended too. */
async function loop(pid: string, steps: number, tag: string, drop = false) {
  const client = stack.memory;
  let pending: AppendMessageInput | undefined;
  for (let i = 0; i < steps; i++) {
    stack.provider.anthropic.script({ thinking: `${tag} ${i}: read the next file.`, toolUses: [{ id: `toolu_${tag}_${i}`, name: "read_file", input: { path: `src/${tag}-${i}.ts` } }] });
    const { reply } = await send(pid, pending, { drop });
    if ("error" in reply) throw new Error(JSON.stringify(reply.error));
    await client.appendMessage(pid, { native: { format: "anthropic", content: reply.content } });
    const result: Anthropic.ContentBlockParam[] = [{ type: "tool_result", tool_use_id: `toolu_${tag}_${i}`, content: `contents of src/${tag}-${i}.ts: exports parse${i}()` }];
    pending = { role: "TOOL", native: { format: "anthropic", content: result } };
  }
  if (pending) await client.appendMessage(pid, pending);
}

async function okSummary(pid: string): Promise<Memory> {
  const { items } = await stack.memory.listMemories(pid, { includeSuperseded: false });
  const ok = items.filter((m) => m.status === "OK");
  expect(ok).toHaveLength(1);
  return ok[0]!;
}

describe("anthropic-compaction through the service", () => {
  it("stores the block verbatim with its readable text; the engine continues from it with the kept thinking valid", async () => {
    const client = stack.memory;
    const pid = "provider-fold-a";
    // The engine's tools, as it sends them: the compaction request carries the same.
    await client.upsertProcess(pid, { projectId: "agents", conversation: { tools } });
    const task: Anthropic.MessageParam = { role: "user", content: [{ type: "text", text: "Map every parser in src/." }] };
    await client.appendMessage(pid, { role: "USER", native: { format: "anthropic", content: task.content as Anthropic.ContentBlockParam[] } });
    await loop(pid, 8, "a");

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

    // The turn's request leads with the block, then the kept turns as stored.
    stack.provider.anthropic.script({ thinking: "Done.", text: "Mapped." });
    const { turn } = await send(pid);
    expect(turn.providerBlock).toEqual({ memoryId: summary.id, format: "anthropic", sent: true });
    expect((turn.request as unknown as AnthropicRequest).messages[0]).toEqual({ role: "assistant", content: summary.native!.content });
    expect(turn.prefix).toEqual({ kept: false, reason: "fold" });
    const last = stack.provider.records.at(-1)!;
    expect([last.status, last.rule]).toEqual([200, undefined]);
    expect(last.expanded).toBe(true);
    expect(last.thinking!.dropped).toEqual([]);
    expect(last.thinking!.verified.length).toBe(8);
  }, 120_000);

  it("undo keeps the block on the REVERTED memory; the next fold chains from the previous block; export and import carry it", async () => {
    const client = stack.memory;
    const pid = "provider-fold-b";
    await client.upsertProcess(pid, { projectId: "agents", conversation: { tools } });
    const task: Anthropic.MessageParam = { role: "user", content: [{ type: "text", text: "Map every lexer in src/." }] };
    await client.appendMessage(pid, { role: "USER", native: { format: "anthropic", content: task.content as Anthropic.ContentBlockParam[] } });
    await loop(pid, 6, "b");
    await client.compact(pid, { model, force: "HARD" });
    const first = await okSummary(pid);

    const reverted = await client.revertMemory(pid, first.id);
    expect(reverted.memory.status).toBe("REVERTED");
    expect(reverted.memory.native).toEqual(first.native);
    await client.compact(pid, { model, force: "HARD" });
    const again = await okSummary(pid);
    expect(again.native?.format).toBe("anthropic");

    // More work after the fold, then a second fold: the provider gets the previous block first.
    await loop(pid, 4, "c");
    await client.compact(pid, { model, force: "HARD" });
    const chained = stack.provider.records.filter((r) => r.compaction).at(-1)!;
    expect(chained.request.body.messages[0].content[0].signature).toBe((again.native!.content[0] as { signature: string }).signature);
    const second = await okSummary(pid);
    expect(second.metadata.supersededMemoryId).toBe(again.id);
    const activeBefore = (await client.listMessages(pid, { view: "active" })).items.map((m) => m.id);

    // Undo the second fold: the previous memory is the summary again, its block in the turn's request, the kept turns after it.
    const undone = await client.revertMemory(pid, second.id);
    expect(undone.memory.native).toEqual(second.native);
    expect((await okSummary(pid)).id).toBe(again.id);
    stack.provider.anthropic.script({ thinking: "Back.", text: "Restored." });
    const { turn, reply } = await send(pid);
    expect(turn.providerBlock).toMatchObject({ memoryId: again.id, sent: true });
    expect(turn.prefix.reason).toBe("revert");
    expect((turn.request as unknown as AnthropicRequest).messages[0]!.content).toEqual(again.native!.content);
    const restored = (await client.listMessages(pid, { view: "active" })).items.map((m) => m.id);
    expect(restored.length).toBeGreaterThan(activeBefore.length);
    expect("error" in reply ? reply.error : null).toBeNull();
    expect(stack.provider.records.at(-1)).toMatchObject({ status: 200, expanded: true, thinking: { dropped: [] } });

    const lines: string[] = [];
    for await (const line of client.exportProcess(pid)) lines.push(line);
    const copy = "provider-fold-b-copy";
    const imported = await client.importProcess(copy, lines);
    expect(imported.memories).toBeGreaterThan(0);
    const { items } = await client.listMemories(copy, { includeReverted: true });
    const byId = new Map(items.map((m) => [m.id, m]));
    expect(byId.get(second.id)?.native).toEqual(second.native);
    expect(byId.get(first.id)?.native).toEqual(first.native);
    // The copy's turn replays the same block.
    const copied = await client.beginTurn(copy, { model, format: "anthropic" });
    expect(copied.providerBlock).toMatchObject({ memoryId: again.id, sent: true });
    expect((copied.request as unknown as AnthropicRequest).messages[0]!.content).toEqual(again.native!.content);
    expect((await client.getProcess(copy)).conversation).toEqual({ tools });

    await client.deleteProcess(copy);
    await expect(client.listMemories(copy)).rejects.toMatchObject({ status: 404 });
  }, 120_000);

  it("a block the provider refuses: the next turn says so and replays the readable summary; the memory notes it; the next fold chains from the summary", async () => {
    const client = stack.memory;
    const pid = "provider-fold-refused";
    await client.upsertProcess(pid, { projectId: "agents", conversation: { tools } });
    await client.appendMessage(pid, { role: "USER", native: { format: "anthropic", content: [{ type: "text", text: "Map every emitter in src/." }] } });
    await loop(pid, 6, "r");
    await client.compact(pid, { model, force: "HARD" });
    const summary = await okSummary(pid);
    // The provider no longer reads the block (a rotated key, another backend): the emulator forgets what it issued.
    stack.provider.reset();
    const refused = await send(pid);
    expect(refused.turn.providerBlock).toMatchObject({ memoryId: summary.id, sent: true });
    expect("error" in refused.reply && refused.reply.error.status).toBe(400);
    expect(stack.provider.records.at(-1)!.rule).toBe("compaction_signature_invalid");

    // The engine says so on its next turn: that turn, and every later one, replays the readable chain.
    stack.provider.anthropic.script({ thinking: "Again.", text: "Mapped." });
    const { turn, reply } = await send(pid, undefined, { drop: true, blockRefused: { memoryId: summary.id, error: "compaction_signature_invalid" } });
    expect(turn.providerBlock).toEqual({ memoryId: summary.id, format: "anthropic", sent: false, reason: "refused" });
    // An unfinished tool loop the fold kept may be named beside the reason (prefix.openLoop).
    expect(turn.prefix).toMatchObject({ kept: false, reason: "block_refused" });
    const request = turn.request as unknown as AnthropicRequest;
    expect(JSON.stringify(request.messages)).not.toContain('"type":"compaction"');
    expect(request.system.map((b) => b.text).join("\n")).toContain(summary.content.slice(0, 60));
    expect("error" in reply ? reply.error : null).toBeNull();
    const noted = (await client.getMemory(pid, summary.id)).memory;
    expect(noted.metadata.providerFold).toMatchObject({ block: true, refused: { error: "compaction_signature_invalid" } });
    expect(noted.native).toEqual(summary.native);
    const later = await stack.memory.beginTurn(pid, { model, format: "anthropic" });
    expect([later.prefix.kept, later.prefix.reason, later.providerBlock?.reason]).toEqual([true, undefined, "refused"]);

    // The next fold starts from the readable summary: the refused block is not sent again.
    await loop(pid, 3, "s", true);
    const folded = await client.compact(pid, { model, force: "HARD" });
    expect(folded.fold).toMatchObject({ kind: "provider", block: true });
    const compaction = stack.provider.records.filter((r) => r.compaction).at(-1)!;
    expect(JSON.stringify(compaction.request.body.messages[0])).not.toContain('"type":"compaction"');
    expect(JSON.stringify(compaction.request.body.messages[0])).toContain(JSON.stringify(summary.content.slice(0, 60)).slice(1, -1));
    // A fresh block: the next turn leads with it again.
    expect((await stack.memory.beginTurn(pid, { model, format: "anthropic" })).providerBlock).toMatchObject({ sent: true });
  }, 120_000);

  it("names a memory without a block or another process's: refused with nothing written", async () => {
    const client = stack.memory;
    const pid = "provider-fold-refusal-input";
    await client.upsertProcess(pid, { projectId: "agents" });
    const before = (await client.listMessages(pid)).items.length;
    const message = { role: "USER" as const, content: "hello" };
    await expect(client.beginTurn(pid, { message, model, blockRefused: { memoryId: "mem_none" } })).rejects.toMatchObject({ status: 404, code: "memory.not_found" });
    expect((await client.listMessages(pid)).items).toHaveLength(before);
  });
});
