/**
 * Retention of archived originals (docs/configuration.md, "Retention"), against DynamoDB Local: the
 * archive write carries the TTL attribute, summaries and active or pinned messages never do, and
 * every read treats an original past its expiry as gone, whether the table still holds it (the
 * clock moved past it) or has removed it (a DeleteItem standing in for the TTL).
 */
import { DeleteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { TTL_ATTRIBUTE, memorySk, messageSk, processPk } from "../../core/adapters/dynamodb/keys.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import type { Memory } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage, getMessage, listMessages } from "../../core/services/messages.js";
import { exportPage } from "../../core/services/process-export.js";
import { importProcess } from "../../core/services/process-import.js";
import { upsertProcess } from "../../core/services/processes.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { revertMemory } from "../../core/services/compaction/revert.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";
import { refusal as refusalOf } from "../support/refusal.js";
import { appendSteps, foldHard } from "../support/steps.js";

const TENANT = "ret";
const DAY_S = 86_400;
let table: Awaited<ReturnType<typeof freshTable>>;
/** The services' clock: the wall clock plus what a test moved it on. */
let skippedMs = 0;

const depsOver = (store: Store): ServiceDeps => testContainer({ store, retryDelaysMs: [], clock: { now: () => new Date(Date.now() + skippedMs) } }).deps;

let deps: ServiceDeps;

beforeAll(async () => {
  table = await freshTable("ret");
  deps = depsOver(table.store);
});

const key = (processId: string): ProcessKey => ({ tenantId: TENANT, processId });

/** A process in `projectId` with `n` messages (the first USER message is auto-pinned). */
async function seed(k: ProcessKey, projectId: string, n: number, word = "crate") {
  await upsertProcess(deps, TENANT, k.processId, { projectId });
  await appendSteps(deps, k, n, 0, word);
}

const fold = async (k: ProcessKey, d: ServiceDeps = deps): Promise<Memory> => (await d.store.getMemory(k, await foldHard(d, k)))!;

/** A process of its own project under a retention of `days`, with one HARD fold of its history. */
async function foldUnder(processId: string, days: number, word = "crate") {
  const k = key(processId);
  await table.store.putSettings(TENANT, `p-${processId}`, { retentionDays: days }, new Date().toISOString());
  await seed(k, `p-${processId}`, 24, word);
  return { k, memory: await fold(k) };
}

const rawItems = (k: ProcessKey) => table.partition(k);

const rawMessage = async (k: ProcessKey, id: string) =>
  (await table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: processPk(k), sk: messageSk(id) }, ConsistentRead: true }))).Item;

const expiryOf = (memory: Memory, days: number) => Math.floor(Date.parse(memory.createdAt) / 1000) + days * DAY_S;

const refusal = (p: Promise<unknown>) => refusalOf(p, (e) => ({ details: e.details }));

