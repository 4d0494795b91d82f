/**
 * Queued work is never silently dropped (docs/compaction.md, "Off the turn's critical path"),
 * against DynamoDB Local: a manual job waiting next to an automatic fold, a discarded fold's
 * reason, a late delivery of a fold another delivery prepared, and the range job of an accepted
 * offer delivered again.
 * Interleavings are forced with store wrappers that hold a call until the test releases it.
 */
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { TTL_ATTRIBUTE, memorySk, processPk } from "../../core/adapters/dynamodb/keys.js";
import { handleCompactionRequested, handleInboxAnswered } from "../../core/adapters/events/handlers.js";
import type { InboxItem, Message } from "../../core/domain/model.js";
import { selectRange } from "../../core/domain/range.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { OFFER_TAG } from "../../core/services/recompaction-offers.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { listMemories } from "../../core/services/memories.js";
import { setMessageStrength } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { runTurn } from "../../core/services/turn.js";
import { checkInvariants } from "../../tools/invariants.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";
import { holdFirst } from "../support/held-store.js";
import { appendWarehouseMove } from "../support/steps.js";

const TENANT = "qw";
const WINDOW = 10_000;
let store: Store;
let table: Awaited<ReturnType<typeof freshTable>>;
let seq = 0;

beforeAll(async () => {
  table = await freshTable("qw");
  store = table.store;
});

/** Background-mode deps; the test delivers every CompactionRequested itself. */
function harness(env: Record<string, string> = {}) {
  const c = testContainer({ store, env, retryDelaysMs: [] });
  return { ...c, requests: () => c.published("CompactionRequested") };
}

