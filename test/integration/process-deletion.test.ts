/**
 * Deleting a process (docs/api.md, "Deleting a process"), against DynamoDB Local: every item kind
 * erased, the tombstone refusing every later write, a delete racing a worker's commit (held by a
 * store wrapper until the test releases it), a redelivered event after the delete, a repeat, and
 * the background erasure of a large process.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INBOX_SK, inboxByProcess, inboxPk } from "../../core/adapters/dynamodb/keys.js";
import { handleCompactionRequested, handleProcessEraseRequested } from "../../core/adapters/events/handlers.js";
import { withBlobStore } from "../../core/composition/local-blob-store.js";
import type { InboxItem, Message, Role } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { answerInboxItem } from "../../core/services/inbox.js";
import { OFFER_TAG } from "../../core/services/recompaction-offers.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { deleteProcess } from "../../core/services/process-deletion.js";
import { requireProcess, upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { makeMemory, makeMessage } from "../support/fixtures.js";
import { testContainer } from "../support/container.js";
import { holdFirst } from "../support/held-store.js";

const TENANT = "del";
const WINDOW = 10_000;
let table: Awaited<ReturnType<typeof freshTable>>;
let store: Store;
let seq = 0;

beforeAll(async () => {
  table = await freshTable("del");
  store = table.store;
});

/** Background-mode deps over `over` (the plain store unless a test wraps it); the test delivers every event itself. */
function harness(env: Record<string, string> = {}, over: Store = store) {
  const c = testContainer({ store: over, env, retryDelaysMs: [] });
  return { ...c, deps: withBlobStore(c.deps, env) };
}

