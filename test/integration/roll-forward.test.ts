/**
 * The archive roll-forward under a slow walker (docs/compaction.md, "The commit protocol"): a walker
 * frozen between its read of META and its writes must not undo what happened meanwhile. Small
 * transactions (`transactionLimit`) make a short history roll forward.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createTable } from "../../core/adapters/dynamodb/create-table.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { createFaultyStore, InjectedFault } from "../../tools/faulty-store.js";
import { checkInvariants, readAllMessages } from "../../tools/invariants.js";
import { dynamoEndpoint } from "../support/dynamo.js";
import { commandName, heldClient } from "../support/held-client.js";
import { seedChat } from "../support/race.js";
import { makeMemory } from "../support/fixtures.js";
import { seedImported } from "../support/seed.js";
import { testContainer } from "../support/container.js";

const LIMIT = 6;
let client: DynamoDBDocumentClient;
let tableName: string;
let store: Store;
let seq = 0;

beforeAll(async () => {
  client = createDocumentClient({ endpoint: dynamoEndpoint() });
  tableName = `rollfwd-${Date.now().toString(36)}`;
  await createTable(client, tableName);
  store = createDynamoStore({ client, tableName, transactionLimit: LIMIT });
});

const depsOver = (s: Store): ServiceDeps => testContainer({ store: s, env: { COMPACTION_EXECUTION: "inline" } }).deps;

const HARD = { model: { contextWindow: 100_000 }, force: "HARD" as const };
const isWrite = (c: unknown) => ["TransactWriteCommand", "UpdateCommand"].includes(commandName(c));

/** A process whose newest fold committed but crashed before its roll-forward: META names it pending. */
async function foldLeftPending(n = 16): Promise<{ key: ProcessKey; memoryId: string; ids: string[] }> {
  const key = { tenantId: "rf", processId: `rf-${++seq}` };
  const deps = depsOver(store);
  const ids = (await seedChat(deps, key, n)).map((m) => m.id);
  const faulty = createFaultyStore(store);
  faulty.inject({ method: "finishPendingArchive", when: "before" });
  await expect(compactIfNeeded({ ...deps, store: faulty }, key, HARD)).rejects.toBeInstanceOf(InjectedFault);
  const state = (await store.getProcess(key))!;
  expect(state.pendingArchive).not.toBeNull();
  return { key, memoryId: state.pendingArchive!, ids };
}

describe("a slow roll-forward walker", () => {
  it("that read 'pending F' before a revert of F never archives what the revert restored", async () => {
    const { key, memoryId, ids } = await foldLeftPending();
    const slow = heldClient(client, isWrite);
    const walker = createDynamoStore({ client: slow.client, tableName, transactionLimit: LIMIT }).finishPendingArchive(key, memoryId);
    await slow.held; // read META and the memory, about to write

    const deps = depsOver(store);
    const undo = await revertMemory(deps, key, memoryId);
    expect(undo.restoredMessages).toBeGreaterThan(LIMIT);
    slow.release();
    await walker;

    const all = await readAllMessages(store, key);
    expect(all.filter((m) => m.archivedInMemoryId === memoryId).map((m) => m.id)).toEqual([]);
    expect((await settledView(deps, key)).messages.map((m) => m.id)).toEqual(ids);
    expect(await checkInvariants(store, key, { appendedIds: ids, settled: true, noLease: true })).toEqual([]);
  });

  it("that stalls before clearing its marker never clears the marker of the revert that followed", async () => {
    const { key, memoryId, ids } = await foldLeftPending();
    // Walker A is held at its last write (the clear on the old protocol, the last batch on the new).
    const marker = (c: unknown) => isWrite(c) && JSON.stringify((c as { input: unknown }).input).includes("REMOVE pendingArchive");
    const slow = heldClient(client, marker);
    const walker = createDynamoStore({ client: slow.client, tableName, transactionLimit: LIMIT }).finishPendingArchive(key, memoryId);
    await Promise.race([slow.held, walker]);
    // Another reader settles; a revert commits and crashes before its own roll-forward.
    const deps = depsOver(store);
    await settledView(deps, key);
    const faulty = createFaultyStore(store);
    faulty.inject({ method: "finishPendingArchive", when: "before", crash: true });
    await expect(revertMemory({ ...deps, store: faulty }, key, memoryId)).rejects.toBeInstanceOf(InjectedFault);
    expect((await store.getProcess(key))!.pendingArchive).toBe(memoryId);
    slow.release();
    await walker;

    // The revert's marker survived the stale walker, so the next reader finishes the restore.
    expect((await settledView(deps, key)).messages.map((m) => m.id)).toEqual(ids);
    expect(await checkInvariants(store, key, { appendedIds: ids, settled: true, noLease: true })).toEqual([]);
  });
});