async function seeded(deps: ServiceDeps, n: number): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId: TENANT, processId: `qw-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  return { key, messages: await appendWarehouseMove(deps, key, n) };
}

const turn = (tokens: number, content?: string) => ({
  ...(content ? { message: { role: "USER" as const, content } } : {}),
  model: { contextWindow: WINDOW },
  prompt: { tokens },
});

const statusOf = async (key: ProcessKey, id: string) => (await store.getMemory(key, id))?.status;


describe("a manual job next to an automatic fold", () => {
  it("a manual compaction queued past its budget is not discarded by the next turn while a prepared fold waits: the turn gives way, the worker commits it", async () => {
    const { deps, fake, requests, requestFor } = harness({ COMPACTION_MANUAL_BUDGET_MS: "50" });
    const { key } = await seeded(deps, 30);
    const early = await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    const preparedId = early.compaction.memoryId!;
    expect(await handleCompactionRequested(deps, requestFor(preparedId))).toMatchObject({ done: "prepared" });

    // The request's own fold never gets its lease within the budget: the compaction is queued.
    const stuck: Store = Object.create(store);
    stuck.acquireLease = () => new Promise(() => {});
    const manual = await compactManually({ ...deps, store: stuck }, key, { model: { contextWindow: WINDOW }, force: "HARD", instructions: "Keep aisle numbers." });
    expect(manual).toMatchObject({ status: 202, result: { reason: "compaction_queued" } });
    const manualId = manual.result.memoryId!;

    // At HARD the turn neither commits the prepared fold (that would leave the manual job stale)
    // nor discards the manual job: it waits for it, like for any queued fold.
    const calls = fake.calls.length;
    const hard = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(hard.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued", memoryId: manualId });
    expect(await statusOf(key, manualId)).toBe("QUEUED");
    expect(await statusOf(key, preparedId)).toBe("PREPARED");
    expect(requests()).toHaveLength(2); // nothing more was queued

    expect(await handleCompactionRequested(deps, requestFor(manualId))).toMatchObject({ done: "committed" });
    expect(fake.calls).toHaveLength(calls + 1);
    expect(fake.calls.at(-1)!.instructions).toContain("Keep aisle numbers.");
    expect((await store.getMemory(key, manualId))!).toMatchObject({ status: "OK", metadata: { producedBy: "worker", mode: "HARD" } });

    // The prepared fold no longer chains the active summary: the next turn discards it, with its reason.
    await runTurn(deps, key, turn(3_000));
    expect((await store.getMemory(key, preparedId))!).toMatchObject({ status: "DISCARDED", metadata: { discardReason: expect.stringContaining("stale") } });
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a manual job that ends without a commit leaves the prepared fold usable", async () => {
    const { deps, fake, requestFor } = harness({ COMPACTION_MANUAL_BUDGET_MS: "50" });
    const { key } = await seeded(deps, 30);
    const early = await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    const preparedId = early.compaction.memoryId!;
    expect(await handleCompactionRequested(deps, requestFor(preparedId))).toMatchObject({ done: "prepared" });
    const stuck: Store = Object.create(store);
    stuck.acquireLease = () => new Promise(() => {});
    const manual = await compactManually({ ...deps, store: stuck }, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    const manualId = manual.result.memoryId!;
    // The worker's summary fails: the job ends with that reason, not a commit.
    fake.script.push({ ok: false, failure: { kind: "provider_unavailable", retryable: true, message: "model overloaded" } });
    expect(await handleCompactionRequested(deps, requestFor(manualId))).toMatchObject({ done: "failed" });
    expect((await store.getMemory(key, manualId))!).toMatchObject({ status: "DISCARDED", metadata: { discardReason: "summarizer_failed: provider_unavailable" } });

    // HARD asks the worker to commit the prepared fold (docs/compaction.md, "Who commits a prepared fold").
    const hard = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(hard.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued", memoryId: preparedId });
    expect(await handleCompactionRequested(deps, { ...requestFor(preparedId), job: "commit" })).toMatchObject({ done: "committed", foldId: preparedId });
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});

describe("a discarded fold", () => {
  it("keeps its reason: DynamoDB's TTL, which deletes folds nobody used, no longer applies to it", async () => {
    const { deps } = harness();
    const { key } = await seeded(deps, 30);
    const early = await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    const foldId = early.compaction.memoryId!;
    const raw = async () =>
      (await table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: processPk(key), sk: memorySk(foldId) }, ConsistentRead: true }))).Item!;
    expect((await raw())[TTL_ATTRIBUTE]).toEqual(expect.any(Number));
    // A strength change moves the version: the next turn discards the queued fold as stale.
    await setMessageStrength(deps, key, early.messages.at(-1)!.id, "strong");
    await runTurn(deps, key, turn(3_000));
    const item = await raw();
    expect(item).toMatchObject({ status: "DISCARDED", metadata: { discardReason: expect.stringContaining("stale") } });
    expect(item[TTL_ATTRIBUTE]).toBeUndefined();
  });
});

describe("a late delivery of CompactionRequested", () => {
  it("that read the fold QUEUED does not discard it once another delivery prepared it", async () => {
    const { deps, requestFor } = harness();
    const { key } = await seeded(deps, 30);
    const early = await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    const foldId = early.compaction.memoryId!;

    // The late delivery reads the fold (QUEUED), then stalls before it reads the process.
    const late = holdFirst(store, "activeView");
    const lateRun = handleCompactionRequested({ ...deps, store: late.store }, requestFor(foldId));
    await late.reached;
    expect(await handleCompactionRequested(deps, requestFor(foldId))).toMatchObject({ done: "prepared" });
    // A PATCH moves META's version; the prepared fold still fits (the message is the live question).
    const question = early.messages.at(-1)!;
    await setMessageStrength(deps, key, question.id, "strong");
    late.release();
    expect(await lateRun).toMatchObject({ skipped: "stale" });

    expect(await statusOf(key, foldId)).toBe("PREPARED");
    const hard = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(hard.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued", memoryId: foldId });
    expect(await handleCompactionRequested(deps, { ...requestFor(foldId), job: "commit" })).toMatchObject({ done: "committed", foldId });
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});

describe("the range job of an accepted offer", () => {
  async function acceptedOffer(key: ProcessKey, from: Message, to: Message): Promise<InboxItem> {
    const item: InboxItem = {
      id: `inb_qw_${++seq}`,
      processId: key.processId,
      type: "APPROVAL",
      tags: [OFFER_TAG],
      status: "OPEN",
      payload: { from: from.createdAt, to: to.createdAt, topicLabel: "aisles" },
      createdAt: new Date().toISOString(),
    };
    await store.putInboxItem(key.tenantId, item);
    const answered = await store.answerInboxItem(key.tenantId, item.id, "ACCEPTED", new Date().toISOString());
    expect(answered.ok).toBe(true);
    return item;
  }

  it("a redelivered InboxItemAnswered after the user undid the range fold queues nothing", async () => {
    const { deps, requests, requestFor } = harness();
    const { key, messages } = await seeded(deps, 20);
    const item = await acceptedOffer(key, messages[3]!, messages[9]!);
    const detail = { tenantId: TENANT, itemId: item.id, accepted: true };
    const queued = await handleInboxAnswered(deps, detail);
    expect(queued).toMatchObject({ reason: "compaction_queued" });
    const jobId = queued!.memoryId!;
    expect(await handleCompactionRequested(deps, requestFor(jobId))).toMatchObject({ done: "committed" });
    await revertMemory(deps, key, jobId);
    const range = { from: messages[3]!.createdAt, to: messages[9]!.createdAt, topicLabel: "aisles" };
    const restored = selectRange((await store.activeView(key))!.messages, range).map((m) => m.id);
    expect(restored.length).toBeGreaterThan(0);

    const before = requests().length;
    expect(await handleInboxAnswered(deps, detail)).toMatchObject({ memoryId: jobId, compactedMessages: 0, reason: "reverted" });
    expect(requests()).toHaveLength(before);
    expect((await store.activeView(key))!.folds).toEqual([]);
    expect(selectRange((await store.activeView(key))!.messages, range).map((m) => m.id)).toEqual(restored);
    expect((await store.listMemories(key)).map((m) => [m.id, m.status])).toEqual([[jobId, "REVERTED"]]);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("committed after a newer fold, it becomes the head of the chain: replayed, listed first, named by META, the only one revert accepts", async () => {
    const { deps, requestFor } = harness();
    const { key, messages } = await seeded(deps, 30);
    const item = await acceptedOffer(key, messages[3]!, messages[9]!);
    const queued = await handleInboxAnswered(deps, { tenantId: TENANT, itemId: item.id, accepted: true });
    const jobId = queued!.memoryId!;
    // Another fold commits while the job waits: its id is newer than the job's, made at queue time.
    const other = await compactRange(deps, key, { from: messages[14]!.createdAt, to: messages[20]!.createdAt, topicLabel: "days" });
    expect(other.memoryId! > jobId).toBe(true);
    expect(await handleCompactionRequested(deps, requestFor(jobId))).toMatchObject({ done: "committed" });

    const job = (await store.getMemory(key, jobId))!;
    expect(job).toMatchObject({ status: "OK", supersededAt: null, metadata: { supersededMemoryId: other.memoryId } });
    expect((await store.getProcess(key))!.activeSummaryId).toBe(jobId);
    const listed = await listMemories(deps, key, { kind: "ARCHIVED_CHAT", includeSuperseded: true, includeFailed: false });
    expect(listed.map((m) => m.id)).toEqual([jobId, other.memoryId]);
    await expect(revertMemory(deps, key, other.memoryId!)).rejects.toMatchObject({ code: "memory.not_newest" });
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
    expect(await revertMemory(deps, key, jobId)).toMatchObject({ activeSummaryId: other.memoryId });
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("two deliveries that both find no job queue one", async () => {
    const { deps, requests } = harness();
    const { key, messages } = await seeded(deps, 20);
    const item = await acceptedOffer(key, messages[3]!, messages[9]!);
    const detail = { tenantId: TENANT, itemId: item.id, accepted: true };
    // The first delivery stalls just before it stores its job; the second runs in between.
    const first = holdFirst(store, "storeFold");
    const firstRun = handleInboxAnswered({ ...deps, store: first.store }, detail);
    await first.reached;
    const second = await handleInboxAnswered(deps, detail);
    first.release();
    const one = await firstRun;
    expect(second).toMatchObject({ reason: "compaction_queued" });
    expect(one).toMatchObject({ reason: "compaction_queued", memoryId: second!.memoryId });
    expect((await store.listMemories(key)).map((m) => [m.id, m.status])).toEqual([[second!.memoryId, "QUEUED"]]);
    expect(new Set(requests().map((e) => e.detail.foldId))).toEqual(new Set([second!.memoryId]));
  });
});
