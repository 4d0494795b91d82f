/**
 * A prepared fold that covers too little when it is due is extended rather than committed as it
 * is and followed by another (docs/compaction.md, "Who commits a prepared fold"), against
 * DynamoDB Local: one summarizer call adds the messages appended since, and one commit covers
 * both parts. Time is a manual clock; the worker is delivered by hand, and the store calls or the
 * summarizer call the test orders against turns are held until the test releases them.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { handleCompactionRequested } from "../../core/adapters/events/handlers.js";
import { EVENTS } from "../../core/domain/events.js";
import type { Memory, Role } from "../../core/domain/model.js";
import type { SummarizeInput, SummarizeOutcome } from "../../core/ports/summarizer.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { checkInvariants, readAllMessages } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

const TENANT = "extend";
const WINDOW = 10_000;
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("extend"));
});

function harness() {
  const time = { now: Date.parse("2026-12-01T10:00:00.000Z") };
  const c = testContainer({ store, retryDelaysMs: [50, 100], clock: { now: () => new Date(time.now) } });
  return { ...c, advance: (ms: number) => void (time.now += ms) };
}

type Harness = ReturnType<typeof harness>;

const turn = (ratio: number, content = "Go on.") => ({ message: { role: "USER" as const, content }, model: { contextWindow: WINDOW }, prompt: { tokens: Math.round(ratio * WINDOW) } });
const folds = async (key: ProcessKey) => (await store.listMemories(key)).filter((m) => m.status !== "OK");
const okMemories = async (key: ProcessKey) => (await store.listMemories(key)).filter((m) => m.status === "OK");
const requests = (h: Harness, job: string) => h.bus.published().filter((e) => e.detailType === EVENTS.CompactionRequested.detailType && (e.detail as { job?: string }).job === job);

/** A held promise: `reached` resolves when the code under test gets there, `release` lets it go on. */
function hold() {
  let release!: () => void;
  let reach!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (reach = r));
  return { release, reached, reach, released };
}

/**
 * A process whose HARD fold the worker prepared over its 30 short messages, then 30 long ones
 * appended (some 11,000 chars each ... 375 tokens): committing the fold as it is would leave the
 * prompt above hardThreshold. A turn at 0.94 asks the worker to commit it.
 */
async function outgrownFold(h: Harness): Promise<{ key: ProcessKey; fold: Memory; request: { detail: unknown } }> {
  const key = { tenantId: TENANT, processId: `extend-${++seq}` };
  await upsertProcess(h.deps, TENANT, key.processId, { projectId: "proj" });
  await appendMessage(h.deps, key, { role: "USER", content: "Plan the warehouse move." });
  for (let i = 0; i < 30; i++) {
    h.advance(1_000);
    await appendMessage(h.deps, key, { role: i % 2 === 0 ? "ASSISTANT" : "USER", content: `step ${i}: shelf ${i} goes to aisle ${i % 7}.` });
  }
  expect((await runTurn(h.deps, key, turn(0.72, "Which aisle first?"))).compaction.reason).toBe("compaction_queued");
  const [prepare] = requests(h, "prepare");
  expect(await handleCompactionRequested(h.deps, prepare!.detail)).toMatchObject({ done: "prepared" });
  const [fold] = await folds(key);
  expect(fold).toMatchObject({ status: "PREPARED" });
  for (let i = 0; i < 30; i++) {
    h.advance(1_000);
    const role: Role = i % 2 === 0 ? "ASSISTANT" : "USER";
    await appendMessage(h.deps, key, { role, content: `long step ${i}: ${"crate ".repeat(250)}` });
  }
  const hard = await runTurn(h.deps, key, turn(0.94));
  expect(hard.compaction).toMatchObject({ mode: "HARD", reason: "compaction_queued", memoryId: fold!.id });
  const [request] = requests(h, "commit");
  return { key, fold: (await store.getMemory(key, fold!.id))!, request: request! };
}