describe("the archive write", () => {
  it("gives each archived original expiresAtEpoch = commit time + retentionDays, and nothing else gets it", async () => {
    const { k, memory } = await foldUnder("archive-1", 30);
    expect(memory.metadata.retentionDays).toBe(30);

    const items = await rawItems(k);
    const archived = items.filter((i) => i.type === "MSG" && i.archivedInMemoryId === memory.id);
    const active = items.filter((i) => i.type === "MSG" && i.archivedInMemoryId === undefined);
    expect(archived.map((i) => i.id).sort()).toEqual([...memory.sourceRefs].sort());
    expect(archived.length).toBeGreaterThan(10);
    for (const item of archived) expect(item[TTL_ATTRIBUTE]).toBe(expiryOf(memory, 30));
    // Active messages, the auto-pinned first USER message among them, and every memory: never.
    expect(active.some((i) => (i.tags as string[]).includes("STRENGTH:pinned"))).toBe(true);
    for (const item of [...active, ...items.filter((i) => i.type === "MEM" || i.type === "META")]) expect(item[TTL_ATTRIBUTE]).toBeUndefined();
    // The wire carries it as a time on the archived originals only.
    const all = await listMessages(deps, k, { view: "all", limit: 100 });
    expect(all.items.filter((m) => m.expiresAt !== undefined).map((m) => m.id).sort()).toEqual([...memory.sourceRefs].sort());
    expect(all.items.find((m) => m.expiresAt !== undefined)!.expiresAt).toBe(new Date(expiryOf(memory, 30) * 1000).toISOString());
  });

  it("gives the originals a roll-forward archives after the commit the same expiry", async () => {
    // Ten items per transaction: most archives of the fold roll forward after its commit.
    const store = createDynamoStore({ client: table.client, tableName: table.tableName, transactionLimit: 10 });
    const small = depsOver(store);
    const k = key("archive-rf");
    await store.putSettings(TENANT, "p-rf", { retentionDays: 7 }, new Date().toISOString());
    await seed(k, "p-rf", 40);
    const memory = await fold(k, small);
    expect(memory.sourceRefs.length).toBeGreaterThan(20);
    const archived = (await rawItems(k)).filter((i) => i.type === "MSG" && i.archivedInMemoryId === memory.id);
    expect(archived.length).toBe(memory.sourceRefs.length);
    expect(new Set(archived.map((i) => i[TTL_ATTRIBUTE]))).toEqual(new Set([expiryOf(memory, 7)]));
  });

  it("gives a range fold's originals the expiry too, never its marker; its revert archives the marker without one", async () => {
    const k = key("archive-range");
    await table.store.putSettings(TENANT, "p-range", { retentionDays: 4 }, new Date().toISOString());
    await seed(k, "p-range", 16);
    const range = await compactRange(deps, k, { from: "2000-01-01T00:00:00.000Z", to: deps.clock.now().toISOString(), topicLabel: "docks" });
    expect(range.compactedMessages).toBeGreaterThan(5);
    const memory = (await deps.store.getMemory(k, range.memoryId!))!;
    expect(memory.metadata.retentionDays).toBe(4);
    for (const id of memory.sourceRefs) expect((await rawMessage(k, id))![TTL_ATTRIBUTE]).toBe(expiryOf(memory, 4));
    const marker = (await rawMessage(k, range.markerMessageId!))!;
    expect(marker.archivedInMemoryId).toBeUndefined();
    expect(marker[TTL_ATTRIBUTE]).toBeUndefined();

    await revertMemory(deps, k, memory.id);
    const after = (await rawMessage(k, range.markerMessageId!))!;
    expect(after.archivedInMemoryId).toBe(memory.id);
    expect(after[TTL_ATTRIBUTE]).toBeUndefined();
    for (const id of memory.sourceRefs) expect((await rawMessage(k, id))![TTL_ATTRIBUTE]).toBeUndefined();
  });

  it("gives the originals of a fold the worker prepared and committed the expiry of the deployment's RETENTION_DAYS", async () => {
    const { deps: bg, bus } = testContainer({ store: table.store, env: { RETENTION_DAYS: "11" }, retryDelaysMs: [50, 100], worker: true });
    const k = key("archive-worker");
    await upsertProcess(bg, TENANT, k.processId, { projectId: "p-worker" });
    for (let i = 0; i < 31; i++) await appendMessage(bg, k, { role: i % 2 ? "ASSISTANT" : "USER", content: `step ${i}: shelf ${i} to aisle ${i % 7}.` });
    const turn = (tokens: number) => runTurn(bg, k, { model: { contextWindow: 10_000 }, prompt: { tokens } });
    await turn(7_200); // queues the HARD fold; the worker prepares it
    await bus.drain();
    expect((await turn(8_700)).compaction.reason).toBe("compaction_queued"); // the worker commits it
    await bus.drain();
    const memory = (await bg.store.listMemories(k)).find((m) => m.status === "OK")!;
    expect(memory.metadata).toMatchObject({ producedBy: "worker", retentionDays: 11 });
    for (const id of memory.sourceRefs) expect((await rawMessage(k, id))![TTL_ATTRIBUTE]).toBe(expiryOf(memory, 11));
    const raw = await table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: processPk(k), sk: memorySk(memory.id) } }));
    expect(raw.Item![TTL_ATTRIBUTE]).toBeUndefined(); // the PREPARED row's TTL went with its commit
  });

  it("applies a changed retention to later folds only, and a project's null keeps originals over the tenant's", async () => {
    const k = key("archive-change");
    await table.store.putSettings(TENANT, "p-change", { retentionDays: 30 }, new Date().toISOString());
    await seed(k, "p-change", 24);
    const first = await fold(k);
    // The settings cache lives a minute per container: a fresh container sees the change at once.
    await table.store.putSettings(TENANT, "p-change", { retentionDays: 2 }, new Date().toISOString());
    const later = depsOver(table.store);
    for (let i = 0; i < 20; i++) await appendMessage(later, k, { role: i % 2 ? "ASSISTANT" : "USER", content: `later ${i}: pallet ${i} to bay ${i % 3}.` });
    const second = await fold(k, later);
    const ttlOf = async (id: string) => (await rawMessage(k, id))![TTL_ATTRIBUTE];
    expect(await ttlOf(first.sourceRefs[0]!)).toBe(expiryOf(first, 30));
    expect(await ttlOf(second.sourceRefs.at(-1)!)).toBe(expiryOf(second, 2));

    const kept = key("archive-null");
    await table.store.putSettings(TENANT, undefined, { retentionDays: 5 }, new Date().toISOString());
    await table.store.putSettings(TENANT, "p-null", { retentionDays: null }, new Date().toISOString());
    const fresh = depsOver(table.store);
    await upsertProcess(fresh, TENANT, kept.processId, { projectId: "p-null" });
    for (let i = 0; i < 24; i++) await appendMessage(fresh, kept, { role: i % 2 ? "ASSISTANT" : "USER", content: `keep ${i}: box ${i}.` });
    const forever = await fold(kept, fresh);
    expect(forever.metadata.retentionDays).toBeUndefined();
    const archived = (await rawItems(kept)).filter((i) => i.type === "MSG" && i.archivedInMemoryId === forever.id);
    expect(archived.length).toBe(forever.sourceRefs.length);
    for (const item of archived) expect(item[TTL_ATTRIBUTE]).toBeUndefined();
    await table.store.putSettings(TENANT, undefined, {}, new Date().toISOString());
  });
});

