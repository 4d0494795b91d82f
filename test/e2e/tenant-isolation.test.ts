/**
 * Tenant isolation over HTTP: tenant B calls every endpoint with tenant A's ids (process, memory,
 * inbox item, cursors) and gets 404 (or 400 for a cursor that is not its own; 401 without a valid
 * key), never A's data; B's lists never show A's items; nothing of A changes (A's items in the
 * table are compared before and after). Both tenants also own a process with the same id, and
 * each sees only its own one. Events that name the wrong tenant change nothing either.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { seedTenant, type TenantData } from "../support/fuzz/api-fixture.js";
import { ofTenant, tableFingerprint } from "../support/fuzz/table-snapshot.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { KEY_A, KEY_B, startTestService, type ApiResponse } from "../support/service.js";

const fake = createFakeSummarizer();
let ctx: Awaited<ReturnType<typeof startTestService>>;
let client: DynamoDBDocumentClient;
let a: TenantData;
let b: TenantData;
/** A process only tenant A has. */
let aOnly: TenantData;

beforeAll(async () => {
  ctx = await startTestService({ overrides: { summarizer: async () => fake } });
  client = createDocumentClient({ endpoint: ctx.service.dynamoEndpoint });
  // The same process id in both tenants, plus one that only A has.
  a = await seedTenant(ctx.api, ctx.service, { tenantId: "tenant-a", key: KEY_A, processId: "iso-1", secret: "alpha", keepRecent: 8 });
  b = await seedTenant(ctx.api, ctx.service, { tenantId: "tenant-b", key: KEY_B, processId: "iso-1", secret: "bravo", keepRecent: 9 });
  aOnly = await seedTenant(ctx.api, ctx.service, { tenantId: "tenant-a", key: KEY_A, processId: "iso-a-only", secret: "alpha", keepRecent: 8 });
}, 90_000);
afterAll(async () => ctx?.service.stop());

const asB = (method: string, path: string, body?: unknown) => ctx.api(method, path, { key: KEY_B, ...(body !== undefined ? { body } : {}) });
const tenantA = () => tableFingerprint(client, ctx.service.tableName, ofTenant("tenant-a"));
const events = async () => {
  const of = async (key: string) => ((await ctx.api("GET", "/local/events", { key })).body.items as unknown[]).length;
  return (await of(KEY_A)) + (await of(KEY_B));
};

/** No A secret in anything B got back. */
function noLeak(res: ApiResponse, what: string) {
  expect(JSON.stringify(res.body), what).not.toMatch(/alpha/i);
}

const P = (id: string) => `/v1/processes/${id}`;
const MODEL = { model: { contextWindow: 100_000 } };