async function seeded(deps: ServiceDeps, n: number): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId: TENANT, processId: `del-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj", name: "warehouse move", title: "Moving day" });
  const messages = [(await appendMessage(deps, key, { role: "USER", content: "Plan the warehouse move.", idempotencyKey: `first-${seq}` })).message];
  for (let i = 0; i < n; i++) {
    const role: Role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
    messages.push((await appendMessage(deps, key, { role, content: `step ${i}: shelf ${i} goes to aisle ${i % 7} on day ${i % 5}.` })).message);
  }
  return { key, messages };
}

const partition = (key: ProcessKey) => table.partition(key);

/** The process's inbox items, by their listing index and by their own key. */
async function inboxOf(key: ProcessKey, itemId: string) {
  const listed = await table.client.send(
    new QueryCommand({ TableName: table.tableName, IndexName: "gsi2", KeyConditionExpression: "gsi2pk = :pk", ExpressionAttributeValues: { ":pk": inboxByProcess(key.tenantId, key.processId) } }),
  );
  const own = await table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: inboxPk(key.tenantId, itemId), sk: INBOX_SK }, ConsistentRead: true }));
  return [...(listed.Items ?? []), ...(own.Item ? [own.Item] : [])];
}

/** What is left of a deleted process: the bare tombstone and nothing else. */
async function expectOnlyTombstone(key: ProcessKey) {
  const items = await partition(key);
  expect(items.map((i) => i.sk)).toEqual(["META"]);
  const meta = items[0]!;
  expect(meta).toMatchObject({ deletion: "DELETED", deletedAt: expect.any(String) });
  for (const gone of ["name", "title", "firstUserMessageId", "activeSummaryId", "lsi1sk", "gsi1pk", "gsi2pk"]) expect(meta).not.toHaveProperty(gone);
}

function offer(key: ProcessKey, id: string): InboxItem {
  return {
    id,
    processId: key.processId,
    type: "APPROVAL",
    tags: [OFFER_TAG],
    status: "OPEN",
    payload: { from: new Date(0).toISOString(), to: new Date().toISOString(), topicLabel: "move" },
    createdAt: new Date().toISOString(),
  };
}

const turn = (tokens: number, content?: string) => ({
  ...(content ? { message: { role: "USER" as const, content } } : {}),
  model: { contextWindow: WINDOW },
  prompt: { tokens },
});


describe("deleting a process", () => {
  it("erases every item kind: messages (archived too), memories of every status, idempotency records, inbox items, queued and prepared folds", async () => {
    const { deps } = harness();
    const { key } = await seeded(deps, 12);
    // An OK summary with archived messages, from a real fold.
    const folded = await compactManually(deps, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    expect(folded.result.compacted).toBe(true);
    // Memories of the other statuses, and the queued and prepared folds.
    const queued = makeMemory(key.processId, { status: "QUEUED" });
    const prepared = makeMemory(key.processId, { status: "QUEUED" });
    const discarded = makeMemory(key.processId, { status: "QUEUED" });
    for (const f of [queued, prepared, discarded]) expect(await store.storeFold(key, f, "new")).toEqual({ ok: true });
    expect(await store.storeFold(key, { ...prepared, status: "PREPARED" }, "QUEUED")).toEqual({ ok: true });
    expect(await store.discardFold(key, discarded.id, "QUEUED", "stale", new Date().toISOString())).toEqual({ ok: true });
    await store.putMemory(key, makeMemory(key.processId, { status: "FAILED" }));
    await store.putMemory(key, makeMemory(key.processId, { status: "REVERTED" }));
    await store.putInboxItem(TENANT, offer(key, `offer-${seq}`));

    const before = await partition(key);
    const kinds = new Set(before.map((i) => (i.sk === "META" ? "META" : `${i.type}${i.status ? `:${i.status}` : ""}${i.archivedInMemoryId ? ":archived" : ""}`)));
    expect([...kinds].sort()).toEqual(
      ["IDEM", "INBOXREF", "META", "MEM:DISCARDED", "MEM:FAILED", "MEM:OK", "MEM:PREPARED", "MEM:QUEUED", "MEM:REVERTED", "MSG", "MSG:archived"].sort(),
    );
    expect(await inboxOf(key, `offer-${seq}`)).toHaveLength(2);

    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });

    await expectOnlyTombstone(key);
    expect(await inboxOf(key, `offer-${seq}`)).toEqual([]);
    expect((await store.listProcesses(TENANT, { limit: 100 })).items.map((p) => p.processId)).not.toContain(key.processId);
    expect((await store.listProcesses(TENANT, { limit: 100, projectId: "proj" })).items.map((p) => p.processId)).not.toContain(key.processId);
    await expect(requireProcess(deps, key)).rejects.toMatchObject({ code: "process.not_found" });
  });

  it("refuses every later write and writes nothing: a turn, an append, an inbox answer, an offer, a PUT of the same id", async () => {
    const { deps } = harness();
    const { key } = await seeded(deps, 3);
    await store.putInboxItem(TENANT, offer(key, `late-${seq}`));
    // An answer that read the item OPEN just before the delete.
    const reader = holdFirst(store, "answerInboxItem");
    const answering = answerInboxItem({ ...deps, store: reader.store }, TENANT, `late-${seq}`, true);
    await reader.reached;
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    const after = await partition(key);
    reader.release();

    await expect(answering).rejects.toMatchObject({ code: "inbox_item.not_found" });
    await expect(runTurn(deps, key, turn(1_000, "One more step."))).rejects.toMatchObject({ kind: "not_found" });
    await expect(appendMessage(deps, key, { role: "ASSISTANT", content: "late" })).rejects.toMatchObject({ code: "process.not_found" });
    // The store's own guard, without the service's META read in front of it.
    expect(await store.appendMessage(key, makeMessage(key.processId, { role: "USER", content: "late" }), "k-late")).toEqual({
      ok: false,
      reason: "process_not_found",
    });
    await expect(store.putInboxItem(TENANT, offer(key, `after-${seq}`))).rejects.toMatchObject({ code: "process.not_found" });
    await expect(store.putMemory(key, makeMemory(key.processId, { status: "FAILED" }))).rejects.toMatchObject({ code: "process.not_found" });
    expect(await store.storeFold(key, makeMemory(key.processId, { status: "QUEUED" }), "new")).toEqual({ ok: false, reason: "status_changed" });
    await expect(upsertProcess(deps, TENANT, key.processId, { projectId: "proj" })).rejects.toMatchObject({ kind: "conflict", code: "process.deleted" });

    expect(await partition(key)).toEqual(after);
    await expectOnlyTombstone(key);
    expect(await inboxOf(key, `after-${seq}`)).toEqual([]);
  });

  it("a worker's commit held while the process is deleted fails, and no item of the process exists afterwards", async () => {
    const { deps, published } = harness({ COMPACTION_MANUAL_BUDGET_MS: "50" });
    const { key } = await seeded(deps, 30);
    // A manual compaction that cannot take its lease within its budget is queued for the worker.
    const stuck: Store = Object.create(store);
    stuck.acquireLease = () => new Promise(() => {});
    const manual = await compactManually({ ...deps, store: stuck }, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    expect(manual).toMatchObject({ status: 202, result: { reason: "compaction_queued" } });
    const request = published("CompactionRequested").at(-1)!.detail;

    const held = holdFirst(store, "commitCompaction");
    const worker = harness({ COMPACTION_LEASE_WAIT_MS: "0" }, held.store);
    const running = handleCompactionRequested(worker.deps, request).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await held.reached;
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    held.release();
    const outcome = await running;
    expect(outcome).not.toMatchObject({ value: { done: "committed" } });

    await expectOnlyTombstone(key);
    expect(worker.fake.calls.length).toBeGreaterThan(0); // the summary was made, and thrown away
  });

  it("a turn held at its append while the process is deleted fails, and writes nothing", async () => {
    const { deps } = harness();
    const { key } = await seeded(deps, 3);
    const held = holdFirst(store, "appendMessage");
    const running = runTurn({ ...deps, store: held.store }, key, turn(1_000, "One more step.")).then(
      () => null,
      (error: unknown) => error,
    );
    await held.reached;
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    held.release();
    expect(await running).toMatchObject({ code: "process.not_found" });
    await expectOnlyTombstone(key);
  });

  it("a worker's prepared fold held while the process is deleted is not stored", async () => {
    const { deps, published } = harness();
    const { key } = await seeded(deps, 30);
    const queued = await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    expect(queued.compaction).toMatchObject({ reason: "compaction_queued" });
    const request = published("CompactionRequested").at(-1)!.detail;
    const held = holdFirst(store, "storeFold");
    const worker = harness({}, held.store);
    const running = handleCompactionRequested(worker.deps, request);
    await held.reached;
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    held.release();
    expect(await running).not.toMatchObject({ done: "prepared" });
    await expectOnlyTombstone(key);
  });

  it("a CompactionRequested delivered again after the delete writes nothing", async () => {
    const { deps, published } = harness();
    const { key } = await seeded(deps, 30);
    const queued = await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    expect(queued.compaction).toMatchObject({ reason: "compaction_queued" });
    const request = published("CompactionRequested").at(-1)!.detail;
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    const after = await partition(key);

    expect(await handleCompactionRequested(deps, request)).toMatchObject({ skipped: "fold not found" });
    expect(await partition(key)).toEqual(after);
    await expectOnlyTombstone(key);
  });

  it("is idempotent: a repeat answers deleted; another tenant's id and an unknown id are 404", async () => {
    const { deps } = harness();
    const { key } = await seeded(deps, 2);
    await expect(deleteProcess(deps, { tenantId: "someone-else", processId: key.processId })).rejects.toMatchObject({ code: "process.not_found" });
    expect((await partition(key)).length).toBeGreaterThan(1);
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    const after = await partition(key);
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    expect(await partition(key)).toEqual(after);
    await expect(deleteProcess(deps, { tenantId: TENANT, processId: "never-there" })).rejects.toMatchObject({ code: "process.not_found" });
  });

  it("the history search cache does not answer for a deleted process", async () => {
    const { deps } = harness();
    const { key } = await seeded(deps, 6);
    const found = await deps.history.search(deps, key, { q: "aisle", limit: 5 });
    expect(found.items.length).toBeGreaterThan(0);
    expect(deps.history.stats().builds).toBe(1);
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    await expect(deps.history.search(deps, key, { q: "aisle", limit: 5 })).rejects.toMatchObject({ code: "process.not_found" });
  });

  it("a process above the inline threshold answers deleting, refuses writes at once, and the worker erases the rest", async () => {
    const { deps, published } = harness();
    deps.erasure = { inlineItems: 5, batchItems: 4 };
    const { key } = await seeded(deps, 20);
    await store.putInboxItem(TENANT, offer(key, `big-${seq}`));

    expect(await deleteProcess(deps, key)).toEqual({ status: "deleting" });
    // The inbox goes first, and the tombstone already refuses writes and reads.
    expect(await inboxOf(key, `big-${seq}`)).toEqual([]);
    expect((await partition(key)).length).toBeGreaterThan(1);
    await expect(appendMessage(deps, key, { role: "USER", content: "still there?" })).rejects.toMatchObject({ code: "process.not_found" });
    await expect(requireProcess(deps, key)).rejects.toMatchObject({ code: "process.not_found" });
    // A repeat while it is erasing answers deleting again and asks the worker again.
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleting" });
    const requests = published("ProcessEraseRequested");
    expect(requests.map((e) => e.detail)).toEqual([key, key]);

    expect(await handleProcessEraseRequested(deps, requests[0]!.detail)).toMatchObject({ erased: expect.any(Number) });
    await expectOnlyTombstone(key);
    // A late second delivery has nothing left to erase.
    expect(await handleProcessEraseRequested(deps, requests[1]!.detail)).toEqual({ erased: 0 });
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    await expectOnlyTombstone(key);
  });

  it("the worker never erases a process that carries no tombstone", async () => {
    const { deps } = harness();
    const { key } = await seeded(deps, 2);
    const before = await partition(key);
    await expect(handleProcessEraseRequested(deps, key)).rejects.toMatchObject({ code: "process.not_deleted" });
    expect(await partition(key)).toEqual(before);
  });
});

describe("deleting a process deletes its blobs (the folder store, BLOB_DIR)", () => {
  let blobDir: string;
  beforeAll(async () => {
    blobDir = await mkdtemp(path.join(tmpdir(), "vtm-del-blobs-"));
  });
  afterAll(async () => {
    await rm(blobDir, { recursive: true, force: true });
  });

  /** Puts `n` blobs under the process, as appends of large native parts would; their shas. */
  async function putBlobs(deps: ServiceDeps, key: ProcessKey, n: number) {
    const shas: string[] = [];
    for (let i = 0; i < n; i++) {
      const bytes = new TextEncoder().encode(`${key.processId}: a long tool result ${i}`);
      const sha = createHash("sha256").update(bytes).digest("hex");
      await deps.blobs!.put(key, sha, bytes);
      shas.push(sha);
    }
    return shas.sort();
  }

  it("a deletion within the call (204) leaves none of the process's blobs, and every other process keeps its own", async () => {
    const { deps } = harness({ BLOB_DIR: blobDir });
    const { key } = await seeded(deps, 2);
    const { key: other } = await seeded(deps, 2);
    await putBlobs(deps, key, 3);
    const kept = await putBlobs(deps, other, 2);

    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    expect(await deps.blobs!.list(key)).toEqual([]);
    expect(await deps.blobs!.list(other)).toEqual(kept);
    await expectOnlyTombstone(key);
  });

  it("a deletion in the background (202) deletes the blobs with the worker's erasure, not before", async () => {
    const { deps, published } = harness({ BLOB_DIR: blobDir });
    deps.erasure = { inlineItems: 5, batchItems: 4 };
    const { key } = await seeded(deps, 20);
    const { key: other } = await seeded(deps, 1);
    const shas = await putBlobs(deps, key, 4);
    const kept = await putBlobs(deps, other, 1);

    expect(await deleteProcess(deps, key)).toEqual({ status: "deleting" });
    // Items still lead to them until the worker has erased every one.
    expect(await deps.blobs!.list(key)).toEqual(shas);
    await handleProcessEraseRequested(deps, published("ProcessEraseRequested")[0]!.detail);
    expect(await deps.blobs!.list(key)).toEqual([]);
    expect(await deps.blobs!.list(other)).toEqual(kept);
    await expectOnlyTombstone(key);
  });

  it("a blob deletion that fails leaves the process deleting, and the repeat finishes it", async () => {
    const { deps } = harness({ BLOB_DIR: blobDir });
    const { key } = await seeded(deps, 1);
    await putBlobs(deps, key, 2);
    const real = deps.blobs!;
    deps.blobs = { ...real, deleteProcess: async () => Promise.reject(new Error("bucket unreachable")) };
    await expect(deleteProcess(deps, key)).rejects.toThrow("bucket unreachable");
    expect((await partition(key))[0]).toMatchObject({ sk: "META", deletion: "DELETING" });

    deps.blobs = real;
    expect(await deleteProcess(deps, key)).toEqual({ status: "deleted" });
    expect(await real.list(key)).toEqual([]);
    await expectOnlyTombstone(key);
  });
});