/** Every message is active or archived into an OK summary (the chain leads to the replayed one: one OK here). */
async function noMessageLost(key: ProcessKey) {
  const ok = new Set((await okMemories(key)).map((m) => m.id));
  for (const m of await readAllMessages(store, key)) {
    if (m.archivedInMemoryId !== null) expect(ok.has(m.archivedInMemoryId)).toBe(true);
  }
  expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
}

describe("a prepared fold that covers too little", () => {
  it("is extended by one summarizer call over the newer messages, and one commit covers both parts", async () => {
    const h = harness();
    const { key, fold, request } = await outgrownFold(h);
    const calls = h.fake.calls.length;
    expect(await handleCompactionRequested(h.deps, request.detail as never)).toMatchObject({ done: "committed", foldId: fold.id });
    expect(h.fake.calls.length).toBe(calls + 1);
    // The prepared summary is carried on as the prior summary; only newer messages are sent.
    expect(h.fake.calls.at(-1)!.priorSummary).toBe(fold.content);
    expect(h.fake.calls.at(-1)!.messages.some((m) => fold.sourceRefs.includes(m.id))).toBe(false);
    const [memory, ...more] = await okMemories(key);
    expect(more).toEqual([]);
    expect(memory!.id).toBe(fold.id);
    expect(memory!.sourceRefs.slice(0, fold.sourceRefs.length)).toEqual(fold.sourceRefs);
    const added = memory!.sourceRefs.length - fold.sourceRefs.length;
    expect(added).toBeGreaterThan(0);
    expect(memory!.metadata).toMatchObject({ producedBy: "worker", extended: { messages: added }, compactedMessages: memory!.sourceRefs.length });
    expect(memory!.metadata.supersededMemoryId).toBeUndefined(); // the same chain: the first summary of the process
    expect(memory!.metadata.tokensAfter! / WINDOW).toBeLessThan(0.85);
    // The loss report stands for both parts.
    expect(memory!.metadata.loss!.units).toBeGreaterThan(fold.metadata.loss!.units);
    expect(h.metrics.prepared).toEqual(["extended", "used"]);
    await noMessageLost(key);
  });

  it("whose extension fails is committed as it is, and the next fold is queued", async () => {
    const h = harness();
    const { key, fold, request } = await outgrownFold(h);
    const calls = h.fake.calls.length;
    h.fake.script.push(new Error("provider down"), new Error("provider down"), new Error("provider down"));
    expect(await handleCompactionRequested(h.deps, request.detail as never)).toMatchObject({ done: "committed", foldId: fold.id });
    expect(h.fake.calls.length).toBeGreaterThan(calls); // the extension was tried
    const [memory] = await okMemories(key);
    expect(memory!.sourceRefs).toEqual(fold.sourceRefs);
    expect(memory!.content).toBe(fold.content);
    expect(memory!.metadata.extended).toBeUndefined();
    expect((await store.listMemories(key)).filter((m) => m.status === "FAILED")).toEqual([]);
    expect((await folds(key)).map((f) => f.status)).toEqual(["QUEUED"]);
    await noMessageLost(key);
  });

  it("whose extension the store fails to write is committed as it is", async () => {
    const h = harness();
    const { key, fold, request } = await outgrownFold(h);
    const worker: Store = Object.create(store);
    worker.extendFold = async () => {
      throw new Error("the table is unreachable");
    };
    expect(await handleCompactionRequested({ ...h.deps, store: worker }, request.detail as never)).toMatchObject({ done: "committed", foldId: fold.id });
    const [memory] = await okMemories(key);
    expect(memory!.sourceRefs).toEqual(fold.sourceRefs);
    expect(memory!.metadata.extended).toBeUndefined();
    await noMessageLost(key);
  });

  it("an EMERGENCY turn while the worker writes the extension trims its answer; one fold is committed, with both parts", async () => {
    const h = harness();
    const { key, fold, request } = await outgrownFold(h);
    const held = hold();
    const worker: Store = Object.create(store);
    worker.extendFold = async (...args) => {
      held.reach();
      await held.released;
      return store.extendFold(...args);
    };
    const job = handleCompactionRequested({ ...h.deps, store: worker }, request.detail as never);
    await Promise.race([held.reached, job.then((out) => Promise.reject(new Error(`the worker ended without extending: ${JSON.stringify(out)}`)))]);
    const emergency = await runTurn(h.deps, key, turn(0.97));
    expect(emergency.compaction).toMatchObject({ mode: "EMERGENCY", compacted: false, reason: "compaction_in_progress" });
    expect(emergency.compaction.trimmed?.messages).toBeGreaterThan(0);
    held.release();
    expect(await job).toMatchObject({ done: "committed", foldId: fold.id });
    const ok = await okMemories(key);
    expect(ok.map((m) => m.id)).toEqual([fold.id]);
    expect(ok[0]!.sourceRefs.length).toBeGreaterThan(fold.sourceRefs.length);
    await noMessageLost(key);
  });

  it("an EMERGENCY turn that read the process before the extension's newer messages leaves the extended fold to the worker", async () => {
    const h = harness();
    const { key, fold, request } = await outgrownFold(h);
    // The turn reads its view, then waits at its read of the fold until the test releases it.
    const turnHold = hold();
    const turnStore: Store = Object.create(store);
    turnStore.getMemory = async (k, id) => {
      if (id === fold.id) {
        turnHold.reach();
        await turnHold.released;
      }
      return store.getMemory(k, id);
    };
    // The worker waits at its read of the fold after writing the extension.
    const workerHold = hold();
    let extended = false;
    const worker: Store = Object.create(store);
    worker.extendFold = async (...args) => {
      const out = await store.extendFold(...args);
      extended = out.ok;
      return out;
    };
    worker.getMemory = async (k, id) => {
      if (extended) {
        workerHold.reach();
        await workerHold.released;
      }
      return store.getMemory(k, id);
    };
    const emergency = runTurn({ ...h.deps, store: turnStore }, key, turn(0.97));
    await turnHold.reached;
    for (let i = 0; i < 8; i++) {
      h.advance(1_000);
      await appendMessage(h.deps, key, { role: i % 2 === 0 ? "ASSISTANT" : "USER", content: `later step ${i}: ${"pallet ".repeat(250)}` });
    }
    const job = handleCompactionRequested({ ...h.deps, store: worker }, request.detail as never);
    await Promise.race([workerHold.reached, job.then((out) => Promise.reject(new Error(`the worker ended without extending: ${JSON.stringify(out)}`)))]);
    turnHold.release();
    expect((await emergency).compaction).toMatchObject({ mode: "EMERGENCY", compacted: false });
    expect((await store.getMemory(key, fold.id))!.status).toBe("PREPARED");
    workerHold.release();
    expect(await job).toMatchObject({ done: "committed", foldId: fold.id });
    const ok = await okMemories(key);
    expect(ok.map((m) => m.id)).toEqual([fold.id]);
    expect(ok[0]!.metadata.extended?.messages).toBeGreaterThan(0);
    await noMessageLost(key);
  });

  it("a newer message pinned while the summarizer extends the fold stays out: the fold is committed as it was prepared", async () => {
    const h = harness();
    const { key, fold, request } = await outgrownFold(h);
    const held = hold();
    const asked: SummarizeInput[] = [];
    h.fake.script.push(async (input): Promise<SummarizeOutcome> => {
      asked.push(input);
      held.reach();
      await held.released;
      return { ok: true, summary: `${input.priorSummary} | folded ${input.messages.map((m) => m.id).join(",")}` };
    });
    const job = handleCompactionRequested(h.deps, request.detail as never);
    await Promise.race([held.reached, job.then((out) => Promise.reject(new Error(`the worker ended without extending: ${JSON.stringify(out)}`)))]);
    const newer = asked[0]!.messages[0]!.id;
    await setMessageStrength(h.deps, key, newer, "pinned");
    held.release();
    expect(await job).toMatchObject({ done: "committed", foldId: fold.id });
    const [memory] = await okMemories(key);
    expect(memory!.sourceRefs).toEqual(fold.sourceRefs);
    expect(memory!.metadata.extended).toBeUndefined();
    const pinned = (await readAllMessages(store, key)).find((m) => m.id === newer)!;
    expect(pinned.archivedInMemoryId).toBeNull();
    await noMessageLost(key);
  });
});