describe("an unfinished roll-forward", () => {
  /** A lease taken at the current version, as a caller that read the view without settling it. */
  async function leaseUnsettled(key: ProcessKey) {
    const state = (await store.getProcess(key))!;
    const lease = await store.acquireLease(key, { owner: "late", until: "9999", now: new Date().toISOString(), expectedVersion: state.version });
    expect(lease.ok).toBe(true);
    return state.version;
  }

  it("refuses a fold's commit until it is finished, so the fold never re-folds the tail or replaces the marker", async () => {
    const { key, memoryId, ids } = await foldLeftPending();
    const version = await leaseUnsettled(key);
    const tail = (await store.activeView(key))!.messages.filter((m) => m.archivedInMemoryId === null).slice(0, 3);
    const commit = await store.commitCompaction(key, {
      leaseOwner: "late",
      expectedVersion: version,
      replayEpoch: 0,
      memory: makeMemory(key.processId, { sourceRefs: tail.map((m) => m.id) }),
      priorSummaryId: memoryId,
      archiveIds: tail.map((m) => m.id),
      at: new Date().toISOString(),
    });
    expect(commit).toEqual({ ok: false, reason: "conflict" });
    await store.releaseLease(key, "late");
    await settledView(depsOver(store), key);
    expect(await checkInvariants(store, key, { appendedIds: ids, settled: true, noLease: true })).toEqual([]);
  });

  it("refuses an undo's commit until it is finished", async () => {
    const { key, memoryId, ids } = await foldLeftPending();
    const version = await leaseUnsettled(key);
    const memory = (await store.getMemory(key, memoryId))!;
    const revert = await store.revertCompaction(key, {
      leaseOwner: "late",
      expectedVersion: version,
      replayEpoch: 0,
      memoryId,
      priorSummaryId: null,
      restoreIds: memory.sourceRefs,
      holdTokens: 0,
      at: new Date().toISOString(),
    });
    expect(revert).toEqual({ ok: false, reason: "conflict" });
    await store.releaseLease(key, "late");
    await settledView(depsOver(store), key);
    expect(await checkInvariants(store, key, { appendedIds: ids, settled: true, noLease: true })).toEqual([]);
  });
});

describe("the write round trips of a commit", () => {
  /** A client that counts the writes it sends, by command name. */
  function countingWrites(inner: DynamoDBDocumentClient) {
    const writes: string[] = [];
    const counted = new Proxy(inner, {
      get(target, property, receiver) {
        if (property !== "send") return Reflect.get(target, property, receiver);
        return (command: never, ...rest: never[]) => {
          const name = commandName(command);
          const input = JSON.stringify((command as { input: unknown }).input);
          // The lease, the tenant's model-usage counter (docs/reliability.md), or the commit's own writes.
          const kind = input.includes("SET leaseOwner") ? "lease" : input.includes("#USAGE") ? "usage" : "commit";
          if (isWrite(command)) writes.push(`${name} ${kind}`);
          return target.send(command, ...rest);
        };
      },
    });
    return { counted, writes };
  }

  it.each([10, 100, 1_000])("folding %i messages, and undoing the fold, each take at most ceil((n+3)/100) + 1 of them", async (n) => {
    const key = { tenantId: "rf", processId: `cost-${n}-${++seq}` };
    await store.upsertProcess(key.tenantId, { processId: key.processId, projectId: "proj" }, new Date().toISOString());
    const ids = (await seedImported(client, tableName, key, n + 6)).map((m) => m.id);
    const { counted, writes } = countingWrites(client);
    const deps = depsOver(createDynamoStore({ client: counted, tableName }));
    const out = await compactIfNeeded(deps, key, HARD);
    expect(out.compactedMessages).toBe(n + 1); // all but the HARD anchor of 5
    const commitWrites = writes.filter((w) => w.endsWith("commit"));
    expect(commitWrites.length).toBeLessThanOrEqual(Math.ceil((out.compactedMessages + 3) / 100) + 1);
    expect(commitWrites.every((w) => w.startsWith("TransactWriteCommand"))).toBe(true);
    expect(await checkInvariants(store, key, { appendedIds: ids, settled: true, noLease: true })).toEqual([]);

    writes.length = 0;
    expect((await revertMemory(deps, key, out.memoryId!)).restoredMessages).toBe(n + 1);
    const undoWrites = writes.filter((w) => w.endsWith("commit"));
    expect(undoWrites.length).toBeLessThanOrEqual(Math.ceil((n + 1 + 3) / 100) + 1);
    expect(await checkInvariants(store, key, { appendedIds: ids, settled: true, noLease: true })).toEqual([]);
  });
});