describe("reads past the expiry", () => {
  /** A process with one fold under a 1-day retention; every message names "walrus". */
  const expiringFold = (processId: string) => foldUnder(processId, 1, "walrus");

  const exportedIds = async (k: ProcessKey) => {
    const page = await exportPage(deps, k);
    const lines = page.text.trim().split("\n").map((l) => JSON.parse(l) as { kind?: string; message?: { id: string }; messages?: number });
    return { messages: lines.filter((l) => l.kind === "message").map((l) => l.message!.id), end: lines.at(-1)! };
  };

  /** Every read answers as if `gone` (all originals of `memory`) did not exist; the summary stays. */
  async function expectGone(k: ProcessKey, memory: Memory) {
    const gone = memory.sourceRefs;
    const search = await deps.history.search(deps, k, { q: "walrus", limit: 50 });
    expect(search.items.length).toBeGreaterThan(0); // the active ones still match
    expect(search.items.filter((i) => gone.includes(i.message.id))).toEqual([]);

    const sources = await deps.history.sources(deps, k, memory.id);
    expect(sources.items).toEqual([]);
    expect(sources.expired).toEqual(gone);
    expect(sources.memory.status).toBe("OK");

    const exported = await exportedIds(k);
    expect(exported.messages.filter((id) => gone.includes(id))).toEqual([]);
    expect(exported.end.messages).toBe(exported.messages.length);

    const all = await listMessages(deps, k, { view: "all", limit: 100 });
    expect(all.items.filter((m) => gone.includes(m.id))).toEqual([]);
    expect(await refusal(getMessage(deps, k, gone[0]!))).toMatchObject({ kind: "not_found" });

    const state = await deps.store.getProcess(k);
    const refused = await refusal(revertMemory(deps, k, memory.id));
    expect(refused).toMatchObject({ kind: "conflict", code: "memory.originals_expired", details: { expiredCount: gone.length, expired: gone } });
    // Nothing written: the summary is still the active, replayed one, at the same version.
    const after = await deps.store.getProcess(k);
    expect(after).toEqual(state);
    expect(after!.activeSummaryId).toBe(memory.id);
    expect((await deps.store.getMemory(k, memory.id))!.status).toBe("OK");
  }

  it("treats an original still stored past its expiry as gone: search (cached index too), sources, export, listings, revert", async () => {
    const { k, memory } = await expiringFold("stale-1");
    // Before the expiry: found, and the index gets cached with them.
    const before = await deps.history.search(deps, k, { q: "walrus", limit: 50 });
    expect(before.items.some((i) => memory.sourceRefs.includes(i.message.id))).toBe(true);
    expect((await deps.history.sources(deps, k, memory.id)).expired).toEqual([]);

    skippedMs = 1 * DAY_S * 1000 + 1000;
    try {
      expect(await rawMessage(k, memory.sourceRefs[0]!)).toBeDefined(); // still physically there
      await expectGone(k, memory);
    } finally {
      skippedMs = 0;
    }
  });

  it("treats an original the table's TTL removed as gone the same way", async () => {
    const { k, memory } = await expiringFold("deleted-1");
    await deps.history.search(deps, k, { q: "walrus", limit: 50 }); // cache the index with them
    // What DynamoDB's TTL does, some time after the expiry: delete the items.
    for (const id of memory.sourceRefs) {
      await table.client.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: processPk(k), sk: messageSk(id) } }));
    }
    // The clock is not moved: the items are gone all the same.
    await expectGone(k, memory);
  });

  it("names only the expired part in sources when some originals are gone, and a revert refuses with their count", async () => {
    const { k, memory } = await expiringFold("partial-1");
    const [first, second, ...rest] = memory.sourceRefs;
    for (const id of [first!, second!]) {
      await table.client.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: processPk(k), sk: messageSk(id) } }));
    }
    const sources = await deps.history.sources(deps, k, memory.id);
    expect(sources.expired).toEqual([first, second]);
    expect(sources.items.map((m) => m.id)).toEqual(rest);
    expect(await refusal(revertMemory(deps, k, memory.id))).toMatchObject({ code: "memory.originals_expired", details: { expiredCount: 2, expired: [first, second] } });
  });

  it("refuses a revert whose originals would expire within the lease, before any write", async () => {
    const { k, memory } = await expiringFold("soon-1");
    skippedMs = DAY_S * 1000 - deps.leaseMs / 2; // half a lease before the expiry
    try {
      expect((await deps.history.sources(deps, k, memory.id)).expired).toEqual([]); // not expired yet
      expect(await refusal(revertMemory(deps, k, memory.id))).toMatchObject({ code: "memory.originals_expired" });
      expect((await deps.store.getMemory(k, memory.id))!.status).toBe("OK");
    } finally {
      skippedMs = 0;
    }
  });
});

