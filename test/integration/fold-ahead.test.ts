/**
 * Folds ready before they are needed (docs/compaction.md, "Off the turn's critical path"), against
 * DynamoDB Local: a turn queues the HARD fold from the measured growth and prepare latency, the
 * worker (not the turn) commits a prepared fold once it is due, and queues the next one when it will
 * be needed within one prepare latency. Time is a manual clock; the worker is the local bus, or
 * delivered by hand where the test orders it against turns.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { handleCompactionRequested } from "../../core/adapters/events/handlers.js";
import { EVENTS } from "../../core/domain/events.js";
import type { Memory, Role } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { queueFold } from "../../core/services/compaction/transitions.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { checkInvariants } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

const TENANT = "ahead";
const WINDOW = 10_000;
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("ahead"));
});

/** Background deps on a manual clock; with `worker` the bus delivers CompactionRequested to the worker. */
function harness(o: { worker?: boolean; store?: Store } = {}) {
  const time = { now: Date.parse("2026-12-01T10:00:00.000Z") };
  const clock = { now: () => new Date(time.now) };
  const c = testContainer({ store: o.store ?? store, retryDelaysMs: [50, 100], worker: o.worker !== false, clock });
  return { ...c, advance: (ms: number) => void (time.now += ms) };
}

type Harness = ReturnType<typeof harness>;

/** A process of `n` short messages after its pinned task, one every `everyMs`. */
async function seeded(h: Harness, n: number, everyMs: number): Promise<ProcessKey> {
  const key = { tenantId: TENANT, processId: `ahead-${++seq}` };
  await upsertProcess(h.deps, TENANT, key.processId, { projectId: "proj" });
  await appendMessage(h.deps, key, { role: "USER", content: "Plan the warehouse move." });
  await appendMore(h, key, n, everyMs);
  return key;
}

async function appendMore(h: Harness, key: ProcessKey, n: number, everyMs: number, from = 0) {
  for (let i = from; i < from + n; i++) {
    h.advance(everyMs);
    const role: Role = i % 2 === 0 ? "ASSISTANT" : "USER";
    await appendMessage(h.deps, key, { role, content: `step ${i}: shelf ${i} goes to aisle ${i % 7} on day ${i % 5}.` });
  }
}

const turn = (ratio: number, content = "Go on.") => ({ message: { role: "USER" as const, content }, model: { contextWindow: WINDOW }, prompt: { tokens: Math.round(ratio * WINDOW) } });
const folds = async (key: ProcessKey) => (await store.listMemories(key)).filter((m) => m.status !== "OK");
const okMemories = async (key: ProcessKey) => (await store.listMemories(key)).filter((m) => m.status === "OK");
const requests = (h: Harness, job: string) => h.bus.published().filter((e) => e.detailType === EVENTS.CompactionRequested.detailType && (e.detail as { job?: string }).job === job);

/** A process whose HARD fold the worker prepared, delivered by hand after `prepareMs` on the clock. */
async function withPreparedFold(h: Harness, o: { prepareMs?: number } = {}): Promise<{ key: ProcessKey; fold: Memory }> {
  const key = await seeded(h, 30, 1_000);
  const queued = await runTurn(h.deps, key, turn(0.72, "Which aisle first?"));
  expect(queued.compaction.reason).toBe("compaction_queued");
  h.advance(o.prepareMs ?? 0);
  const [request] = requests(h, "prepare");
  expect(await handleCompactionRequested(h.deps, request!.detail)).toMatchObject({ done: "prepared" });
  const [fold] = await folds(key);
  expect(fold).toMatchObject({ status: "PREPARED" });
  return { key, fold: fold! };
}