describe("tenant B aimed at tenant A's process", () => {
  it("gets 404 on every process route, sees no A data, and changes nothing of A", async () => {
    const before = await tenantA();
    const eventsBefore = await events();
    const id = aOnly.processId;
    const calls: Array<[string, string, unknown?]> = [
      ["GET", P(id)],
      ["GET", `${P(id)}/messages`],
      ["GET", `${P(id)}/messages?view=active`],
      ["POST", `${P(id)}/messages`, { role: "USER", content: "B writes into A" }],
      ["POST", `${P(id)}/messages`, { role: "USER", content: "B retries", idempotencyKey: "k1" }],
      ["POST", `${P(id)}/compaction`, { ...MODEL, force: "EMERGENCY" }],
      ["POST", `${P(id)}/compaction`, { ...MODEL, prompt: { tokens: 99_000 } }],
      ["POST", `${P(id)}/compaction/range`, { from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z", topicLabel: "steal" }],
      ["POST", `${P(id)}/turns`, { ...MODEL, message: { role: "USER", content: "B's turn in A" }, prompt: { tokens: 99_000 } }],
      ["POST", `${P(id)}/turns`, { ...MODEL }],
      ["GET", `${P(id)}/context`],
      ["GET", `${P(id)}/memories`],
      ["GET", `${P(id)}/memories?includeFailed=true`],
      ["GET", `${P(id)}/history/search?q=alpha`],
      ["GET", `${P(id)}/history/search?q=ledger&limit=100`],
      ["GET", `${P(id)}/memories/${aOnly.memoryId}/sources`],
      ["GET", `${P(aOnly.workerId)}/context`],
    ];
    for (const [method, path, body] of calls) {
      const res = await asB(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code, `${method} ${path}`).toMatch(/not_found$/);
      noLeak(res, `${method} ${path}`);
    }
    await ctx.service.bus.drain();
    expect(await tenantA()).toBe(before);
    expect(await events()).toBe(eventsBefore);
  });

  it("cannot answer A's offer or read A's memory through its own process of the same id", async () => {
    const before = await tenantA();
    for (const accepted of [true, false]) {
      const res = await asB("POST", `/v1/inbox/${aOnly.itemId}/answer`, { accepted });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("inbox_item.not_found");
    }
    // Same process and plan ids give both tenants the same item id: B answers its own item only.
    expect(b.itemId).toBe(a.itemId);
    const own = await asB("POST", `/v1/inbox/${b.itemId}/answer`, { accepted: false });
    expect(own.status).toBe(200);
    expect(own.body.item.status).toBe("DECLINED");
    noLeak(own, "B's own answer");
    // iso-1 exists in both tenants: A's memory id under B's iso-1 is still unknown to B.
    const sources = await asB("GET", `${P("iso-1")}/memories/${a.memoryId}/sources`);
    expect(sources.status).toBe(404);
    noLeak(sources, "sources");
    await ctx.service.bus.drain();
    expect(await tenantA()).toBe(before);
    const offer = (await ctx.api("GET", `/v1/inbox?processId=iso-1`)).body.items.find((i: any) => i.id === a.itemId);
    expect(offer.status).toBe("OPEN");
  });

  it("cannot use A's cursors", async () => {
    const pageA = await ctx.api("GET", "/v1/processes?limit=1");
    expect(pageA.body.nextCursor).toBeDefined();
    const list = await asB("GET", `/v1/processes?limit=1&cursor=${pageA.body.nextCursor}`);
    expect(list.status).toBe(400);
    expect(list.body.error.code).toBe("cursor.invalid");
    const messagesA = await ctx.api("GET", `${P("iso-1")}/messages?limit=2`);
    expect(messagesA.body.nextCursor).toBeDefined();
    const messages = await asB("GET", `${P("iso-1")}/messages?limit=2&cursor=${messagesA.body.nextCursor}`);
    expect(messages.status).toBe(400);
    noLeak(messages, "messages with A's cursor");
  });
});

describe("what B lists and reads is only B's", () => {
  it("lists: processes, inbox (all, by process, by status) and settings", async () => {
    const procs = await asB("GET", "/v1/processes?limit=100");
    expect(procs.body.items.map((p: any) => p.processId).sort()).toEqual([b.processId, b.workerId].sort());
    noLeak(procs, "processes");
    for (const query of ["", "?processId=iso-1", "?processId=iso-a-only", "?status=OPEN", "?projectId=proj"]) {
      const path = query.includes("projectId=proj") ? `/v1/processes${query}` : `/v1/inbox${query}`;
      const res = await asB("GET", path);
      expect(res.status, path).toBe(200);
      // Inbox items and processes alike name one of B's processes, never A's own one.
      for (const item of res.body.items) expect([b.processId, b.workerId]).toContain(item.processId);
      expect(JSON.stringify(res.body)).not.toContain(aOnly.itemId);
      noLeak(res, path);
    }
    const settings = await asB("GET", "/v1/settings");
    expect(settings.body.overrides).toEqual({ keepRecent: 9 });
    expect((await ctx.api("GET", "/v1/settings")).body.overrides).toEqual({ keepRecent: 8 });
  });

  it("reads of its own process with A's process id show B's data only", async () => {
    for (const path of [
      P("iso-1"),
      `${P("iso-1")}/messages?limit=1000`,
      `${P("iso-1")}/messages?view=active`,
      `${P("iso-1")}/context`,
      `${P("iso-1")}/memories?includeFailed=true`,
      `${P("iso-1")}/history/search?q=ledger&limit=100`,
      `${P("iso-1")}/history/search?q=alpha`,
      `${P(b.workerId)}/context`,
    ]) {
      const res = await asB("GET", path);
      expect(res.status, path).toBe(200);
      noLeak(res, path);
    }
    expect((await asB("GET", `${P("iso-1")}/history/search?q=alpha`)).body.items).toEqual([]);
    const memories = (await asB("GET", `${P("iso-1")}/memories`)).body.items.map((m: any) => m.id);
    expect(memories).toEqual([b.memoryId]);
    expect(memories).not.toContain(a.memoryId);
    // The worker's parent section is B's own parent, with B's summary.
    const worker = await asB("GET", `${P(b.workerId)}/context`);
    expect(worker.body.block).toMatch(/bravo/);
  });

  it("writes by B to its own process of the same id never touch A's", async () => {
    const before = await tenantA();
    expect((await asB("POST", `${P("iso-1")}/messages`, { role: "USER", content: "bravo extra" })).status).toBe(201);
    expect((await asB("POST", `${P("iso-1")}/turns`, { ...MODEL, message: { role: "USER", content: "bravo turn" }, prompt: { tokens: 99_000 } })).status).toBe(200);
    expect((await asB("POST", `${P("iso-1")}/compaction`, { ...MODEL, force: "EMERGENCY" })).status).toBe(200);
    expect((await asB("PUT", "/v1/settings", { keepRecent: 7 })).status).toBe(200);
    // B may create a process named like A's: it is B's, in B's namespace.
    const created = await asB("PUT", P("iso-a-only"), { projectId: "b-proj" });
    expect(created.status).toBe(200);
    expect(created.body.process.projectId).toBe("b-proj");
    const worker = await asB("PUT", P("b-worker-of-a"), { projectId: "proj", parentProcessId: "iso-a-only" });
    expect(worker.status).toBe(200);
    const ctxB = await asB("GET", `${P("b-worker-of-a")}/context`);
    noLeak(ctxB, "a B worker whose parent id names A's process");
    await ctx.service.bus.drain();
    expect(await tenantA()).toBe(before);
    expect((await ctx.api("GET", P("iso-a-only"))).body.process.projectId).toBe("proj");
    expect((await ctx.api("GET", "/v1/settings")).body.overrides).toEqual({ keepRecent: 8 });
  });
});

describe("events that name the wrong tenant", () => {
  it("PlanCompleted and InboxItemAnswered for tenant B with A's ids change nothing", async () => {
    const before = await tenantA();
    const inboxB = (await asB("GET", "/v1/inbox")).body.items.length;
    await ctx.service.bus.deliver({
      source: "vancetope.plan",
      detailType: "PlanCompleted",
      detail: { tenantId: "tenant-b", processId: "iso-a-only-missing", planId: "p", topicLabel: "t", completedAt: new Date().toISOString() },
    });
    await ctx.service.bus.deliver({
      source: "vancetope.inbox",
      detailType: "InboxItemAnswered",
      detail: { tenantId: "tenant-b", itemId: a.itemId, accepted: true },
    });
    await ctx.service.bus.drain();
    expect(await tenantA()).toBe(before);
    expect((await asB("GET", "/v1/inbox")).body.items).toHaveLength(inboxB);
  });
});

describe("keys", () => {
  it("a missing, unknown or malformed key is 401 on every route, and A's key never acts for B", async () => {
    const before = await tenantA();
    const routes: Array<[string, string, unknown?]> = [
      ["GET", "/v1/processes"],
      ["PUT", P("iso-1"), { projectId: "x" }],
      ["GET", P("iso-1")],
      ["POST", `${P("iso-1")}/messages`, { role: "USER", content: "x" }],
      ["GET", `${P("iso-1")}/messages`],
      ["POST", `${P("iso-1")}/compaction`, { ...MODEL, force: "HARD" }],
      ["POST", `${P("iso-1")}/compaction/range`, { from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z", topicLabel: "t" }],
      ["POST", `${P("iso-1")}/turns`, MODEL],
      ["GET", `${P("iso-1")}/context`],
      ["GET", `${P("iso-1")}/memories`],
      ["GET", `${P("iso-1")}/history/search?q=ledger`],
      ["GET", `${P("iso-1")}/memories/${a.memoryId}/sources`],
      ["GET", "/v1/inbox"],
      ["POST", `/v1/inbox/${a.itemId}/answer`, { accepted: true }],
      ["GET", "/v1/settings"],
      ["PUT", "/v1/settings", { keepRecent: 3 }],
    ];
    for (const key of [null, "nope", KEY_A.toUpperCase(), `${KEY_A}x`, `x${KEY_B}`]) {
      for (const [method, path, body] of routes) {
        const res = await ctx.api(method, path, { key, ...(body !== undefined ? { body } : {}) });
        expect(res.status, `${method} ${path} with ${JSON.stringify(key)}`).toBe(401);
        noLeak(res, path);
      }
    }
    expect(await tenantA()).toBe(before);
  });
});
