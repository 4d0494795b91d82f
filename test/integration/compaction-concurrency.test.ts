/**
 * Concurrent compactions of one process against the real DynamoDB Local engine: the lease makes
 * one caller win and pay for one summary, the others back off, and the invariants hold.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../core/domain/model.js";
import type { Clock } from "../../core/ports/clock.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { compactIfNeeded, type CompactionRequest } from "../../core/services/compaction/compaction.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage } from "../../core/services/messages.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { gate, seedChat } from "../support/race.js";
import { checkInvariants, readAllMessages } from "../../tools/invariants.js";
import { testContainer } from "../support/container.js";

const TENANT = "race";
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("race"));
});

/** One "container": its own deps, summarizer, metrics and bus over the shared table. */
function container(options: { env?: Record<string, string>; delayMs?: number; clock?: Clock } = {}) {
  const c = testContainer({ store, env: options.env, clock: options.clock });
  c.fake.delayMs = options.delayMs ?? 0;
  return c;
}

/** A clock the test moves forward, so a lease expires without sleeping (and without flaking). */
function movableClock() {
  let offsetMs = 0;
  return { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => void (offsetMs += ms) };
}

async function seeded(deps: ServiceDeps, n = 24): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId: TENANT, processId: `race-${++seq}` };
  return { key, messages: await seedChat(deps, key, n) };
}

/**
 * Starts `n` calls at once. `untilSettled(k)` resolves once k of them have finished: while the
 * (gated) winner holds the lease, only calls that back off can finish.
 */
function raceAll<T>(n: number, call: (i: number) => Promise<T>) {
  let settled = 0;
  const waiting: Array<{ k: number; resolve: (done: boolean) => void }> = [];
  const finished = () => {
    settled++;
    for (const w of waiting.filter((w) => settled >= w.k)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(true);
    }
  };
  const all = Promise.all(Array.from({ length: n }, (_, i) => call(i).finally(finished)));
  return {
    all,
    untilSettled(k: number): Promise<boolean> {
      return settled >= k ? Promise.resolve(true) : new Promise((resolve) => waiting.push({ k, resolve }));
    },
  };
}

const HARD: CompactionRequest = { model: { contextWindow: 100_000 }, force: "HARD" };
const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);

