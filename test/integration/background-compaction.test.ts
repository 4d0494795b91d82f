/**
 * Compaction off the turn's critical path (docs/compaction.md), against DynamoDB Local: turns queue
 * folds and never call the summarizer, the worker prepares them, a later turn commits a prepared
 * fold without a model call when it still fits, and the answer is trimmed while the fold is queued.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Message } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { SummarizeInput } from "../../core/ports/summarizer.js";
import { EVENTS } from "../../core/domain/events.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import type { RangeResult } from "../../core/services/compaction/range-compaction.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import { selectRange } from "../../core/domain/range.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { OFFER_TAG } from "../../core/services/recompaction-offers.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { listMemories } from "../../core/services/memories.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { checkInvariants } from "../../tools/invariants.js";
import { awaitedStore } from "../support/awaited-store.js";
import { handleCompactionRequested, handleInboxAnswered } from "../../core/adapters/events/handlers.js";
import { testContainer } from "../support/container.js";
import { appendWarehouseMove } from "../support/steps.js";

const TENANT = "bg";
const WINDOW = 10_000;
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("bg"));
});

/** Deps in the default (background) mode with the worker subscribed to the bus, as in the local runner. */
function harness(options: { env?: Record<string, string>; worker?: boolean; store?: Store } = {}) {
  return testContainer({ store: options.store ?? store, env: options.env, retryDelaysMs: [50, 100], worker: options.worker !== false });
}

async function seeded(deps: ServiceDeps, n: number): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId: TENANT, processId: `bg-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  return { key, messages: await appendWarehouseMove(deps, key, n) };
}

/**
 * The pinned task, then a large tool call (about 3,000 tokens of arguments) answered across another
 * message, or two parallel calls in separate ASSISTANT messages answered in reverse order, then 30
 * short messages.
 */
async function withToolExchange(deps: ServiceDeps, shape: "note" | "parallel"): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId: TENANT, processId: `bg-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  const append = async (body: Parameters<typeof appendMessage>[2]) => (await appendMessage(deps, key, body)).message;
  const messages = [await append({ role: "USER", content: "Plan the warehouse move." })];
  const call = (id: string, args: string) => append({ role: "ASSISTANT", content: "", toolCalls: [{ id, name: "read_inventory", arguments: args }] });
  const large = JSON.stringify({ shelves: "s".repeat(12_000) });
  if (shape === "note") {
    messages.push(await call("c1", large));
    messages.push(await append({ role: "SYSTEM", content: "The inventory service answered slowly today." }));
    messages.push(await append({ role: "TOOL", content: "40 shelves, 7 aisles.", toolCallId: "c1" }));
  } else {
    messages.push(await call("c1", large), await call("c2", "{}"));
    messages.push(await append({ role: "TOOL", content: "Aisle 3 is free.", toolCallId: "c2" }));
    messages.push(await append({ role: "TOOL", content: "40 shelves, 7 aisles.", toolCallId: "c1" }));
  }
  for (let i = 0; i < 30; i++) {
    messages.push(await append({ role: i % 2 ? "USER" : "ASSISTANT", content: `step ${i}: shelf ${i} goes to aisle ${i % 7} on day ${i % 5}.` }));
  }
  return { key, messages };
}

const turn = (tokens: number, content?: string) => ({
  ...(content ? { message: { role: "USER" as const, content } } : {}),
  model: { contextWindow: WINDOW },
  prompt: { tokens },
});

/** A summarizer answer (the fake's usual summary) that waits for `release()`. */
function heldSummary() {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const answer = async (input: SummarizeInput) => {
    await released;
    return createFakeSummarizer().summarize(input);
  };
  return { answer, release };
}

const foldsOf = async (key: ProcessKey) => (await store.listMemories(key)).filter((m) => m.status !== "OK");

