/** The DynamoDB adapter against the real DynamoDB Local engine. */
import { beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../core/ports/store.js";
import { freshTable } from "../support/dynamo.js";
import { makeMemory, makeMessage } from "../support/fixtures.js";

let store: Store;
const tenantId = "acme";
const now = () => new Date().toISOString();

async function newProcess(processId: string, projectId = "proj") {
  await store.upsertProcess(tenantId, { processId, projectId }, now());
  return { tenantId, processId };
}

beforeAll(async () => {
  ({ store } = await freshTable("store"));
});

describe("processes", () => {
  it("upserts keeping createdAt and replacing the optional fields", async () => {
    const first = await store.upsertProcess(tenantId, { processId: "up-1", projectId: "p", name: "one", title: "T" }, "2026-01-01T00:00:00.000Z");
    const second = await store.upsertProcess(tenantId, { processId: "up-1", projectId: "p", name: "two" }, "2026-02-01T00:00:00.000Z");
    expect(second.createdAt).toBe(first.createdAt);
    expect(second.name).toBe("two");
    expect(second.title).toBeUndefined();
    expect((await store.getProcess({ tenantId, processId: "up-1" }))?.version).toBe(0);
  });

  it("lists newest first, by tenant and by project, with a cursor", async () => {
    await store.upsertProcess("lister", { processId: "a", projectId: "x" }, "2026-01-01T00:00:00.000Z");
    await store.upsertProcess("lister", { processId: "b", projectId: "y" }, "2026-01-02T00:00:00.000Z");
    await store.upsertProcess("lister", { processId: "c", projectId: "x" }, "2026-01-03T00:00:00.000Z");
    const page1 = await store.listProcesses("lister", { limit: 2 });
    expect(page1.items.map((p) => p.processId)).toEqual(["c", "b"]);
    const page2 = await store.listProcesses("lister", { limit: 2, cursor: page1.nextCursor });
    expect(page2.items.map((p) => p.processId)).toEqual(["a"]);
    const byProject = await store.listProcesses("lister", { limit: 10, projectId: "x" });
    expect(byProject.items.map((p) => p.processId)).toEqual(["c", "a"]);
    expect((await store.listProcesses("other-tenant", { limit: 10 })).items).toEqual([]);
  });
});

describe("messages", () => {
  it("appends only to an existing process", async () => {
    const out = await store.appendMessage({ tenantId, processId: "missing" }, makeMessage("missing"));
    expect(out).toEqual({ ok: false, reason: "process_not_found" });
    expect(await store.hasUserMessage({ tenantId, processId: "missing" })).toBe(false);
  });

  it("records that a USER message exists, and only a USER message", async () => {
    const key = await newProcess("has-user");
    await store.appendMessage(key, makeMessage("has-user", { role: "SYSTEM" }));
    expect(await store.hasUserMessage(key)).toBe(false);
    await store.appendMessage(key, makeMessage("has-user", { role: "USER" }));
    expect(await store.hasUserMessage(key)).toBe(true);
    expect((await store.activeView(key))?.state.hasUserMessage).toBe(true);
  });

  it("pages the whole history oldest first", async () => {
    const key = await newProcess("hist");
    const sent = [];
    for (let i = 0; i < 7; i++) {
      const m = makeMessage("hist", { content: `m${i}` });
      sent.push(m.id);
      await store.appendMessage(key, m);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listMessages(key, { limit: 3, cursor });
      seen.push(...page.items.map((m) => m.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(sent);
  });

  it("returns the first message for a repeated idempotency key, even when retried concurrently", async () => {
    const key = await newProcess("idem");
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.appendMessage(key, makeMessage("idem", { content: `try ${i}` }), "req-1")),
    );
    const created = attempts.filter((a) => a.ok && a.created);
    expect(created).toHaveLength(1);
    const ids = new Set(attempts.map((a) => (a.ok ? a.message.id : "x")));
    expect(ids.size).toBe(1);
    expect((await store.listMessages(key, { limit: 100 })).items).toHaveLength(1);
  });
});

describe("active view and archiving", () => {
  it("returns META, the active summary and active messages in one strongly consistent query", async () => {
    const key = await newProcess("view");
    const msgs = [makeMessage("view"), makeMessage("view"), makeMessage("view")];
    for (const m of msgs) await store.appendMessage(key, m);
    const memory = makeMemory("view", { sourceRefs: [msgs[0]!.id] });
    await store.putMemory(key, memory);
    await store.markArchived(key, [msgs[0]!.id], memory.id);
    const view = await store.activeView(key);
    expect(view?.state.process.processId).toBe("view");
    expect(view?.summaries.map((s) => s.id)).toEqual([memory.id]);
    expect(view?.messages.map((m) => m.id)).toEqual([msgs[1]!.id, msgs[2]!.id]);
    // The archived original is still in the full history, pointing at its memory.
    const all = await store.listMessages(key, { limit: 10 });
    expect(all.items[0]?.archivedInMemoryId).toBe(memory.id);
  });

  it("markArchived is idempotent under concurrency and never re-points a message", async () => {
    const key = await newProcess("arch");
    const msgs = Array.from({ length: 20 }, () => makeMessage("arch"));
    for (const m of msgs) await store.appendMessage(key, m);
    const ids = msgs.map((m) => m.id);
    const memories = ["A", "B", "C", "D"].map(() => makeMemory("arch", { sourceRefs: ids }));
    for (const m of memories) await store.putMemory(key, m);
    const results = await Promise.all(memories.map((mem) => store.markArchived(key, ids, mem.id)));
    // Each message was archived exactly once, by exactly one caller.
    const archivedCounts = results.map((r) => r.archived.length);
    expect(archivedCounts.reduce((a, b) => a + b, 0)).toBe(20);
    for (const r of results) expect(r.archived.length + r.skipped.length).toBe(20);
    const all = (await store.listMessages(key, { limit: 100 })).items;
    for (const m of all) {
      const winner = results.findIndex((r) => r.archived.includes(m.id));
      expect(m.archivedInMemoryId).toBe(memories[winner]!.id);
    }
    const late = makeMemory("arch", { sourceRefs: ids });
    await store.putMemory(key, late);
    const again = await store.markArchived(key, ids, late.id);
    expect(again).toEqual({ archived: [], skipped: expect.arrayContaining(ids) });
    expect((await store.activeView(key))?.messages).toEqual([]);
  });

  it("markArchived archives only into an OK memory, so a late writer never re-folds what an undo restored", async () => {
    const key = await newProcess("arch-ok");
    const msgs = Array.from({ length: 3 }, () => makeMessage("arch-ok"));
    for (const m of msgs) await store.appendMessage(key, m);
    const ids = msgs.map((m) => m.id);
    const reverted = makeMemory("arch-ok", { status: "REVERTED", sourceRefs: ids });
    await store.putMemory(key, reverted);
    expect(await store.markArchived(key, ids, reverted.id)).toEqual({ archived: [], skipped: ids });
    expect(await store.markArchived(key, ids, "mem_missing")).toEqual({ archived: [], skipped: ids });
    expect((await store.activeView(key))?.messages.map((m) => m.id)).toEqual(ids);
  });

  it("supersedes a memory once only", async () => {
    const key = await newProcess("sup");
    const a = makeMemory("sup");
    await store.putMemory(key, a);
    const [r1, r2] = await Promise.all([store.supersede(key, a.id, "mem_x", now()), store.supersede(key, a.id, "mem_y", now())]);
    expect([r1.ok, r2.ok].sort()).toEqual([false, true]);
    const failed = [r1, r2].find((r) => !r.ok);
    expect(failed).toEqual({ ok: false, reason: "already_superseded" });
    expect(await store.supersede(key, "mem_missing", "mem_x", now())).toEqual({ ok: false, reason: "not_found" });
    const stored = await store.getMemory(key, a.id);
    expect(stored?.supersededAt).not.toBeNull();
    expect((await store.activeView(key))?.summaries).toEqual([]);
  });

  it("reads the active summary without its sourceRefs, so a big fold costs later turns nothing", async () => {
    const measure = async (processId: string, refs: number) => {
      const key = await newProcess(processId);
      await store.appendMessage(key, makeMessage(processId));
      const sourceRefs = Array.from({ length: refs }, (_, i) => `msg_01HZZZZZZZZZZZZZZZZZZZ${String(i).padStart(4, "0")}`);
      await store.putMemory(key, makeMemory(processId, { sourceRefs }));
      const view = await store.activeView(key);
      return { rcu: view!.consumedCapacity!, summary: view!.summaries[0]! };
    };
    const small = await measure("refs-1", 1);
    const big = await measure("refs-1000", 1000);
    expect(big.rcu).toBe(small.rcu);
    expect(big.summary.sourceRefs).toEqual([]);
    // The full memory still has them.
    const full = await store.getMemory({ tenantId, processId: "refs-1000" }, big.summary.id);
    expect(full?.sourceRefs).toHaveLength(1000);
  });

  it("reads the active view at a cost that does not grow with archived history", async () => {
    const measure = async (processId: string, archived: number) => {
      const key = await newProcess(processId);
      const old = Array.from({ length: archived }, () => makeMessage(processId, { content: "x".repeat(400) }));
      for (const m of old) await store.appendMessage(key, m);
      const recent = Array.from({ length: 10 }, () => makeMessage(processId, { content: "y".repeat(400) }));
      for (const m of recent) await store.appendMessage(key, m);
      if (archived) {
        const memory = makeMemory(processId, { sourceRefs: old.map((m) => m.id) });
        await store.putMemory(key, memory);
        await store.markArchived(key, memory.sourceRefs, memory.id);
        await store.supersede(key, memory.id, "mem_newer", now());
      }
      const view = await store.activeView(key);
      return { rcu: view!.consumedCapacity!, items: view!.itemsRead!, active: view!.messages.length };
    };
    const none = await measure("cap-0", 0);
    const many = await measure("cap-300", 300);
    expect(many.active).toBe(10);
    expect(many.items).toBe(none.items);
    expect(many.rcu).toBe(none.rcu);
    expect(none.rcu).toBeGreaterThan(0);
  });
});

describe("inbox items", () => {
  const item = (id: string) => ({
    id,
    processId: "proc-1",
    type: "APPROVAL" as const,
    tags: ["RECOMPACTION_OFFER"],
    status: "OPEN" as const,
    payload: { from: "2026-01-01T00:00:00.000Z", to: "2026-01-02T00:00:00.000Z", topicLabel: "auth" },
    createdAt: now(),
  });

  it("puts an item once and answers it once", async () => {
    // An offer needs a live process (docs/api.md, "Deleting a process").
    await store.upsertProcess(tenantId, { processId: "proc-1", projectId: "demo" }, now());
    const first = await store.putInboxItem(tenantId, item("inb_1"));
    const second = await store.putInboxItem(tenantId, { ...item("inb_1"), payload: { ...item("inb_1").payload, topicLabel: "other" } });
    expect(first.created).toBe(true);
    expect(second).toMatchObject({ created: false, item: { payload: { topicLabel: "auth" } } });
    const answers = await Promise.all([
      store.answerInboxItem(tenantId, "inb_1", "ACCEPTED", now()),
      store.answerInboxItem(tenantId, "inb_1", "DECLINED", now()),
    ]);
    expect(answers.filter((a) => a.ok)).toHaveLength(1);
    expect(answers.find((a) => !a.ok)).toEqual({ ok: false, reason: "not_open" });
    expect(await store.answerInboxItem(tenantId, "inb_none", "ACCEPTED", now())).toEqual({ ok: false, reason: "not_found" });
    expect(await store.getInboxItem("other", "inb_1")).toBeNull();
  });

  it("lists by tenant, process and status", async () => {
    for (const processId of ["p1", "p2"]) await store.upsertProcess("lister2", { processId, projectId: "demo" }, now());
    await store.putInboxItem("lister2", { ...item("inb_a"), processId: "p1" });
    await store.putInboxItem("lister2", { ...item("inb_b"), processId: "p2" });
    await store.answerInboxItem("lister2", "inb_b", "DECLINED", now());
    expect((await store.listInbox("lister2", {})).map((i) => i.id).sort()).toEqual(["inb_a", "inb_b"]);
    expect((await store.listInbox("lister2", { processId: "p1" })).map((i) => i.id)).toEqual(["inb_a"]);
    expect((await store.listInbox("lister2", { status: "OPEN" })).map((i) => i.id)).toEqual(["inb_a"]);
  });
});
