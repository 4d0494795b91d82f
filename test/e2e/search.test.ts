/** History search and recall over HTTP, and the per-container index cache against DynamoDB Local. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHistorySearch } from "../../core/services/history-search.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { createRecordingStore } from "../support/recording-store.js";
import { KEY_B, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];
const fake = createFakeSummarizer();

beforeAll(async () => {
  ctx = await startTestService({ overrides: { summarizer: async () => fake } });
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

const TOPICS = [
  "We should move the billing database to Postgres before the audit",
  "The Postgres migration needs a dump of the invoices table",
  "Lisbon trip: book the hotel near the river",
  "Remind me to renew the TLS certificates on Friday",
  "The invoices table has 4 million rows, migrating it takes an hour",
  "Let's also plan the Kubernetes upgrade",
  "Dinner reservations for Saturday are done",
  "The certificates expire on the 14th",
  "Postgres replication lag was 3 seconds during the test",
  "We agreed to freeze deploys during the migration window",
  "Grocery list: olives, bread, coffee",
  "The audit starts on Monday",
];

async function seed(processId: string) {
  expect((await api("PUT", `/v1/processes/${processId}`, { body: { projectId: "p" } })).status).toBe(200);
  const ids: string[] = [];
  const post = async (role: string, content: string, tags?: string[]) => {
    const r = await api("POST", `/v1/processes/${processId}/messages`, { body: { role, content, ...(tags ? { tags } : {}) } });
    expect(r.status).toBe(201);
    ids.push(r.body.message.id);
  };
  await post("USER", "Help me run the operations backlog for this quarter");
  for (const [i, t] of TOPICS.entries()) await post(i % 2 ? "ASSISTANT" : "USER", t, i === 5 ? ["MODE:plan"] : undefined);
  await post("USER", "What is left for this week?");
  return ids;
}

const search = (processId: string, query: string, key?: string) =>
  api("GET", `/v1/processes/${processId}/history/search?${query}`, key ? { key } : {});

describe("GET /v1/processes/{id}/history/search", () => {
  let memoryId: string;

  beforeAll(async () => {
    await seed("hs-1");
    // Searched once before the compaction: the index built now must still report archiving later.
    expect((await search("hs-1", "q=postgres")).body.items.length).toBeGreaterThan(0);
    const compaction = await api("POST", "/v1/processes/hs-1/compaction", { body: { model: { contextWindow: 128_000 }, force: "HARD" } });
    expect(compaction.body).toMatchObject({ compacted: true });
    memoryId = compaction.body.memoryId;
  });

  it("ranks archived and active messages by relevance, stemmed, with scores", async () => {
    const res = await search("hs-1", "q=postgres%20migrations&limit=5");
    expect(res.status).toBe(200);
    const items = res.body.items as Array<{ message: any; score: number }>;
    expect(items.length).toBeGreaterThanOrEqual(3);
    expect(items[0]!.message.content).toMatch(/Postgres migration/);
    expect(items.map((i) => i.score)).toEqual([...items.map((i) => i.score)].sort((a, b) => b - a));
    expect(items.some((i) => i.message.archivedInMemoryId === memoryId)).toBe(true);
    expect(items.every((i) => i.message.content.match(/postgres|migrat/i))).toBe(true);
  });

  it("filters by tag and honours the limit", async () => {
    const plan = await search("hs-1", "q=kubernetes%20upgrade&tag=MODE:plan");
    expect(plan.body.items.map((i: any) => i.message.tags)).toEqual([["MODE:plan"]]);
    expect((await search("hs-1", "q=postgres&tag=MODE:plan")).body.items).toEqual([]);
    expect((await search("hs-1", "q=the%20postgres%20invoices%20certificates&limit=2")).body.items).toHaveLength(2);
  });

  it("finds a message appended after the index was built", async () => {
    await search("hs-1", "q=postgres");
    await api("POST", "/v1/processes/hs-1/messages", { body: { role: "ASSISTANT", content: "The zeppelin hangar is booked" } });
    const res = await search("hs-1", "q=zeppelin");
    expect(res.body.items.map((i: any) => i.message.content)).toEqual(["The zeppelin hangar is booked"]);
  });

  it("answers 404 for an unknown process and for another tenant's, 400 without q", async () => {
    expect((await search("no-such", "q=x")).status).toBe(404);
    const other = await search("hs-1", "q=postgres", KEY_B);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("process.not_found");
    const bad = await search("hs-1", "limit=5");
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toContain("query.q");
    expect((await search("hs-1", "q=x&limit=101")).status).toBe(400);
  });
});

describe("GET /v1/processes/{id}/memories/{memoryId}/sources", () => {
  it("leads from a memory back to the originals it folded, and 404s otherwise", async () => {
    const ids = await seed("hs-2");
    const compaction = await api("POST", "/v1/processes/hs-2/compaction", { body: { model: { contextWindow: 128_000 }, force: "HARD" } });
    const memoryId = compaction.body.memoryId as string;
    const res = await api("GET", `/v1/processes/hs-2/memories/${memoryId}/sources`);
    expect(res.status).toBe(200);
    expect(res.body.memory.id).toBe(memoryId);
    expect(res.body.items.map((m: any) => m.id)).toEqual(res.body.memory.sourceRefs);
    expect(res.body.items).toHaveLength(compaction.body.compactedMessages);
    expect(res.body.items.every((m: any) => m.archivedInMemoryId === memoryId && ids.includes(m.id))).toBe(true);

    expect((await api("GET", "/v1/processes/hs-2/memories/mem_nope/sources")).body.error.code).toBe("memory.not_found");
    expect((await api("GET", `/v1/processes/hs-2/memories/${memoryId}/sources`, { key: KEY_B })).status).toBe(404);
  });
});

describe("index cache (per container)", () => {
  it("builds once, then only re-reads the tail; a compaction rebuilds; the LRU stays bounded", async () => {
    await seed("hs-c1");
    await seed("hs-c2");
    const recording = createRecordingStore(ctx.service.deps.store);
    const deps = { ...ctx.service.deps, store: recording.store };
    const history = createHistorySearch({ maxProcesses: 1, pageSize: 5, tailPageSize: 3 });
    const key = { tenantId: "tenant-a", processId: "hs-c1" };
    const listed = () => recording.callsFor("hs-c1").filter((c) => c.method === "listMessages").length;

    await history.search(deps, key, { q: "postgres", limit: 5 });
    expect(history.stats()).toMatchObject({ builds: 1, hits: 0 });
    const fullRead = listed();
    expect(fullRead).toBeGreaterThanOrEqual(3); // 14 messages in pages of 5

    recording.reset();
    const again = await history.search(deps, key, { q: "postgres", limit: 5 });
    expect(history.stats()).toMatchObject({ builds: 1, hits: 1 });
    expect(listed()).toBe(1); // one tail page of at most 3
    expect(again.items.length).toBeGreaterThan(0);

    await api("POST", "/v1/processes/hs-c1/messages", { body: { role: "USER", content: "zeppelin" } });
    expect((await history.search(deps, key, { q: "zeppelin", limit: 5 })).items).toHaveLength(1);
    expect(history.stats()).toMatchObject({ builds: 1, extended: 1 });

    await api("POST", "/v1/processes/hs-c1/compaction", { body: { model: { contextWindow: 128_000 }, force: "HARD" } });
    const after = await history.search(deps, key, { q: "postgres", limit: 10 });
    expect(history.stats().builds).toBe(2);
    expect(after.items.some((i) => i.message.archivedInMemoryId !== null)).toBe(true);

    await history.search(deps, { tenantId: "tenant-a", processId: "hs-c2" }, { q: "postgres", limit: 5 });
    expect(history.stats().evictions).toBe(1);
    await history.search(deps, key, { q: "postgres", limit: 5 });
    expect(history.stats().builds).toBe(4);
  });

  it("serves concurrent searches of one process from one build", async () => {
    await seed("hs-c3");
    const history = createHistorySearch();
    const key = { tenantId: "tenant-a", processId: "hs-c3" };
    const results = await Promise.all([1, 2, 3, 4].map(() => history.search(ctx.service.deps, key, { q: "audit", limit: 5 })));
    expect(new Set(results.map((r) => r.items.length))).toEqual(new Set([2]));
    expect(history.stats()).toMatchObject({ builds: 1, hits: 3 });
  });
});