describe("a revert", () => {
  it("removes the TTL attribute from every original it makes active again, roll-forward included", async () => {
    const store = createDynamoStore({ client: table.client, tableName: table.tableName, transactionLimit: 10 });
    const small = depsOver(store);
    const k = key("revert-1");
    await store.putSettings(TENANT, "p-revert", { retentionDays: 3 }, new Date().toISOString());
    await upsertProcess(small, TENANT, k.processId, { projectId: "p-revert" });
    for (let i = 0; i < 40; i++) await appendMessage(small, k, { role: i % 2 ? "ASSISTANT" : "USER", content: `item ${i}: lot ${i} to hall ${i % 5}.` });
    const memory = await fold(k, small);
    expect((await rawMessage(k, memory.sourceRefs.at(-1)!))![TTL_ATTRIBUTE]).toBe(expiryOf(memory, 3));

    const reverted = await revertMemory(small, k, memory.id);
    expect(reverted.restoredMessages).toBe(memory.sourceRefs.length);
    for (const id of memory.sourceRefs) {
      const item = (await rawMessage(k, id))!;
      expect(item.archivedInMemoryId).toBeUndefined();
      expect(item[TTL_ATTRIBUTE]).toBeUndefined();
    }
    const view = await small.store.activeView(k);
    expect(view!.messages.filter((m) => m.expiresAt !== undefined)).toEqual([]);
    // The reverted summary keeps no TTL either: it stays for audit.
    const raw = await table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: processPk(k), sk: memorySk(memory.id) } }));
    expect(raw.Item!.status).toBe("REVERTED");
    expect(raw.Item![TTL_ATTRIBUTE]).toBeUndefined();
  });
});

describe("export and import", () => {
  it("carry an original's expiry over as the TTL attribute, and refuse an expiry that is not a time", async () => {
    const { k, memory } = await foldUnder("export-1", 9);
    const text = (await exportPage(deps, k)).text;
    const copy = key("export-1-copy");
    await importProcess(deps, copy, text, { remapIds: false });
    const archived = (await rawItems(copy)).filter((i) => i.type === "MSG" && i.archivedInMemoryId !== undefined);
    expect(archived.map((i) => i.id).sort()).toEqual([...memory.sourceRefs].sort());
    for (const item of archived) expect(item[TTL_ATTRIBUTE]).toBe(expiryOf(memory, 9));
    for (const item of (await rawItems(copy)).filter((i) => i.archivedInMemoryId === undefined)) expect(item[TTL_ATTRIBUTE]).toBeUndefined();

    const bad = text.replace(/"expiresAt":"[^"]+"/, '"expiresAt":"in nine days"');
    const refused = await refusal(importProcess(deps, key("export-1-bad"), bad, { remapIds: false }));
    expect(refused).toMatchObject({ kind: "input", code: "import.invalid_line" });
    expect(await rawItems(key("export-1-bad"))).toEqual([]);
  });
});
