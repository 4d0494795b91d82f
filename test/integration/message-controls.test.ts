/**
 * Changing a message's strength and undoing a compaction, against the real DynamoDB Local engine:
 * the conditional writes, their races with compactions, appends and each other, and the
 * invariants after each.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createLocalBus } from "../../core/adapters/events/local-bus.js";
import { createMemoryLog } from "../../core/adapters/log.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { AppError } from "../../core/domain/errors.js";
import type { Message } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { compactIfNeeded, settledView, type CompactionRequest } from "../../core/services/compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { createDeps } from "../../functions/root.js";
import { freshTable } from "../support/dynamo.js";
import { gate, seedChat } from "../support/race.js";
import { createFakeSummarizer, type FakeSummarizer } from "../support/fake-summarizer.js";
import { checkInvariants } from "../support/invariants.js";

const TENANT = "controls";
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("controls"));
});

function container() {
  const fake: FakeSummarizer = createFakeSummarizer();
  const metrics = createRecordingMetrics();
  const bus = createLocalBus();
  const deps = createDeps({ env: {}, store, events: bus, metrics, log: createMemoryLog(), summarizerFactory: async () => fake });
  return { deps, fake, metrics, bus };
}

async function seeded(deps: ServiceDeps, n = 24): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId: TENANT, processId: `ctl-${++seq}` };
  return { key, messages: await seedChat(deps, key, n) };
}

const HARD: CompactionRequest = { model: { contextWindow: 100_000 }, force: "HARD" };
const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);
const pin = (deps: ServiceDeps, key: ProcessKey, id: string, strength: "pinned" | "strong" | "normal" | "weak" | null = "pinned") =>
  setMessageStrength(deps, key, id, strength, (k) => settledView(deps, k));
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
