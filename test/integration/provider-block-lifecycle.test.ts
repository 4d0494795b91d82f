/**
 * Memories holding a provider's block through the data lifecycle, against DynamoDB Local and the
 * provider emulator (the real `anthropic-compaction` summarizer): export and import carry the block
 * and its refusal note, and the copy's turn replays it; originals expiring leave the block and its
 * replay alone; a process deletion erases it; without a blob store, a block past what a memory
 * keeps inline (64 KiB, an OpenAI window of large user messages) leaves the readable summary
 * alone, saying so, through the same paths (with one, the block is a blob:
 * test/integration/provider-block-blobs.test.ts).
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { processPk } from "../../core/adapters/dynamodb/keys.js";
import { createAnthropicCompactionSummarizer } from "../../core/adapters/llm/anthropic-compaction.js";
import { createOpenAICompactionSummarizer } from "../../core/adapters/llm/openai-compaction.js";
import type { Memory } from "../../core/domain/model.js";
import { NATIVE_INLINE_MAX_BYTES } from "../../core/domain/native/blob-parts.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { appendMessage, getMessage } from "../../core/services/messages.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { exportPage } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { startProviderEmulator, type ProviderEmulator } from "../../tools/provider-emulator/provider-emulator.js";
import { testContainer } from "../support/container.js";
import { freshTable } from "../support/dynamo.js";

const TENANT = "pbl";
const MODEL = "claude-fable-5-1";
const DAY_MS = 86_400_000;
let table: Awaited<ReturnType<typeof freshTable>>;
let emulator: ProviderEmulator;
let deps: ServiceDeps;
let metrics: ReturnType<typeof testContainer>["metrics"];
/** The services' clock: the wall clock plus what a test moved it on. */
let skippedMs = 0;

beforeAll(async () => {
  [table, emulator] = await Promise.all([freshTable("pbl"), startProviderEmulator()]);
  const summarizer = createAnthropicCompactionSummarizer({ apiKey: "k", baseURL: emulator.url, model: MODEL });
  ({ deps, metrics } = testContainer({ store: table.store, summarizer, retryDelaysMs: [], clock: { now: () => new Date(Date.now() + skippedMs) } }));
});
afterAll(async () => {
  await emulator?.close();
});
beforeEach(() => {
  skippedMs = 0;
});

const key = (processId: string): ProcessKey => ({ tenantId: TENANT, processId });
const model = { name: MODEL, contextWindow: 10_000 };

/** A process of its own project with a retention of `days` (if any), 12 messages and one provider fold. */
async function folded(processId: string, days?: number): Promise<{ k: ProcessKey; memory: Memory }> {
  const k = key(processId);
  if (days) await table.store.putSettings(TENANT, `p-${processId}`, { retentionDays: days }, new Date().toISOString());
  await upsertProcess(deps, TENANT, processId, { projectId: `p-${processId}` });
  for (let i = 0; i < 12; i++) {
    const text = `step ${i}: crate ${i} goes to dock ${i % 4}.`;
    await appendMessage(deps, k, { role: i % 2 === 0 ? "USER" : "ASSISTANT", content: text, native: { format: "anthropic", content: [{ type: "text", text }] } });
  }
  const out = await compactManually(deps, k, { model, force: "HARD" });
  expect(out.result.compacted, JSON.stringify(out.result)).toBe(true);
  return { k, memory: (await deps.store.getMemory(k, out.result.memoryId!))! };
}

const exported = async (k: ProcessKey) => (await exportPage(deps, k)).text;
const anthropicTurn = (k: ProcessKey, extra: Partial<Parameters<typeof runTurn>[2]> = {}) => runTurn(deps, k, { model, format: "anthropic", ...extra });
const firstMessage = (turn: Awaited<ReturnType<typeof runTurn>>) => (turn.request as { messages: Array<{ content: unknown }> }).messages[0]!.content;