describe("when a turn queues the fold", () => {
  it("a process that grows fast gets its HARD fold queued before prepareThreshold, as early as the growth over a prepare requires", async () => {
    const h = harness({ worker: false });
    const key = await seeded(h, 30, 1_000);
    const out = await runTurn(h.deps, key, turn(0.6, "Which aisle first?"));
    expect(out.compaction).toMatchObject({ mode: "SOFT", compacted: false, reason: "compaction_queued" });
    const [fold] = await folds(key);
    expect(fold).toMatchObject({ status: "QUEUED", metadata: { preparedFor: "HARD", job: "prepare" } });
    expect(h.fake.calls).toHaveLength(0);
  });

  it("a process that grows slowly gets it at prepareThreshold, never later", async () => {
    const h = harness({ worker: false });
    const key = await seeded(h, 30, 45_000);
    await runTurn(h.deps, key, turn(0.6, "Which aisle first?"));
    expect((await folds(key)).filter((f) => f.metadata.preparedFor === "HARD")).toEqual([]);
    h.advance(45_000);
    await runTurn(h.deps, key, turn(0.7, "And then?"));
    expect((await folds(key)).map((f) => f.metadata.preparedFor)).toContain("HARD");
  });
});

describe("the worker commits a prepared fold that is due", () => {
  it("a turn at HARD asks the worker to commit it and answers the current view; the worker commits it once, and a redelivered request does nothing", async () => {
    const h = harness({ worker: false });
    const { key, fold } = await withPreparedFold(h);
    const hard = await runTurn(h.deps, key, turn(0.87));
    expect(hard.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued", memoryId: fold.id });
    expect(hard.context.block).not.toContain("Earlier Conversation");
    expect((await store.getMemory(key, fold.id))!.status).toBe("PREPARED"); // the turn committed nothing
    const [request] = requests(h, "commit");
    expect(request!.detail).toMatchObject({ foldId: fold.id, mode: "HARD", job: "commit" });
    expect(await handleCompactionRequested(h.deps, request!.detail)).toMatchObject({ done: "committed", foldId: fold.id });
    const memory = (await store.getMemory(key, fold.id))!;
    expect(memory).toMatchObject({ status: "OK", metadata: { producedBy: "worker", mode: "HARD", preparedFor: "HARD" } });
    expect(h.metrics.prepared).toEqual(["used"]);
    expect(h.fake.calls).toHaveLength(1);
    const next = await runTurn(h.deps, key, turn(0.5));
    expect(next.context.block).toContain("## Earlier Conversation (compacted)");
    // Redelivered: the fold is OK, nothing is committed twice.
    expect(await handleCompactionRequested(h.deps, request!.detail)).toMatchObject({ skipped: "fold is OK" });
    expect(await okMemories(key)).toHaveLength(1);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a request that arrives after an EMERGENCY turn committed the fold itself does nothing", async () => {
    const h = harness({ worker: false });
    const { key, fold } = await withPreparedFold(h);
    await runTurn(h.deps, key, turn(0.87));
    const [request] = requests(h, "commit");
    const emergency = await runTurn(h.deps, key, turn(0.96));
    expect(emergency.compaction).toMatchObject({ mode: "EMERGENCY", compacted: true, memoryId: fold.id });
    expect(await handleCompactionRequested(h.deps, request!.detail)).toMatchObject({ skipped: "fold is OK" });
    expect(await okMemories(key)).toHaveLength(1);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a request that arrives after a manual compaction discards the fold as stale; the manual summary stays replayed", async () => {
    const h = harness({ worker: false });
    const { key, fold } = await withPreparedFold(h);
    await runTurn(h.deps, key, turn(0.87));
    const [request] = requests(h, "commit");
    const manual = await compactManually(h.deps, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    expect(manual.result.compacted).toBe(true);
    expect(await handleCompactionRequested(h.deps, request!.detail)).toMatchObject({ skipped: "stale", foldId: fold.id });
    expect((await store.getMemory(key, fold.id))!.status).toBe("DISCARDED");
    expect((await okMemories(key)).map((m) => m.id)).toEqual([manual.result.memoryId]);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a stalled worker: while its commit waits, an EMERGENCY turn commits the fold itself and the worker's late commit does nothing", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atHold = new Promise<void>((r) => (reached = r));
    let holding = true;
    // The worker's first read of the fold returns only when the test releases it.
    const held: Store = Object.create(store);
    held.getMemory = async (k, id) => {
      const read = await store.getMemory(k, id);
      if (holding && read?.status === "PREPARED") {
        holding = false;
        reached();
        await released;
      }
      return read;
    };
    const h = harness({ worker: false });
    const { key, fold } = await withPreparedFold(h);
    await runTurn(h.deps, key, turn(0.87));
    const [request] = requests(h, "commit");
    const late = handleCompactionRequested({ ...h.deps, store: held }, request!.detail);
    await atHold;
    const emergency = await runTurn(h.deps, key, turn(0.96));
    expect(emergency.compaction).toMatchObject({ mode: "EMERGENCY", compacted: true, memoryId: fold.id });
    release();
    expect(await late).toMatchObject({ skipped: "stale", foldId: fold.id });
    expect(await okMemories(key)).toHaveLength(1);
    expect((await store.getMemory(key, fold.id))!.status).toBe("OK");
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a stalled worker holding the lease: an EMERGENCY turn trims its answer instead, and the worker's commit lands", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atHold = new Promise<void>((r) => (reached = r));
    const held: Store = Object.create(store);
    held.commitCompaction = async (...args) => {
      reached();
      await released;
      return store.commitCompaction(...args);
    };
    const h = harness({ worker: false });
    const { key, fold } = await withPreparedFold(h);
    await runTurn(h.deps, key, turn(0.87));
    const [request] = requests(h, "commit");
    const stalled = handleCompactionRequested({ ...h.deps, store: held }, request!.detail);
    await atHold;
    const emergency = await runTurn(h.deps, key, turn(0.97));
    expect(emergency.compaction).toMatchObject({ mode: "EMERGENCY", compacted: false, reason: "compaction_in_progress" });
    expect(emergency.compaction.trimmed?.messages).toBeGreaterThan(0);
    release();
    expect(await stalled).toMatchObject({ done: "committed", foldId: fold.id });
    expect((await okMemories(key)).map((m) => m.id)).toEqual([fold.id]);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("the worker that commits queues the next fold at the new version when it will be needed within one prepare latency", async () => {
    const h = harness({ worker: false });
    // The fold took 20 s from queued to prepared; 24 messages came in meanwhile, one a second.
    const { key, fold } = await withPreparedFold(h, { prepareMs: 20_000 });
    await appendMore(h, key, 24, 1_000, 100);
    await runTurn(h.deps, key, turn(0.87));
    const [request] = requests(h, "commit");
    expect(await handleCompactionRequested(h.deps, request!.detail)).toMatchObject({ done: "committed", foldId: fold.id });
    const version = (await store.activeView(key))!.state.version;
    const [next] = await folds(key);
    expect(next).toMatchObject({ status: "QUEUED", metadata: { preparedFor: "HARD", job: "prepare", queuedAtVersion: version } });
    expect(requests(h, "prepare").map((e) => (e.detail as { foldId: string }).foldId)).toContain(next!.id);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a slow process: the worker commits and queues nothing more", async () => {
    const h = harness({ worker: false });
    const { key } = await withPreparedFold(h, { prepareMs: 1_000 });
    h.advance(120_000);
    await runTurn(h.deps, key, turn(0.87));
    const [request] = requests(h, "commit");
    expect(await handleCompactionRequested(h.deps, request!.detail)).toMatchObject({ done: "committed" });
    expect(await folds(key)).toEqual([]);
  });
});

describe("two automatic folds after a race", () => {
  it("the turn keeps the older queued fold, which the worker takes first, and discards the newer as a duplicate", async () => {
    const h = harness({ worker: false });
    const key = await seeded(h, 30, 45_000);
    const view = (await store.activeView(key))!;
    const older = await queueFold(h.deps, key, view, { mode: "HARD", job: "prepare", contextWindow: WINDOW, tokensBefore: 7_200 });
    h.advance(1_000);
    const newer = await queueFold(h.deps, key, view, { mode: "HARD", job: "prepare", contextWindow: WINDOW, tokensBefore: 7_200 });
    const out = await runTurn(h.deps, key, turn(0.72));
    expect(out.compaction).toMatchObject({ reason: "compaction_queued", memoryId: older.id });
    expect((await store.getMemory(key, newer.id))!).toMatchObject({ status: "DISCARDED", metadata: { discardReason: expect.stringContaining("duplicate") } });
    expect((await store.getMemory(key, older.id))!.status).toBe("QUEUED");
  });
});
