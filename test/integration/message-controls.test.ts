/**
 * Changing a message's strength and undoing a compaction, against the real DynamoDB Local engine:
 * the conditional writes, their races with compactions, appends and each other, and the
 * invariants after each.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../core/domain/errors.js";
import type { Message } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { compactIfNeeded, type CompactionRequest } from "../../core/services/compaction/compaction.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { runTurn } from "../../core/services/turn.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { freshTable } from "../support/dynamo.js";
import { gate, seedChat } from "../support/race.js";
import { checkInvariants } from "../../tools/invariants.js";
import { testContainer } from "../support/container.js";

const TENANT = "controls";
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("controls"));
});

// Compactions in these tests run in the request (the inline execution mode).
const container = () => testContainer({ store, env: { COMPACTION_EXECUTION: "inline" } });

async function seeded(deps: ServiceDeps, n = 24): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId: TENANT, processId: `ctl-${++seq}` };
  return { key, messages: await seedChat(deps, key, n) };
}

const HARD: CompactionRequest = { model: { contextWindow: 100_000 }, force: "HARD" };
const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);
const pin = (deps: ServiceDeps, key: ProcessKey, id: string, strength: "pinned" | "strong" | "normal" | "weak" | null = "pinned") =>
  setMessageStrength(deps, key, id, strength);
const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return "ok";
  } catch (e) {
    if (e instanceof AppError) return e.code;
    throw e;
  }
};

describe("setting a message's strength", () => {
  it("replaces the one STRENGTH tag, keeps other tags, and null removes it", async () => {
    const { deps } = container();
    const { key } = await seeded(deps, 2);
    const m = (await appendMessage(deps, key, { role: "ASSISTANT", content: "ok", tags: ["MODE:plan", "STRENGTH:weak"] })).message;
    expect((await pin(deps, key, m.id)).tags).toEqual(["MODE:plan", "STRENGTH:pinned"]);
    expect((await store.getMessage(key, m.id))!.tags).toEqual(["MODE:plan", "STRENGTH:pinned"]);
    expect((await pin(deps, key, m.id, null)).tags).toEqual(["MODE:plan"]);
    const view = await store.activeView(key);
    expect(view!.messages.find((x) => x.id === m.id)!.tags).toEqual(["MODE:plan"]);
  });

  it("refuses an archived message (409) and an unknown one (404), writing nothing", async () => {
    const { deps } = container();
    const { key, messages } = await seeded(deps);
    expect((await compactIfNeeded(deps, key, HARD)).compacted).toBe(true);
    const archived = (await store.getMessage(key, messages[1]!.id))!;
    expect(archived.archivedInMemoryId).not.toBeNull();
    const before = (await store.getProcess(key))!.version;
    expect(await codeOf(pin(deps, key, archived.id))).toBe("message.archived");
    expect(await codeOf(pin(deps, key, "no-such-message"))).toBe("message.not_found");
    expect((await store.getMessage(key, archived.id))!.tags).toEqual(archived.tags);
    expect((await store.getProcess(key))!.version).toBe(before);
  });

  it("a pin that lands while a compaction summarizes makes that compaction's commit fail: the pinned message is never folded", async () => {
    const { deps, fake } = container();
    const { key, messages } = await seeded(deps);
    const summary = gate();
    fake.script.push(summary.answer);
    const compaction = compactIfNeeded(deps, key, HARD);
    await summary.started; // the fold is chosen (it holds messages[1]) and the lease is held
    expect(fake.calls[0]!.messages.map((m) => m.id)).toContain(messages[1]!.id);
    expect((await pin(deps, key, messages[1]!.id)).tags).toEqual(["STRENGTH:pinned"]);
    summary.release();
    expect(await compaction).toMatchObject({ compacted: false, reason: "commit_conflict" });
    expect((await store.getMessage(key, messages[1]!.id))!.archivedInMemoryId).toBeNull();

    const next = await compactIfNeeded(deps, key, HARD);
    expect(next.compacted).toBe(true);
    expect((await store.getMessage(key, messages[1]!.id))!.archivedInMemoryId).toBeNull();
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("pins racing a compaction: each pin either holds on an active message or is a 409, never a pinned message in a summary", async () => {
    for (let round = 0; round < 3; round++) {
      const { deps, fake } = container();
      fake.delayMs = 20 * round;
      const { key, messages } = await seeded(deps);
      const targets = messages.slice(1, 13);
      const [compaction, ...pins] = await Promise.all([
        compactIfNeeded(deps, key, HARD),
        ...targets.map((m, i) => new Promise((r) => setTimeout(r, i * 3 * round)).then(() => codeOf(pin(deps, key, m.id)))),
      ]);
      const after = await Promise.all(targets.map((m) => store.getMessage(key, m.id)));
      targets.forEach((m, i) => {
        const now = after[i]!;
        if (pins[i] === "ok") {
          expect(now.archivedInMemoryId, `pinned ${m.id} was archived (round ${round})`).toBeNull();
          expect(now.tags).toEqual(["STRENGTH:pinned"]);
        } else {
          expect(pins[i]).toBe("message.archived");
          expect(now.archivedInMemoryId).not.toBeNull();
          expect(now.tags).toEqual(m.tags);
        }
      });
      expect(typeof (compaction as { compacted: boolean }).compacted).toBe("boolean");
      expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
    }
  });

  it("a message a committed fold still has to archive (roll-forward pending) is a 409, and the roll-forward completes", async () => {
    const { deps } = container();
    const { key, messages } = await seeded(deps, 150);
    const state = (await store.getProcess(key))!;
    expect((await store.acquireLease(key, { owner: "o", until: "9999", now: new Date().toISOString(), expectedVersion: state.version })).ok).toBe(true);
    const fold = messages.slice(1, 140);
    const at = new Date().toISOString();
    const commit = await store.commitCompaction(key, {
      leaseOwner: "o",
      expectedVersion: state.version,
      replayEpoch: 0,
      memory: {
        id: "mem-pending",
        processId: key.processId,
        kind: "ARCHIVED_CHAT",
        status: "OK",
        content: "s",
        sourceRefs: ids(fold),
        metadata: { compactedMessages: fold.length, provider: "fake", model: "fake" },
        createdAt: at,
        supersededAt: null,
        tokens: 1,
      },
      priorSummaryId: null,
      archiveIds: ids(fold),
      at,
    });
    expect(commit).toEqual({ ok: true, pendingArchive: true });
    const tail = fold[fold.length - 1]!;
    expect((await store.getMessage(key, tail.id))!.archivedInMemoryId).toBeNull(); // not archived yet
    expect(await store.updateMessageTags(key, tail.id, { tags: ["STRENGTH:pinned"], expectedTags: tail.tags })).toEqual({
      ok: false,
      reason: "pending_archive",
    });
    expect(await codeOf(pin(deps, key, tail.id))).toBe("message.archived");
    expect((await store.getMessage(key, tail.id))!.archivedInMemoryId).toBe("mem-pending");
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });
});

describe("undoing a compaction", () => {
  const active = async (key: ProcessKey) => ids((await store.activeView(key))!.messages);

  it("restores the folded messages in order, re-activates nothing when there was no prior summary, and keeps the memory as REVERTED", async () => {
    const { deps, metrics, bus } = container();
    const { key, messages } = await seeded(deps);
    const before = await active(key);
    const fold = await compactIfNeeded(deps, key, HARD);
    expect(fold.compacted).toBe(true);
    const result = await revertMemory(deps, key, fold.memoryId!);
    expect(result).toMatchObject({ restoredMessages: fold.compactedMessages, activeSummaryId: null, memory: { id: fold.memoryId, status: "REVERTED" } });
    expect(result.memory.metadata.revertedAt).toEqual(expect.any(String));
    expect(await active(key)).toEqual(before);
    const view = (await store.activeView(key))!;
    expect(view.summaries).toEqual([]);
    expect(view.state.activeSummaryId).toBeNull();
    expect((await store.getMemory(key, fold.memoryId!))!.status).toBe("REVERTED");
    expect(metrics.reverts).toEqual([fold.compactedMessages]);
    expect(bus.published().filter((e) => e.detailType === "MemoryReverted").map((e) => e.detail)).toEqual([
      { tenantId: TENANT, processId: key.processId, memoryId: fold.memoryId, restoredMessages: fold.compactedMessages, activeSummaryId: null },
    ]);
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("walks the chain back one generation at a time, and refuses anything but the newest active summary", async () => {
    const { deps, fake } = container();
    const { key, messages } = await seeded(deps);
    const first = await compactIfNeeded(deps, key, HARD);
    for (let i = 0; i < 12; i++) await appendMessage(deps, key, { role: i % 2 ? "USER" : "ASSISTANT", content: `more ${i}: rack ${i} is labelled.` });
    const afterFirst = await active(key);
    const second = await compactIfNeeded(deps, key, HARD);
    fake.script.push({ ok: false, failure: { kind: "summarizer_error", retryable: false, message: "model overloaded" } });
    for (let i = 0; i < 8; i++) await appendMessage(deps, key, { role: i % 2 ? "ASSISTANT" : "USER", content: `late ${i}: bin ${i}.` });
    const failed = await compactIfNeeded(deps, key, HARD);
    expect([first.compacted, second.compacted, failed.compacted]).toEqual([true, true, false]);
    expect(failed.memoryId).toEqual(expect.any(String));

    expect(await codeOf(revertMemory(deps, key, first.memoryId!))).toBe("memory.not_newest");
    expect(await codeOf(revertMemory(deps, key, failed.memoryId!))).toBe("memory.failed");
    expect(await codeOf(revertMemory(deps, key, "no-such-memory"))).toBe("memory.not_found");
    expect(await codeOf(revertMemory(deps, { ...key, tenantId: "someone-else" }, second.memoryId!))).toBe("process.not_found");

    const undo = await revertMemory(deps, key, second.memoryId!);
    expect(undo.activeSummaryId).toBe(first.memoryId);
    const view = (await store.activeView(key))!;
    expect(view.summaries.map((m) => m.id)).toEqual([first.memoryId]);
    expect(view.state.activeSummaryId).toBe(first.memoryId);
    expect((await store.getMemory(key, first.memoryId!))!).toMatchObject({ supersededAt: null, status: "OK" });
    expect((await store.getMemory(key, first.memoryId!))!.supersededByMemoryId).toBeUndefined();
    expect((await active(key)).slice(0, afterFirst.length)).toEqual(afterFirst);
    expect(await codeOf(revertMemory(deps, key, second.memoryId!))).toBe("memory.reverted");

    const again = await revertMemory(deps, key, first.memoryId!);
    expect(again.activeSummaryId).toBeNull();
    expect((await active(key)).length).toBe(messages.length + 12 + 8);
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);

    // A new fold chains on what is active now; the reverted memories stay off the chain.
    const next = await compactIfNeeded(deps, key, HARD);
    expect(next.compacted).toBe(true);
    expect((await store.getMemory(key, next.memoryId!))!.metadata.supersededMemoryId).toBeUndefined();
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("archives a range compaction's marker into the reverted memory", async () => {
    const { deps } = container();
    const { key, messages } = await seeded(deps);
    const range = await compactRange(deps, key, { from: messages[1]!.createdAt, to: messages[8]!.createdAt, topicLabel: "importer" });
    expect(range.markerMessageId).not.toBeNull();
    expect((await store.getMemory(key, range.memoryId!))!.metadata.markerMessageId).toBe(range.markerMessageId);
    expect(await active(key)).toContain(range.markerMessageId);
    await revertMemory(deps, key, range.memoryId!);
    expect((await store.getMessage(key, range.markerMessageId!))!.archivedInMemoryId).toBe(range.memoryId);
    expect(await active(key)).toEqual(ids(messages));
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("reverts a fold of more than 100 messages: one transaction, the rest rolled forward by the next reader", async () => {
    const { deps } = container();
    const { key, messages } = await seeded(deps, 240);
    const fold = await compactIfNeeded(deps, key, HARD);
    expect(fold.compactedMessages).toBeGreaterThan(200);
    const state = (await store.getProcess(key))!;
    // The store step alone, as a revert that crashed right after its commit would leave it.
    expect((await store.acquireLease(key, { owner: "r", until: "9999", now: new Date().toISOString(), expectedVersion: state.version })).ok).toBe(true);
    const memory = (await store.getMemory(key, fold.memoryId!))!;
    const commit = await store.revertCompaction(key, {
      leaseOwner: "r",
      expectedVersion: state.version,
      replayEpoch: 0,
      memoryId: memory.id,
      priorSummaryId: null,
      restoreIds: memory.sourceRefs,
      holdTokens: 0,
      at: new Date().toISOString(),
    });
    expect(commit).toEqual({ ok: true, pendingArchive: true });
    const half = (await store.activeView(key))!;
    expect(half.state.pendingArchive).toBe(memory.id);
    expect(half.messages.length).toBeLessThan(messages.length);
    expect(half.state.lease).toBeNull();
    // The next reader (any turn or context read) finishes it first.
    const settled = await settledView(deps, key);
    expect(settled.state.pendingArchive).toBeNull();
    expect(ids(settled.messages)).toEqual(ids(messages));
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);

    // And through the service, end to end.
    const refold = await compactIfNeeded(deps, key, HARD);
    const undo = await revertMemory(deps, key, refold.memoryId!);
    expect(undo.restoredMessages).toBe(refold.compactedMessages);
    expect(await active(key)).toEqual(ids(messages));
    expect(await checkInvariants(store, key, { appendedIds: ids(messages), settled: true, noLease: true })).toEqual([]);
  });

  it("does not repeat the undone fold automatically until the replay grew by the minimum saving", async () => {
    const { deps, fake } = container();
    const { key } = await seeded(deps, 40);
    const overHard = { model: { contextWindow: 100_000 }, prompt: { tokens: 90_000 } };
    const fold = await compactIfNeeded(deps, key, overHard);
    expect(fold).toMatchObject({ mode: "HARD", compacted: true });
    await revertMemory(deps, key, fold.memoryId!);
    const calls = fake.calls.length;

    expect(await compactIfNeeded(deps, key, overHard)).toMatchObject({ mode: "HARD", compacted: false, reason: "reverted_recently" });
    const turn = await runTurn(deps, key, { message: { role: "USER", content: "and the labels?" }, ...overHard });
    expect(turn.compaction).toMatchObject({ compacted: false, reason: "reverted_recently" });
    expect(fake.calls.length).toBe(calls); // no summary was paid for

    // Growth below the minimum saving (summaryMinTokens, 400) still waits; past it, the fold runs.
    await appendMessage(deps, key, { role: "ASSISTANT", content: "x".repeat(800) });
    expect((await compactIfNeeded(deps, key, overHard)).reason).toBe("reverted_recently");
    await appendMessage(deps, key, { role: "ASSISTANT", content: "y".repeat(1200) });
    const grown = await compactIfNeeded(deps, key, overHard);
    expect(grown.compacted).toBe(true);
    expect(fake.calls.length).toBe(calls + 1);

    // EMERGENCY (the prompt must never overflow) and a manual compaction never wait.
    await revertMemory(deps, key, grown.memoryId!);
    expect((await compactIfNeeded(deps, key, overHard)).reason).toBe("reverted_recently");
    const emergency = await compactIfNeeded(deps, key, { ...overHard, prompt: { tokens: 99_000 } });
    expect(emergency).toMatchObject({ mode: "EMERGENCY", compacted: true });
    await revertMemory(deps, key, emergency.memoryId!);
    expect((await compactIfNeeded(deps, key, HARD)).compacted).toBe(true);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a revert racing appends, a turn, a compaction and a second revert: at most one revert wins, nothing is lost, the chain never forks", async () => {
    for (let round = 0; round < 3; round++) {
      const a = container();
      const b = container();
      a.fake.delayMs = 15 * round;
      b.fake.delayMs = 30;
      const { key, messages } = await seeded(a.deps);
      const first = await compactIfNeeded(a.deps, key, HARD);
      for (let i = 0; i < 14; i++) await appendMessage(a.deps, key, { role: i % 2 ? "USER" : "ASSISTANT", content: `more ${i}: rack ${i}.` });
      const second = await compactIfNeeded(a.deps, key, HARD);
      expect([first.compacted, second.compacted]).toEqual([true, true]);
      const appended: string[] = [];
      const results = await Promise.all([
        codeOf(revertMemory(a.deps, key, second.memoryId!)),
        codeOf(revertMemory(b.deps, key, second.memoryId!)),
        ...Array.from({ length: 5 }, (_, i) =>
          appendMessage(b.deps, key, { role: i % 2 ? "USER" : "ASSISTANT", content: `racing ${i}` }).then((r) => void appended.push(r.message.id)),
        ),
        runTurn(b.deps, key, { message: { role: "USER", content: `turn of round ${round}` }, model: { contextWindow: 100_000 }, prompt: { tokens: 90_000 } }).then(
          (t) => void appended.push(...t.messages.filter((m) => m.content === `turn of round ${round}`).map((m) => m.id)),
        ),
        compactIfNeeded(b.deps, key, HARD),
      ]);
      const [revertA, revertB] = results as string[];
      const wins = [revertA, revertB].filter((r) => r === "ok").length;
      expect(wins, `round ${round}: ${revertA}, ${revertB}`).toBeLessThanOrEqual(1);
      for (const r of [revertA, revertB]) expect(["ok", "memory.reverted", "memory.not_newest", "process.busy"]).toContain(r);
      const reverted = (await store.getMemory(key, second.memoryId!))!;
      expect(reverted.status).toBe(wins === 1 ? "REVERTED" : "OK");
      expect(appended).toHaveLength(6);
      expect(await checkInvariants(store, key, { appendedIds: [...ids(messages), ...appended], settled: true, noLease: true })).toEqual([]);
    }
  }, 180_000);
});