describe("a memory holding a provider's block", () => {
  it("export and import carry the block and its refusal note; the copy's turn replays the block, or the summary once refused", async () => {
    const { k, memory } = await folded("export-1");
    expect(memory.metadata.providerFold).toMatchObject({ format: "anthropic", block: true });
    const copy = key("export-1-copy");
    await importProcess(deps, copy, await exported(k), { remapIds: false });
    const imported = (await deps.store.getMemory(copy, memory.id))!;
    expect(imported.native).toEqual(memory.native);
    expect(imported.metadata.providerFold).toEqual(memory.metadata.providerFold);
    const turn = await anthropicTurn(copy);
    expect(turn.providerBlock).toEqual({ memoryId: memory.id, format: "anthropic", sent: true });
    expect(firstMessage(turn)).toEqual(memory.native!.content);

    // Refused on the original, noted once (a repeat counts nothing), and the note travels with an export.
    const refusedBefore = metrics.refusedBlocks.length;
    await anthropicTurn(k, { blockRefused: { memoryId: memory.id, error: "compaction_signature_invalid" } });
    await anthropicTurn(k, { blockRefused: { memoryId: memory.id, error: "again" } });
    expect(metrics.refusedBlocks.slice(refusedBefore)).toEqual(["anthropic"]);
    const noted = (await deps.store.getMemory(k, memory.id))!;
    expect(noted.metadata.providerFold?.refused).toMatchObject({ error: "compaction_signature_invalid" });
    expect(noted.native).toEqual(memory.native);
    const second = key("export-1-second");
    await importProcess(deps, second, await exported(k), { remapIds: false });
    expect((await deps.store.getMemory(second, memory.id))!.metadata.providerFold?.refused).toEqual(noted.metadata.providerFold?.refused);
    const replay = await anthropicTurn(second);
    expect(replay.providerBlock).toMatchObject({ sent: false, reason: "refused" });
    expect(JSON.stringify(replay.request)).not.toContain('"type":"compaction"');
  });

  it("originals expiring leave the memory's block and its replay as they were", async () => {
    const { k, memory } = await folded("retention-1", 1);
    const before = await anthropicTurn(k);
    expect(before.providerBlock).toMatchObject({ sent: true });
    skippedMs = 2 * DAY_MS;
    await expect(getMessage(deps, k, memory.sourceRefs[0]!)).rejects.toMatchObject({ kind: "not_found" });
    const after = (await deps.store.getMemory(k, memory.id))!;
    expect([after.status, after.native]).toEqual(["OK", memory.native]);
    const turn = await anthropicTurn(k);
    expect(turn.providerBlock).toMatchObject({ memoryId: memory.id, sent: true });
    expect(turn.request).toEqual(before.request);
    // An export past the expiry keeps the summary with its block, without the expired originals.
    const lines = (await exported(k)).trim().split("\n").map((l) => JSON.parse(l) as { kind?: string; memory?: Memory; message?: { id: string } });
    expect(lines.find((l) => l.kind === "memory")?.memory?.native).toEqual(memory.native);
    expect(lines.filter((l) => l.kind === "message" && memory.sourceRefs.includes(l.message!.id))).toEqual([]);
  });

  it("a process deletion erases it with the memory", async () => {
    const { k, memory } = await folded("delete-1");
    const partition = async () =>
      (await table.client.send(new QueryCommand({ TableName: table.tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": processPk(k) }, ConsistentRead: true })))
        .Items ?? [];
    expect((await partition()).some((i) => i.id === memory.id && typeof i.native === "string")).toBe(true);
    expect(await deleteProcess(deps, k)).toEqual({ status: "deleted" });
    const left = await partition();
    expect(left.filter((i) => i.type === "MEM" || i.type === "MSG")).toEqual([]);
    expect(JSON.stringify(left)).not.toContain("encrypted_content");
  });
});

describe("a block past what a memory keeps inline, without a blob store", () => {
  it("over 64 KiB (an OpenAI window holds every user message): the readable summary alone, saying so, through a turn, export, import, expiry and deletion", async () => {
    const summarizer = createOpenAICompactionSummarizer({ apiKey: "k", baseURL: `${emulator.url}/v1`, model: "gpt-5" });
    // One call takes the whole range (a fold in chunks keeps no block at all).
    const env = { COMPACTION_MAX_SOURCE_CHARS: "400000" };
    const large = testContainer({ store: table.store, env, summarizer, retryDelaysMs: [], clock: { now: () => new Date(Date.now() + skippedMs) } }).deps;
    const k = key("large-1");
    await table.store.putSettings(TENANT, "p-large-1", { retentionDays: 1 }, new Date().toISOString());
    await upsertProcess(large, TENANT, k.processId, { projectId: "p-large-1" });
    // Six user messages of 20 KiB: the window `/responses/compact` returns holds every folded one.
    const words = "the crate goes to the dock and waits there. ";
    for (let i = 0; i < 12; i++) {
      // Plain words only (no numbers, names or paths), so the short readable summary loses no unit.
      const side = ["north", "south", "east", "west", "upper", "lower"][i >> 1]!;
      const content = i % 2 === 0 ? `${side}: ${words.repeat(Math.ceil(20_480 / words.length))}` : "noted.";
      await appendMessage(large, k, { role: i % 2 === 0 ? "USER" : "ASSISTANT", content });
    }
    emulator.openai.scriptChat("<summary>The crates wait at the dock.</summary>");
    const gpt = { name: "gpt-5", contextWindow: 60_000 };
    const out = await compactManually(large, k, { model: gpt, force: "HARD" });
    expect(out.result, JSON.stringify(out.result)).toMatchObject({ compacted: true, fold: { kind: "provider", block: false } });
    const memory = (await large.store.getMemory(k, out.result.memoryId!))!;
    expect(memory.native).toBeUndefined();
    expect(memory.metadata.providerFold).toMatchObject({ format: "openai-responses", block: false });
    const bytes = Number(/^too_large: the block has (\d+) bytes/.exec(memory.metadata.providerFold?.note ?? "")?.[1]);
    expect(bytes).toBeGreaterThan(NATIVE_INLINE_MAX_BYTES);
    expect(memory.content).toContain("The crates wait at the dock.");
    const turn = await runTurn(large, k, { model: gpt, format: "openai-responses" });
    expect(turn.providerBlock).toBeUndefined();
    expect(JSON.stringify(turn.request)).toContain("The crates wait at the dock.");

    const copy = key("large-1-copy");
    await importProcess(large, copy, (await exportPage(large, k)).text, { remapIds: false });
    expect((await large.store.getMemory(copy, memory.id))!).toMatchObject({ content: memory.content, metadata: { providerFold: memory.metadata.providerFold } });
    skippedMs = 2 * DAY_MS;
    await expect(getMessage(large, k, memory.sourceRefs[0]!)).rejects.toMatchObject({ kind: "not_found" });
    expect((await large.store.getMemory(k, memory.id))!.content).toBe(memory.content);
    expect(await deleteProcess(large, k)).toEqual({ status: "deleted" });
    expect(await large.store.getMemory(k, memory.id)).toBeNull();
  });
});
