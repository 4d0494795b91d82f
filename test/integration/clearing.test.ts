/**
 * Tool-result clearing through the service against DynamoDB Local: the tier before summarizing
 * (docs/compaction.md, "Tool-result clearing"), its batches, placeholders, records and races.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../core/domain/model.js";
import { clearedPlaceholder, replayTokens } from "../../core/domain/replay.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { clearIfNeeded } from "../../core/services/compaction/clearing.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import { composeContext } from "../../core/services/context.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage, listMessages, setMessageStrength } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { freshTable } from "../support/dynamo.js";
import { checkInvariants } from "../../tools/invariants.js";
import { testContainer } from "../support/container.js";

const TENANT = "clr";
const WINDOW = 32_000;
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("clr"));
});

const harness = (env: Record<string, string> = {}) => testContainer({ store, env });

async function newProcess(deps: ServiceDeps): Promise<ProcessKey> {
  const processId = `clr-${++seq}`;
  await upsertProcess(deps, TENANT, processId, { projectId: "proj" });
  return { tenantId: TENANT, processId };
}

/** Distinct text per result, so search can tell them apart. */
const fileText = (i: number, kb: number) => `file${i}.ts marker-${i}-zebra\n${`line ${i} of the module;\n`.repeat((kb * 1024) / 24)}`;

/** An agent loop: one USER message, then `n` call/result pairs of `kb` KB each. */
async function agentLoop(deps: ServiceDeps, key: ProcessKey, n: number, kb = 5, from = 0) {
  const out: Message[] = [];
  if (from === 0) out.push((await appendMessage(deps, key, { role: "USER", content: "Read every module and list the unused exports." })).message);
  for (let i = from; i < from + n; i++) {
    const name = i % 3 === 0 ? "grep" : "read_file";
    out.push((await appendMessage(deps, key, { role: "ASSISTANT", content: "", toolCalls: [{ id: `c${i}`, name, arguments: `{"path":"file${i}.ts"}` }] })).message);
    out.push((await appendMessage(deps, key, { role: "TOOL", content: fileText(i, kb), toolCallId: `c${i}` })).message);
  }
  return out;
}

const model = { model: { contextWindow: WINDOW } };