describe("concurrent compactions of one process", () => {
  it("12 calls in one container: one winner, one summarizer call, the rest back off", async () => {
    const { deps, fake, metrics, bus } = container();
    const { key, messages } = await seeded(deps);
    const summary = gate();
    fake.script.push(summary.answer);
    const racing = raceAll(12, () => compactIfNeeded(deps, key, HARD));
    await summary.started;
    const backedOff = await racing.untilSettled(11); // every loser backs off while the winner holds the lease
    summary.release();
    const results = await racing.all;
    expect(backedOff).toBe(true);

    const winners = results.filter((r) => r.compacted);
    expect(winners).toHaveLength(1);
    expect(fake.calls).toHaveLength(1);
    for (const loser of results.filter((r) => !r.compacted)) {
      expect(loser).toMatchObject({ reason: "compaction_in_progress", compactedMessages: 0 });
      expect(loser.memoryId).toBeUndefined();
    }
    expect(metrics.runs).toHaveLength(1);
    expect(bus.published().filter((e) => e.detailType === "MemoryCompacted")).toHaveLength(1);
    const memories = await store.listMemories(key);
    expect(memories.map((m) => m.id)).toEqual([winners[0]!.memoryId]);
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("10 calls spread over three containers: still one summary in all", async () => {
    const containers = [container(), container(), container()];
    const { key, messages } = await seeded(containers[0]!.deps);
    const summary = gate();
    for (const c of containers) c.fake.script.push(summary.answer);
    const racing = raceAll(10, (i) => compactIfNeeded(containers[i % 3]!.deps, key, HARD));
    await summary.started;
    const backedOff = await racing.untilSettled(9);
    summary.release();
    const results = await racing.all;
    expect(backedOff).toBe(true);
    expect(results.filter((r) => r.compacted)).toHaveLength(1);
    expect(containers.reduce((n, c) => n + c.fake.calls.length, 0)).toBe(1);
    expect(await store.listMemories(key)).toHaveLength(1);
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("a sliding-window and a range compaction racing: one commits, the invariants hold", async () => {
    const { deps, fake } = container();
    const { key, messages } = await seeded(deps);
    const summary = gate();
    fake.script.push(summary.answer);
    const range = { from: messages[1]!.createdAt, to: messages[10]!.createdAt, topicLabel: "importer" };
    // Each call reports whether it committed a memory.
    const racing = raceAll(2, async (i) =>
      i === 0 ? (await compactIfNeeded(deps, key, HARD)).compacted : (await compactRange(deps, key, range)).memoryId !== null,
    );
    await summary.started;
    const backedOff = await racing.untilSettled(1);
    summary.release();
    const committed = await racing.all;
    expect(backedOff).toBe(true);
    expect(committed.filter(Boolean)).toHaveLength(1);
    expect(fake.calls).toHaveLength(1);
    expect(await store.listMemories(key)).toHaveLength(1);
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("messages appended while a compaction summarizes stay active and are never folded", async () => {
    const { deps, fake } = container();
    const { key, messages } = await seeded(deps);
    const summary = gate();
    fake.script.push(summary.answer);
    const compaction = compactIfNeeded(deps, key, HARD);
    await summary.started; // the fold is chosen and the lease is held
    const late = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        appendMessage(deps, key, { role: i % 2 ? "USER" : "ASSISTANT", content: `late message ${i}`, tags: ["STRENGTH:weak"] }),
      ),
    );
    summary.release();
    const result = await compaction;
    expect(result.compacted).toBe(true);
    const lateIds = late.map((l) => l.message.id);
    const folded = fake.calls[0]!.messages.map((m) => m.id);
    for (const id of lateIds) expect(folded).not.toContain(id);
    expect(await checkInvariants(store, key, { appendedIds: [...ids(messages), ...lateIds], mustStayActive: lateIds, settled: true })).toEqual([]);
  });

  it("a lease outlived by its summarizer is taken over, and the late holder's commit is refused", async () => {
    const clock = movableClock();
    const a = container({ clock });
    const b = container({ clock });
    const { key, messages } = await seeded(a.deps);
    const slow = gate();
    a.fake.script.push(slow.answer);
    const first = compactIfNeeded(a.deps, key, HARD);
    await slow.started; // A holds the lease and is summarizing

    expect(await compactIfNeeded(b.deps, key, HARD)).toMatchObject({ compacted: false, reason: "compaction_in_progress" });
    expect(b.fake.calls).toHaveLength(0);
    clock.advance(a.deps.leaseMs + 1); // A's lease expires while its summarizer still runs
    const second = await compactIfNeeded(b.deps, key, HARD);
    slow.release();
    const late = await first;

    expect(second.compacted).toBe(true);
    expect(late).toMatchObject({ compacted: false, reason: "commit_conflict" });
    expect(a.fake.calls).toHaveLength(1); // paid for, but never committed
    const memories = await store.listMemories(key);
    expect(memories.map((m) => m.id)).toEqual([second.memoryId]);
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("parallel turns that append and compact keep every message and one active summary", async () => {
    // Turns that summarize in the request (the inline execution mode).
    const { deps } = container({ delayMs: 100, env: { COMPACTION_EXECUTION: "inline" } });
    const { key, messages } = await seeded(deps, 16);
    const turns = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        runTurn(deps, key, {
          message: { role: i % 2 ? "ASSISTANT" : "USER", content: `parallel turn ${i}: the export needs column ${i}` },
          model: { contextWindow: 100_000 },
          prompt: { tokens: 90_000 },
        }),
      ),
    );
    const compactions = turns.filter((t) => t.compaction.compacted);
    expect(compactions.length).toBeGreaterThanOrEqual(1);
    for (const t of turns) expect(t.compaction.mode).toBe("HARD");
    // Each turn's message was stored exactly once, archived or not.
    const history = await readAllMessages(store, key);
    for (let i = 0; i < 8; i++) {
      expect(history.filter((m) => m.content.startsWith(`parallel turn ${i}:`))).toHaveLength(1);
    }
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
    const active = (await store.listMemories(key)).filter((m) => m.status === "OK" && m.supersededAt === null);
    expect(active).toHaveLength(1);
  });
});