describe("turns in the background mode", () => {
  it("below prepareThreshold nothing is queued; from it the turn queues a HARD fold without calling the summarizer", async () => {
    const { deps, fake, bus } = harness({ worker: false });
    const { key } = await seeded(deps, 30);
    const quiet = await runTurn(deps, key, turn(3_000));
    expect(quiet.compaction).toMatchObject({ mode: "NONE", compacted: false });
    const early = await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    expect(early.compaction).toMatchObject({ mode: "SOFT", compacted: false, reason: "compaction_queued" });
    expect(fake.calls).toHaveLength(0);
    const [fold] = await foldsOf(key);
    expect(fold).toMatchObject({ id: early.compaction.memoryId, status: "QUEUED", metadata: { preparedFor: "HARD", job: "prepare" } });
    expect(bus.published().filter((e) => e.detailType === EVENTS.CompactionRequested.detailType)).toEqual([
      expect.objectContaining({ detail: { tenantId: TENANT, processId: key.processId, foldId: fold!.id, mode: "HARD", job: "prepare" } }),
    ]);
    // A second turn finds the fold on its way and queues nothing more.
    const again = await runTurn(deps, key, turn(7_300));
    expect(again.compaction.reason).toBe("compaction_queued");
    expect(await foldsOf(key)).toHaveLength(1);
  });

  it("the worker prepares the fold (never replayed); reaching HARD, the worker commits it with no summarizer call", async () => {
    const { deps, fake, bus, metrics } = harness();
    const { key, messages } = await seeded(deps, 30);
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    await bus.drain();
    expect(fake.calls).toHaveLength(1);
    const [prepared] = await foldsOf(key);
    expect(prepared).toMatchObject({ status: "PREPARED", metadata: { preparedFor: "HARD" } });
    expect(prepared!.sourceRefs.length).toBeGreaterThan(0);
    expect(prepared!.sourceRefs).not.toContain(messages[0]!.id); // the pinned task stays
    // Never replayed: not in the context, not an active summary, not in the default listing.
    const view = await store.activeView(key);
    expect(view!.summaries).toEqual([]);
    expect(view!.folds.map((f) => f.id)).toEqual([prepared!.id]);
    expect(await listMemories(deps, key, { kind: "ARCHIVED_CHAT", includeSuperseded: true, includeFailed: true })).toEqual([]);
    const between = await runTurn(deps, key, turn(7_800, "And then?"));
    expect(between.compaction).toMatchObject({ mode: "SOFT", compacted: false, reason: "compaction_prepared" });
    expect(between.context.block).not.toContain("Earlier Conversation");

    const late = (await appendMessage(deps, key, { role: "ASSISTANT", content: "Aisle 3 is free now." })).message;
    // The HARD turn asks the worker to commit it and answers the view it read (docs/compaction.md, "Who commits a prepared fold").
    const hard = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(hard.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued", memoryId: prepared!.id });
    await bus.drain();
    expect(fake.calls).toHaveLength(1); // no model call to commit it
    const after = await runTurn(deps, key, turn(5_000, "And now?"));
    expect(after.context.block).toContain("## Earlier Conversation (compacted)");
    expect(after.messages.map((m) => m.id)).toContain(late.id); // appended after preparing: still active
    const memory = (await store.getMemory(key, prepared!.id))!;
    expect(memory).toMatchObject({ status: "OK", metadata: { producedBy: "worker", mode: "HARD", preparedFor: "HARD" } });
    expect(memory.sourceRefs).toEqual(prepared!.sourceRefs);
    expect(memory.metadata.expiresAt).toBeUndefined();
    expect(metrics.prepared).toEqual(["used"]);
    expect(bus.published().filter((e) => e.detailType === "MemoryCompacted")).toEqual([
      expect.objectContaining({ detail: expect.objectContaining({ memoryId: prepared!.id, producedBy: "worker", mode: "HARD" }) }),
    ]);
    await bus.drain();
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("discards a prepared fold built on a summary that was undone since; it is never committed", async () => {
    const { deps, bus } = harness();
    const { key } = await seeded(deps, 30);
    const manual = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: "EMERGENCY" });
    expect(manual.compacted).toBe(true);
    for (let i = 0; i < 30; i++) await appendMessage(deps, key, { role: i % 2 ? "USER" : "ASSISTANT", content: `More shelves arrived: batch ${i}.` });
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    await bus.drain();
    const [prepared] = (await foldsOf(key)).filter((f) => f.status === "PREPARED");
    expect(prepared!.metadata.supersededMemoryId).toBe(manual.memoryId);

    await revertMemory(deps, key, manual.memoryId!);
    const hard = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(hard.compaction.compacted).toBe(false);
    expect((await store.getMemory(key, prepared!.id))!.status).toBe("DISCARDED");
    await bus.drain();
    expect((await store.listMemories(key)).filter((m) => m.status === "OK")).toEqual([]);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("after an undo the same fold is not prepared again until the replay grew (no summary paid)", async () => {
    const { deps, fake, bus } = harness();
    const { key } = await seeded(deps, 30);
    const fold = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 8_700 } });
    expect(fold).toMatchObject({ mode: "HARD", compacted: true });
    await revertMemory(deps, key, fold.memoryId!);
    const calls = fake.calls.length;

    const next = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(next.compaction.compacted).toBe(false);
    expect(next.compaction.reason).toBe("reverted_recently");
    await bus.drain();
    expect(fake.calls.length).toBe(calls);
    const folds = await foldsOf(key);
    expect(folds.filter((f) => f.status === "PREPARED" || f.status === "QUEUED")).toEqual([]);
    // The turn saw the hold on META: nothing was queued for the worker to discard.
    expect(folds.filter((f) => f.status !== "REVERTED")).toEqual([]);
    expect((await store.listMemories(key)).filter((m) => m.status === "OK")).toEqual([]);
  });

  it("under an undo hold turns queue nothing (no fold write, no request) until the replay grew past it; EMERGENCY still queues", async () => {
    const { deps, bus } = harness({ worker: false });
    const { key } = await seeded(deps, 30);
    const fold = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, prompt: { tokens: 8_700 } });
    await revertMemory(deps, key, fold.memoryId!);
    const writes = { folds: 0 };
    const storeFold = deps.store.storeFold.bind(deps.store);
    deps.store = { ...deps.store, storeFold: async (...a: Parameters<Store["storeFold"]>) => (writes.folds++, storeFold(...a)) };
    const requests = () => bus.published().filter((e) => e.detailType === EVENTS.CompactionRequested.detailType).length;

    for (let i = 0; i < 5; i++) {
      const r = await runTurn(deps, key, turn(8_700 + i * 10, `short note ${i}`));
      expect(r.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "reverted_recently" });
    }
    expect(writes.folds).toBe(0);
    expect(requests()).toBe(0);

    // EMERGENCY does not wait for the hold.
    const emergency = await runTurn(deps, key, turn(9_600));
    expect(emergency.compaction.reason).toBe("compaction_queued");
    expect(writes.folds).toBe(1);
    expect(requests()).toBe(1);
    // The EMERGENCY fold is dropped (no worker runs here), so the next turn may queue again.
    await store.discardFold(key, emergency.compaction.memoryId!, "QUEUED", "test", new Date().toISOString());

    // Past the hold (the replay grew by more than summaryMinTokens), a HARD turn queues again.
    await runTurn(deps, key, turn(8_800, "a long report: " + "the shelves move in order. ".repeat(80)));
    expect(requests()).toBe(2);
    expect((await foldsOf(key)).filter((f) => f.status === "QUEUED")).toHaveLength(1);
  });

  it("discards a prepared fold that no longer fits (a message it covers was folded since) and queues a new one", async () => {
    const { deps, fake, bus, metrics } = harness();
    const { key } = await seeded(deps, 30);
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    await bus.drain();
    const [prepared] = await foldsOf(key);
    // A manual compaction in between changes the chain: the prepared fold is stale.
    const manual = await compactIfNeeded(deps, key, { model: { contextWindow: WINDOW }, force: "EMERGENCY" });
    expect(manual.compacted).toBe(true);
    for (let i = 0; i < 12; i++) await appendMessage(deps, key, { role: i % 2 ? "USER" : "ASSISTANT", content: `More shelves arrived: batch ${i}.` });
    const callsBefore = fake.calls.length;
    const hard = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(fake.calls.length).toBe(callsBefore);
    expect(hard.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued" });
    expect((await store.getMemory(key, prepared!.id))!).toMatchObject({ status: "DISCARDED", metadata: { discardReason: expect.stringContaining("stale") } });
    expect(metrics.prepared).toContain("discarded");
    await bus.drain();
    const live = (await foldsOf(key)).filter((f) => f.status === "PREPARED");
    expect(live).toHaveLength(1);
    expect(live[0]!.metadata.supersededMemoryId).toBe(manual.memoryId);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a prepared fold covering a message pinned since is discarded, and the pinned message stays active", async () => {
    const { deps, fake, bus } = harness();
    const { key } = await seeded(deps, 30);
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    await bus.drain();
    const [prepared] = await foldsOf(key);
    const covered = prepared!.sourceRefs[3]!;
    await setMessageStrength(deps, key, covered, "pinned");
    const calls = fake.calls.length;
    const hard = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(fake.calls.length).toBe(calls);
    expect(hard.compaction).toMatchObject({ compacted: false, reason: "compaction_queued" });
    expect(hard.messages.map((m) => m.id)).toContain(covered);
    await bus.drain(); // the worker, asked to commit it, finds it no longer fits
    expect((await store.getMemory(key, prepared!.id))!.status).toBe("DISCARDED");
    await bus.drain();
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("an expired prepared fold is discarded as expired and prepared again", async () => {
    const { deps, bus, metrics } = harness({ env: { COMPACTION_PREPARED_TTL_MS: "1000" } });
    const { key } = await seeded(deps, 30);
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    await bus.drain();
    const [prepared] = await foldsOf(key);
    const clock = { now: () => new Date(Date.now() + 5_000) };
    deps.clock = clock;
    const hard = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(hard.compaction).toMatchObject({ compacted: false, reason: "compaction_queued" });
    expect((await store.getMemory(key, prepared!.id))!.status).toBe("DISCARDED");
    expect(metrics.prepared).toEqual(["expired"]);
    await bus.drain();
  });

  it("while the fold is queued, the answer leaves out the oldest foldable messages until it is below the emergency threshold", async () => {
    const { deps, fake } = harness({ worker: false });
    const { key, messages } = await seeded(deps, 40);
    const own = messages.reduce((n, m) => n + m.tokens, 0);
    // The engine counts twice our estimate; the prompt is at 99% of the window.
    const res = await runTurn(deps, key, { model: { contextWindow: Math.ceil((own * 2) / 0.99) }, prompt: { tokens: own * 2 } });
    const window = Math.ceil((own * 2) / 0.99);
    expect(fake.calls).toHaveLength(0);
    expect(res.compaction).toMatchObject({ mode: "EMERGENCY", compacted: false, reason: "compaction_queued" });
    const trimmed = res.compaction.trimmed!;
    expect(trimmed.messages).toBeGreaterThan(0);
    expect(res.messages).toHaveLength(messages.length - trimmed.messages);
    // What is left out is the oldest foldable: never the pinned task, never the triggering turn.
    const kept = new Set(res.messages.map((m) => m.id));
    expect(kept.has(messages[0]!.id)).toBe(true);
    expect(kept.has(messages.at(-1)!.id)).toBe(true);
    const left = messages.filter((m) => !kept.has(m.id));
    expect(left).toEqual(messages.slice(1, 1 + left.length));
    // The returned prompt is below the emergency threshold; the stored history is untouched.
    const returned = own * 2 - trimmed.tokens;
    expect(returned / window).toBeLessThan(0.95);
    expect(trimmed.tokens).toBe(Math.ceil(left.reduce((n, m) => n + m.tokens, 0) * 2));
    expect((await store.activeView(key))!.messages).toHaveLength(messages.length);
  });

  it("a prepared fold sized by foldTarget takes a call's result when a note sits between them", async () => {
    const { deps, bus } = harness({ env: { COMPACTION_FOLD_TARGET: "0.72" } });
    const { key, messages } = await withToolExchange(deps, "note");
    const [, call, note, result] = messages;
    // At 0.72 of the window the fold target is the prompt itself, so the fold frees its summary's
    // size: less than the large call alone, whose result must still come along.
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    await bus.drain();
    const [prepared] = await foldsOf(key);
    expect(prepared).toMatchObject({ status: "PREPARED", metadata: { preparedFor: "HARD" } });
    expect(prepared!.sourceRefs).toEqual([call!.id, note!.id, result!.id]);
  });

  it("the trimmed answer leaves out parallel calls made in separate messages with all their results", async () => {
    const { deps } = harness({ worker: false });
    const { key, messages } = await withToolExchange(deps, "parallel");
    const own = messages.reduce((n, m) => n + m.tokens, 0);
    // The prompt is at 96% of the window: trimming frees about 1%, less than the first call alone.
    const res = await runTurn(deps, key, { model: { contextWindow: Math.ceil(own / 0.96) }, prompt: { tokens: own } });
    expect(res.compaction).toMatchObject({ mode: "EMERGENCY", reason: "compaction_queued", trimmed: { messages: 4 } });
    expect(res.messages.map((m) => m.id)).toEqual([messages[0]!.id, ...messages.slice(5).map((m) => m.id)]);
  });

  it("an engine that sends what the last answer returned stays below the emergency threshold turn after turn while no fold lands", async () => {
    const { deps, fake } = harness({ worker: false });
    const { key } = await seeded(deps, 0);
    const window = 4_000;
    let held = ""; // what the engine holds: the last answer's block and messages
    let largest = 0;
    let trimmedTurns = 0;
    for (let i = 0; i < 300; i++) {
      const content = `turn ${i}: the forklift for aisle ${i % 9} is booked from ${8 + (i % 9)}:00 until noon, confirmed by Dana.`;
      const res = await runTurn(deps, key, { model: { contextWindow: window }, prompt: { chars: held.length + content.length }, message: { role: i % 2 ? "ASSISTANT" : "USER", content } });
      held = `${res.context.block}${res.messages.map((m) => m.content).join("")}`;
      largest = Math.max(largest, Math.ceil(held.length / 4));
      if (res.compaction.trimmed) trimmedTurns++;
    }
    expect(fake.calls).toHaveLength(0); // nothing ever folded: trimming alone kept the prompt in
    expect(largest).toBeLessThan(0.95 * window);
    expect(trimmedTurns).toBeGreaterThan(0);
  }, 120_000); // 300 turns against the engine: about 15 s alone, more with the suite on two cores

  it("duplicate and late deliveries of CompactionRequested are harmless", async () => {
    const { deps, fake, bus, worked } = harness();
    const { key } = await seeded(deps, 30);
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    const request = bus.published().find((e) => e.detailType === EVENTS.CompactionRequested.detailType)!;
    await bus.deliver(request);
    await bus.drain();
    expect(fake.calls).toHaveLength(1);
    expect(worked).toEqual(expect.arrayContaining([expect.objectContaining({ done: "prepared" }), expect.objectContaining({ skipped: "fold is PREPARED" })]));
    await runTurn(deps, key, turn(8_700, "Go on."));
    await bus.drain();
    expect(await handleCompactionRequested(deps, request.detail)).toMatchObject({ skipped: "fold is OK" });
    expect(fake.calls).toHaveLength(1);
    expect((await store.listMemories(key)).filter((m) => m.status === "OK")).toHaveLength(1);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a delivery that read the fold before another prepared it does not summarize it again", async () => {
    const { deps, fake, bus } = harness({ worker: false });
    const { key } = await seeded(deps, 30);
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    const request = bus.published().find((e) => e.detailType === EVENTS.CompactionRequested.detailType)!;
    const { foldId } = request.detail as { foldId: string };
    const queued = (await store.getMemory(key, foldId))!;
    expect(await handleCompactionRequested(deps, request.detail)).toMatchObject({ done: "prepared" });
    // The late delivery's first read returns the row as it was before the first worker ran.
    let stale = true;
    const lagging: Store = Object.create(store);
    lagging.getMemory = async (k, id) => (stale && id === foldId ? ((stale = false), structuredClone(queued)) : store.getMemory(k, id));
    expect(await handleCompactionRequested({ ...deps, store: lagging }, request.detail)).toMatchObject({ skipped: "fold is PREPARED" });
    expect(fake.calls).toHaveLength(1);
    expect((await store.getMemory(key, foldId))!.status).toBe("PREPARED");
    expect(await checkInvariants(store, key, { noLease: true })).toEqual([]);
  });
});

describe("manual compaction within a budget", () => {
  it("answers the finished fold when it completes within the budget", async () => {
    const { deps } = harness({ env: { COMPACTION_MANUAL_BUDGET_MS: "5000" } });
    const { key } = await seeded(deps, 20);
    const out = await compactManually(deps, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    expect(out.status).toBe(200);
    expect(out.result).toMatchObject({ compacted: true, mode: "HARD" });
  });

  it("answers 202 compaction_queued past the budget; the worker commits it once, as the queued row", async () => {
    const watched = awaitedStore(store);
    const { deps, fake, bus, metrics } = harness({ env: { COMPACTION_MANUAL_BUDGET_MS: "300" }, store: watched.store });
    const { key } = await seeded(deps, 20);
    // The in-request fold summarizes until the test lets it go, so the request runs out of budget.
    const inRequest = heldSummary();
    fake.script.push(inRequest.answer);
    const out = await compactManually(deps, key, { model: { contextWindow: WINDOW }, force: "HARD", instructions: "Keep aisle numbers." });
    expect(out.status).toBe(202);
    expect(out.result).toMatchObject({ compacted: false, reason: "compaction_queued", mode: "HARD" });
    await bus.drain();
    // The abandoned in-request fold finishes: its commit is refused and it lets its lease go.
    const mark = watched.mark();
    inRequest.release();
    const late = await watched.finished("commitCompaction", () => true, mark);
    expect(late.result).toMatchObject({ ok: false });
    const owner = (late.args[1] as { leaseOwner: string }).leaseOwner;
    await watched.finished("releaseLease", (c) => c.args[1] === owner, mark);
    const ok = (await store.listMemories(key)).filter((m) => m.status === "OK");
    expect(ok.map((m) => m.id)).toEqual([out.result.memoryId]);
    expect(ok[0]!.metadata).toMatchObject({ producedBy: "worker", mode: "HARD" });
    expect(fake.calls.at(-1)!.instructions).toContain("Keep aisle numbers.");
    expect(metrics.runs).toHaveLength(1);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});

describe("manual compaction that gave up its budget", () => {
  it("a fold that takes the lease only after the request gave up lets it go without summarizing", async () => {
    const { deps, fake } = harness({ worker: false, env: { COMPACTION_MANUAL_BUDGET_MS: "50" } });
    const { key } = await seeded(deps, 20);
    // The in-request fold reaches the lease only once the request has answered 202.
    let letGo!: () => void;
    const answered = new Promise<void>((resolve) => (letGo = resolve));
    let lateLease: ReturnType<Store["acquireLease"]> | undefined;
    const slow: Store = Object.create(store);
    slow.acquireLease = (k, lease) => (lateLease = answered.then(() => store.acquireLease(k, lease)));
    const out = await compactManually({ ...deps, store: slow }, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    expect(out.status).toBe(202);
    letGo();
    expect(await lateLease).toMatchObject({ ok: true });
    await vi.waitFor(async () => expect((await store.activeView(key))!.state.lease).toBeNull(), { timeout: 10_000 });
    expect(fake.calls).toHaveLength(0);
    expect((await store.listMemories(key)).filter((m) => m.status === "OK")).toEqual([]);
    // Only the queued row remains, for the worker.
    expect((await foldsOf(key)).map((m) => [m.id, m.status])).toEqual([[out.result.memoryId, "QUEUED"]]);
  });
});

describe("range jobs (accepted offers) in the worker", () => {
  /** Accepts an offer of the range (which records its one job) and returns its answer's delivery. */
  async function accepted(key: ProcessKey, range: { from: string; to: string; topicLabel: string; inboxItemId: string }) {
    const { inboxItemId, ...payload } = range;
    const at = new Date().toISOString();
    await store.putInboxItem(TENANT, { id: inboxItemId, processId: key.processId, type: "APPROVAL", tags: [OFFER_TAG], status: "OPEN", payload, createdAt: at });
    expect(await store.answerInboxItem(TENANT, inboxItemId, "ACCEPTED", at)).toMatchObject({ ok: true });
    return (deps: ServiceDeps) => handleInboxAnswered(deps, { tenantId: TENANT, itemId: inboxItemId, accepted: true }) as Promise<RangeResult>;
  }

  it("queues the range for the worker and answers at once; the worker folds it once, as the queued row", async () => {
    const { deps, fake, bus } = harness({ worker: false });
    const { key, messages } = await seeded(deps, 20);
    const range = { from: messages[3]!.createdAt, to: messages[9]!.createdAt, topicLabel: "aisles", inboxItemId: "inb_aisles" };
    const deliver = await accepted(key, range);
    const calls = fake.calls.length;
    const queued = await deliver(deps);
    expect(queued).toMatchObject({ compactedMessages: 0, reason: "compaction_queued" });
    expect(fake.calls.length).toBe(calls); // nothing summarized in the handler
    // A duplicate delivery asks for the same row again instead of queuing a second one.
    expect(await deliver(deps)).toMatchObject({ memoryId: queued.memoryId, reason: "compaction_queued" });
    expect((await foldsOf(key)).map((f) => f.id)).toEqual([queued.memoryId]);
    const requests = bus.published().filter((e) => e.detailType === EVENTS.CompactionRequested.detailType);
    expect(requests.map((e) => e.detail)).toEqual([0, 1].map(() => expect.objectContaining({ foldId: queued.memoryId, job: "range", mode: "RANGE" })));

    // Two deliveries at once: one folds, the other finds the fold done.
    const outcomes = await Promise.all(requests.map((e) => handleCompactionRequested(deps, e.detail)));
    expect(outcomes.filter((o) => "done" in o && o.done === "committed")).toHaveLength(1);
    const ok = (await store.listMemories(key)).filter((m) => m.status === "OK");
    expect(ok.map((m) => m.id)).toEqual([queued.memoryId]);
    expect(ok[0]!.metadata).toMatchObject({ recompaction: true, topicLabel: "aisles", producedBy: "worker", mode: "RANGE" });
    // Once it committed, its offer's job is done: a later delivery does nothing.
    expect(await deliver(deps)).toMatchObject({ memoryId: queued.memoryId, reason: "already_folded" });
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a range job racing a prepared fold's commit and a manual compaction: every fold once, the range folded, the chain unforked", async () => {
    const { deps, bus } = harness({ worker: false });
    const { key, messages } = await seeded(deps, 40);
    // A prepared HARD fold waits for its threshold.
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    const [prepareJob] = bus.published().filter((e) => e.detailType === EVENTS.CompactionRequested.detailType);
    expect(await handleCompactionRequested(deps, prepareJob!.detail)).toMatchObject({ done: "prepared" });
    const range = { from: messages[10]!.createdAt, to: messages[25]!.createdAt, topicLabel: "labels", inboxItemId: "inb_labels" };
    const deliver = await accepted(key, range);
    const inRange = new Set(selectRange((await settledView(deps, key)).messages, range).map((m) => m.id));
    expect(inRange.size).toBeGreaterThan(0);
    const queued = await deliver(deps);
    const rangeRequest = bus.published().find((e) => e.detail.foldId === queued.memoryId)!;

    // All at once: a turn at HARD commits the prepared fold, a manual compaction, and the range job twice.
    const [hardTurn, manual, ...worker] = await Promise.all([
      runTurn(deps, key, turn(8_700)),
      compactManually(deps, key, { model: { contextWindow: WINDOW }, force: "HARD" }),
      handleCompactionRequested(deps, rangeRequest.detail),
      handleCompactionRequested(deps, rangeRequest.detail),
    ]);
    expect(worker.filter((o) => "done" in o && o.done === "committed").length).toBeLessThanOrEqual(1);
    expect(manual.status).toBe(200);
    void hardTurn;

    const memories = await store.listMemories(key);
    const job = memories.find((m) => m.id === queued.memoryId)!;
    // The range job ended: folded as its own row, or nothing was left for it to fold.
    expect(["OK", "DISCARDED"]).toContain(job.status);
    if (job.status === "DISCARDED") expect(job.metadata.discardReason).toBe("nothing_in_range");
    expect(memories.filter((m) => m.metadata.recompaction && m.status === "OK").length).toBe(job.status === "OK" ? 1 : 0);
    // Whoever came first, every foldable message of the range is archived now.
    const all = await store.listMessages(key, { limit: 1000 });
    for (const m of all.items.filter((x) => inRange.has(x.id))) expect(m.archivedInMemoryId, m.id).not.toBeNull();
    await runTurn(deps, key, turn(3_000)); // settles what the race left (stale folds)
    expect(await checkInvariants(store, key, { appendedIds: messages.map((m) => m.id), settled: true, noLease: true })).toEqual([]);
  });
});