// Each test appends dozens of messages: generous time for a loaded machine.
describe("tool-result clearing", { timeout: 120_000 }, () => {
  it("from clearThreshold clears every older result outside the SOFT anchor in one round, for the next fold, without a model call, and keeps the stored content", async () => {
    const { deps, fake, metrics, bus } = harness();
    const key = await newProcess(deps);
    // 6 x 5 KB: ~7 700 tokens, below 0.6 x 32k; nothing happens yet.
    await agentLoop(deps, key, 6);
    const quiet = await compactIfNeeded(deps, key, model);
    expect(quiet).toMatchObject({ mode: "NONE", compacted: false });
    expect(quiet.clearedMessages).toBeUndefined();
    const plain = await runTurn(deps, key, model);

    // 20 results, ~26 000 tokens: above 0.6 of the window, in SOFT, whose anchor (the newest 10
    // messages) holds the newest 5 results.
    await agentLoop(deps, key, 14, 5, 6);
    const before = replayTokens((await settledView(deps, key))!);
    const turn = await runTurn(deps, key, model);
    expect(turn.compaction).toMatchObject({ compacted: false, clearedMessages: 15 });
    expect(fake.calls).toEqual([]);
    // The round waits for the next fold: this replay, its size and its prefix are unchanged.
    expect(turn.compaction.tokensAfter).toBe(turn.compaction.tokensBefore);
    expect(turn.prefix).toEqual({ kept: true });
    expect(turn.messages.slice(0, plain.messages.length)).toEqual(plain.messages);
    const results = turn.messages.filter((m) => m.role === "TOOL");
    expect(results.every((m) => !m.cleared && m.content.startsWith("file"))).toBe(true);
    expect(replayTokens((await settledView(deps, key))!)).toBe(before);

    // The stored message keeps its full content and records the round, from replay epoch 1.
    const all = await listMessages(deps, key, { view: "all", limit: 100 });
    const first = all.items.find((m) => m.id === results[0]!.id)!;
    expect(first.content).toBe(fileText(0, 5));
    expect(first.cleared).toMatchObject({ toolName: "grep", chars: fileText(0, 5).length, epoch: 1 });
    expect(all.items.filter((m) => m.cleared).map((m) => m.id)).toEqual(results.slice(0, 15).map((m) => m.id));

    expect(metrics.runs).toEqual([{ mode: "clear", compactedMessages: 15, tokensSaved: expect.any(Number) }]);
    const events = bus.published().filter((e) => e.detailType === "ToolResultsCleared");
    expect(events).toHaveLength(1);
    expect(events[0]!.detail).toMatchObject({ tenantId: TENANT, processId: key.processId, clearedMessages: 15 });
    expect(events[0]!.detail.messageIds).toEqual(results.slice(0, 15).map((m) => m.id));

    // A fold moves the replay epoch (it folds the results too); its undo moves it again and brings
    // them back, now shown as placeholders: the round took effect with the epoch.
    fake.script.push({ ok: true, summary: "FOLD" });
    const fold = await compactIfNeeded(deps, key, { ...model, force: "HARD" });
    expect(fold.compacted).toBe(true);
    const folded = await runTurn(deps, key, model);
    expect(folded.prefix).toEqual({ kept: false, reason: "fold" });
    await revertMemory(deps, key, fold.memoryId!);
    const undone = await runTurn(deps, key, { ...model, prompt: { tokens: 100 } });
    expect(undone.prefix).toEqual({ kept: false, reason: "revert" });
    const shown = undone.messages.filter((m) => m.role === "TOOL");
    expect(shown.slice(0, 15).every((m) => m.cleared && m.content === clearedPlaceholder(m, m.cleared))).toBe(true);
    expect(shown.slice(15).every((m) => !m.cleared && m.content.startsWith("file"))).toBe(true);
    expect(shown[1]!.content).toContain("read_file, ");
    expect(shown[0]!.content).toContain("grep, ");
    expect(replayTokens((await settledView(deps, key))!)).toBeLessThan(before / 3);
    expect(await checkInvariants(store, key, { settled: true })).toEqual([]);
  });

  it("shows the same placeholder bytes on every later turn, so the prompt prefix stays cacheable", async () => {
    const { deps } = harness();
    const key = await newProcess(deps);
    await agentLoop(deps, key, 20);
    const first = await runTurn(deps, key, model);
    await agentLoop(deps, key, 1, 5, 20);
    const second = await runTurn(deps, key, model);
    const prefix = (ms: Message[]) => ms.slice(0, first.messages.length).map((m) => m.content);
    expect(prefix(second.messages)).toEqual(prefix(first.messages));
  });

  it("clears in batches worth clearMinSaving of the window, never one result per turn", async () => {
    const { deps, metrics } = harness();
    const key = await newProcess(deps);
    await agentLoop(deps, key, 20);
    await runTurn(deps, key, model);
    // Keep the prompt above clearThreshold through the engine's own count, one pair per turn.
    for (let i = 20; i < 30; i++) {
      await agentLoop(deps, key, 1, 5, i);
      await runTurn(deps, key, { ...model, prompt: { tokens: 0.7 * WINDOW } });
    }
    const rounds = metrics.runs.filter((r) => r.mode === "clear").map((r) => r.compactedMessages);
    // Each ~1 300-token result alone is below 5% of 32k (1 600 tokens): rounds clear two or more.
    expect(rounds.length).toBeGreaterThan(1);
    expect(rounds.slice(1).every((n) => n >= 2)).toBe(true);
    expect(rounds.length).toBeLessThan(1 + 10);
  });

  it("leaves pinned, strong and small results alone, and everything below clearThreshold", async () => {
    const { deps } = harness({ CLEAR_THRESHOLD: "0.5" });
    const key = await newProcess(deps);
    await appendMessage(deps, key, { role: "USER", content: "Audit the repository." });
    await appendMessage(deps, key, { role: "ASSISTANT", content: "", toolCalls: [{ id: "p", name: "read_file", arguments: "{}" }] });
    const pinned = (await appendMessage(deps, key, { role: "TOOL", content: fileText(90, 4), toolCallId: "p", tags: ["STRENGTH:pinned"] })).message;
    await appendMessage(deps, key, { role: "ASSISTANT", content: "", toolCalls: [{ id: "s", name: "read_file", arguments: "{}" }] });
    const strong = (await appendMessage(deps, key, { role: "TOOL", content: fileText(91, 4), toolCallId: "s", tags: ["STRENGTH:strong"] })).message;
    await appendMessage(deps, key, { role: "ASSISTANT", content: "", toolCalls: [{ id: "t", name: "ls", arguments: "{}" }] });
    const small = (await appendMessage(deps, key, { role: "TOOL", content: "a.ts b.ts", toolCallId: "t" })).message;
    await agentLoop(deps, key, 16, 5, 100);
    const turn = await runTurn(deps, key, model);
    expect(turn.compaction.clearedMessages).toBe(11); // 16 loop results, 5 in the SOFT anchor
    const byId = new Map(turn.messages.map((m) => [m.id, m]));
    for (const kept of [pinned, strong, small]) expect(byId.get(kept.id)!.content).toBe(kept.content);
  });

  it("lets history search find a cleared result, and recalls it into the context for a matching query", async () => {
    const { deps } = harness();
    const key = await newProcess(deps);
    await agentLoop(deps, key, 20);
    await runTurn(deps, key, model);
    const found = await deps.history.search(deps, key, { q: "marker-2-zebra", limit: 5 });
    expect(found.items[0]!.message.content).toContain("marker-2-zebra");
    const context = await composeContext(deps, key, (await store.activeView(key))!, { query: "marker-2-zebra" });
    expect(context.block).toContain("marker-2-zebra");
  });

  it("summarizes a cleared result as its placeholder when a later fold takes it", async () => {
    const { deps, fake } = harness();
    const key = await newProcess(deps);
    await agentLoop(deps, key, 20);
    const turn = await runTurn(deps, key, model);
    const cleared = new Set(turn.messages.filter((m) => m.cleared).map((m) => m.id));
    const folded = await compactIfNeeded(deps, key, { ...model, force: "HARD" });
    expect(folded.compacted).toBe(true);
    const sent = fake.calls.flatMap((c) => c.messages).filter((m) => m.role === "TOOL");
    // HARD's anchor is smaller than SOFT's: the fold also takes results the SOFT round kept.
    const sentCleared = sent.filter((m) => cleared.has(m.id));
    expect(sentCleared.length).toBe(cleared.size);
    expect(sentCleared.every((m) => m.content.startsWith("[tool result cleared"))).toBe(true);
    expect(sent.filter((m) => !cleared.has(m.id)).every((m) => m.content.startsWith("file"))).toBe(true);
    expect(await checkInvariants(store, key, { settled: true })).toEqual([]);
  });

  it("never clears a result that a PATCH pinned between the round's read and its write", async () => {
    const { deps } = harness();
    const key = await newProcess(deps);
    const loop = await agentLoop(deps, key, 20);
    const view = (await store.activeView(key))!;
    // The round's writes wait until the test lets them go.
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((r) => (reach = r));
    const released = new Promise<void>((r) => (release = r));
    const held: Store = Object.create(store);
    held.markCleared = async (k, items) => (reach(), await released, store.markCleared(k, items));
    const round = clearIfNeeded({ ...deps, store: held }, key, view, DEFAULT_TUNABLES, WINDOW, replayTokens(view));
    await reached;
    const target = loop.find((m) => m.role === "TOOL")!; // the oldest result: in the round
    await setMessageStrength(deps, key, target.id, "pinned");
    release();
    const out = await round;

    expect(out.clearedMessages).toBe(14); // 20 results, 5 in the SOFT anchor, 1 pinned
    const stored = (await store.getMessage(key, target.id))!;
    expect(stored.tags).toContain("STRENGTH:pinned");
    expect(stored.cleared).toBeUndefined();
    expect(stored.tokens).toBe(target.tokens);
    expect(out.view.messages.find((m) => m.id === target.id)!.cleared).toBeUndefined();
    expect(await checkInvariants(store, key, { settled: true })).toEqual([]);
  });

  it("clears each result once when two containers run a round at the same time", async () => {
    const a = harness();
    const b = harness();
    const key = await newProcess(a.deps);
    await agentLoop(a.deps, key, 24);
    const view = (await store.activeView(key))!;
    const tokens = replayTokens(view);
    const [x, y] = await Promise.all([
      clearIfNeeded(a.deps, key, structuredClone(view), DEFAULT_TUNABLES, WINDOW, tokens),
      clearIfNeeded(b.deps, key, structuredClone(view), DEFAULT_TUNABLES, WINDOW, tokens),
    ]);
    expect(x.clearedMessages + y.clearedMessages).toBe(21);
    const ids = (bus: ReturnType<typeof harness>["bus"]) =>
      bus.published().flatMap((e) => (e.detailType === "ToolResultsCleared" ? (e.detail.messageIds as string[]) : []));
    const all = [...ids(a.bus), ...ids(b.bus)];
    expect(new Set(all).size).toBe(all.length);
    // Both answers describe what now stands: the same replay, which waits for the next fold.
    expect(replayTokens(x.view)).toBe(replayTokens(await settledView(a.deps, key)));
    expect(replayTokens(y.view)).toBe(replayTokens(x.view));
    expect((await settledView(a.deps, key)).waitingClears).toHaveLength(21);
  });
});
