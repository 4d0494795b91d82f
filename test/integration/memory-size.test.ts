/**
 * A summary the store cannot hold (its stored provenance past DynamoDB's 400 KB) against the real
 * DynamoDB Local engine: in the request and in the worker it becomes a FAILED memory that says
 * so, nothing is archived and no lease is left; never a 500.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { handleCompactionRequested, handleInboxAnswered } from "../../core/adapters/events/handlers.js";
import { EVENTS } from "../../core/domain/events.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { SummarizeInput } from "../../core/ports/summarizer.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import { OFFER_TAG } from "../../core/services/recompaction-offers.js";
import type { RangeResult } from "../../core/services/compaction/range-compaction.js";
import { runTurn } from "../../core/services/turn.js";
import { checkInvariants } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { seedChat } from "../support/race.js";
import { testContainer } from "../support/container.js";

let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("memsize"));
});

/**
 * A summary within its token budget whose 300 lines each cite every folded message: with 60
 * messages that is about 560 KB of provenance, more than one item holds.
 */
const oversizedProvenance = async (input: SummarizeInput) => {
  const lines = Array.from({ length: 300 }, () => "- a");
  return { ok: true as const, summary: lines.join("\n"), citations: lines.map(() => input.messages.map((m) => m.id)) };
};

const harness = (env: Record<string, string>) => testContainer({ store, env });

async function seeded(deps: Parameters<typeof seedChat>[0]): Promise<ProcessKey> {
  const key = { tenantId: "memsize", processId: `ms-${++seq}` };
  await seedChat(deps, key, 70);
  return key;
}

const failedRows = async (key: ProcessKey) => (await store.listMemories(key)).filter((m) => m.status === "FAILED");

describe("a summary too large to store", () => {
  it("in the request: a FAILED memory saying so, nothing archived, no lease left", async () => {
    const { deps, fake } = harness({ COMPACTION_EXECUTION: "inline" });
    const key = await seeded(deps);
    fake.script.push(oversizedProvenance);
    const before = (await store.activeView(key))!.messages.length;
    const out = await compactIfNeeded(deps, key, { model: { contextWindow: 100_000 }, force: "HARD" });
    expect(out).toMatchObject({ compacted: false, reason: expect.stringMatching(/^summary_too_large/) });
    const [failed, ...more] = await failedRows(key);
    expect(more).toEqual([]);
    expect(failed?.metadata.error).toMatch(/^summary_too_large/);
    expect(out.memoryId).toBe(failed?.id);
    expect((await store.activeView(key))!.messages).toHaveLength(before);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
    // The next fold, with an ordinary summary, commits.
    expect((await compactIfNeeded(deps, key, { model: { contextWindow: 100_000 }, force: "HARD" })).compacted).toBe(true);
  });

  it("in the worker: the queued fold becomes FAILED saying so, and a later turn folds again", async () => {
    const { deps, fake, bus } = harness({});
    const key = await seeded(deps);
    fake.script.push(oversizedProvenance);
    await runTurn(deps, key, { model: { contextWindow: 10_000 }, prompt: { tokens: 9_000 } });
    const request = bus.published().find((e) => e.detailType === EVENTS.CompactionRequested.detailType)!;
    const { foldId } = request.detail as { foldId: string };
    expect(await handleCompactionRequested(deps, request.detail)).toMatchObject({ done: "failed", foldId });
    const fold = await store.getMemory(key, foldId);
    expect(fold?.status).toBe("FAILED");
    expect(fold?.metadata.error).toMatch(/^summary_too_large/);
    expect(await checkInvariants(store, key, { noLease: true })).toEqual([]);
    // The FAILED row blocks nothing: the next turn queues a fold, and with an ordinary summary it is prepared.
    await runTurn(deps, key, { model: { contextWindow: 10_000 }, prompt: { tokens: 9_000 } });
    const again = bus.published().filter((e) => e.detailType === EVENTS.CompactionRequested.detailType).at(-1)!;
    expect((again.detail as { foldId: string }).foldId).not.toBe(foldId);
    expect(await handleCompactionRequested(deps, again.detail)).toMatchObject({ done: "prepared" });
  });

  it("in a range job: the job ends DISCARDED saying so instead of failing every delivery", async () => {
    const { deps, fake, bus } = harness({});
    const key = await seeded(deps);
    const messages = (await store.listMessages(key, { limit: 1000 })).items;
    const at = new Date().toISOString();
    const payload = { from: messages[2]!.createdAt, to: messages[65]!.createdAt, topicLabel: "columns" };
    await store.putInboxItem("memsize", { id: `inb_${key.processId}`, processId: key.processId, type: "APPROVAL", tags: [OFFER_TAG], status: "OPEN", payload, createdAt: at });
    await store.answerInboxItem("memsize", `inb_${key.processId}`, "ACCEPTED", at);
    const queued = (await handleInboxAnswered(deps, { tenantId: "memsize", itemId: `inb_${key.processId}`, accepted: true })) as RangeResult;
    expect(queued.reason).toBe("compaction_queued");
    fake.script.push(oversizedProvenance);
    const request = bus.published().find((e) => e.detailType === EVENTS.CompactionRequested.detailType)!;
    expect(await handleCompactionRequested(deps, request.detail)).toMatchObject({ done: "failed", foldId: queued.memoryId });
    const job = await store.getMemory(key, queued.memoryId!);
    expect(job?.status).toBe("DISCARDED");
    expect(job?.metadata.discardReason).toMatch(/^summary_too_large/);
    expect((await failedRows(key)).map((m) => m.metadata.error)).toEqual([expect.stringMatching(/^summary_too_large/)]);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});
