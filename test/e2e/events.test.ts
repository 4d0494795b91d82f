/** Plan completion -> inbox offer -> answer -> range compaction, through events and HTTP. */
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import { createRecordingMetrics } from "../../core/adapters/metrics/emf-metrics.js";
import { dynamoEndpoint } from "../support/dynamo.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { createFaultyStore } from "../../tools/faulty-store.js";
import { LOCAL_EVENTBRIDGE_MAX_BYTES } from "../../local/local-routes.js";
import { KEY_A, KEY_B, startTestService } from "../support/service.js";
import { steppingClock } from "../support/stepping-clock.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];
const fake = createFakeSummarizer();
// Every reading is a distinct millisecond, so createdAt comparisons (and the boundaries the tests
// take between two writes) are unambiguous without waiting.
const clock = steppingClock();

beforeAll(async () => {
  ctx = await startTestService({ overrides: { summarizer: async () => fake } });
  ctx.service.deps.clock = clock;
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

async function say(processId: string, role: string, content: string, tags?: string[]) {
  const r = await api("POST", `/v1/processes/${processId}/messages`, { body: { role, content, ...(tags ? { tags } : {}) } });
  expect(r.status).toBe(201);
  return r.body.message;
}

/** A process with `usersBefore` USER turns, then a plan (marker + work), completed now. */
async function planSession(processId: string, usersBefore: number) {
  await api("PUT", `/v1/processes/${processId}`, { body: { projectId: "p" } });
  for (let i = 0; i < usersBefore; i++) {
    await say(processId, "USER", `earlier topic question ${i}`);
    await say(processId, "ASSISTANT", `earlier topic answer ${i}`);
  }
  const marker = await say(processId, "USER", "Let's plan the database migration", ["MODE:plan"]);
  const work = [
    await say(processId, "ASSISTANT", "Step 1: dump the schema"),
    await say(processId, "USER", "done, next?"),
    await say(processId, "ASSISTANT", "Step 2: run the migration on staging"),
  ];
  const completedAt = clock.now().toISOString();
  return { marker, work, completedAt };
}

async function planCompleted(processId: string, completedAt: string, planId = "plan-1", topicLabel = "db-migration") {
  await ctx.service.bus.deliver({
    source: "vancetope.plan",
    detailType: "PlanCompleted",
    detail: { tenantId: "tenant-a", processId, planId, topicLabel, completedAt },
  });
  await ctx.service.bus.drain();
}

const offersOf = async (processId: string) => (await api("GET", `/v1/inbox?processId=${processId}`)).body.items as any[];

describe("PlanCompleted -> offer", () => {
  it.each([
    [0, 0],
    [1, 0],
    [2, 1],
  ])("with %i USER turn(s) before the plan marker (plus none auto-pinned) makes %i offer(s)", async (users, offers) => {
    const id = `plan-users-${users}`;
    // The marker itself is a USER message; the earlier USER turns are what counts.
    const { completedAt } = await planSession(id, users);
    await planCompleted(id, completedAt);
    expect(await offersOf(id)).toHaveLength(offers);
  });

  it("makes one offer from duplicated deliveries, and publishes RecompactionOffered once", async () => {
    const { marker, completedAt } = await planSession("plan-dup", 2);
    await Promise.all([planCompleted("plan-dup", completedAt), planCompleted("plan-dup", completedAt)]);
    await planCompleted("plan-dup", completedAt);
    const offers = await offersOf("plan-dup");
    expect(offers).toHaveLength(1);
    expect(offers[0]).toMatchObject({
      type: "APPROVAL",
      tags: ["RECOMPACTION_OFFER"],
      status: "OPEN",
      payload: { from: marker.createdAt, to: completedAt, topicLabel: "db-migration" },
    });
    const events = (await api("GET", "/local/events")).body.items as any[];
    const offered = events.filter((e) => e.detailType === "RecompactionOffered" && e.detail.processId === "plan-dup");
    expect(offered).toHaveLength(1);
    expect(offered[0]).toMatchObject({ source: "vancetope.memory", detail: { itemId: offers[0].id, tenantId: "tenant-a" } });
  });

  it("ignores a process that does not exist or belongs to another tenant", async () => {
    const { completedAt } = await planSession("plan-other", 2);
    await ctx.service.bus.deliver({
      source: "vancetope.plan",
      detailType: "PlanCompleted",
      detail: { tenantId: "tenant-b", processId: "plan-other", planId: "x", topicLabel: "t", completedAt },
    });
    await ctx.service.bus.drain();
    expect((await api("GET", "/v1/inbox", { key: "key-b" })).body.items).toEqual([]);
  });
});

describe("answering the offer", () => {
  it("declines: the item is DECLINED, nothing is compacted", async () => {
    const { completedAt } = await planSession("ans-decline", 2);
    await planCompleted("ans-decline", completedAt);
    const [offer] = await offersOf("ans-decline");
    const r = await api("POST", `/v1/inbox/${offer.id}/answer`, { body: { accepted: false } });
    expect(r.body.item.status).toBe("DECLINED");
    await ctx.service.bus.drain();
    expect((await api("GET", "/v1/processes/ans-decline/memories")).body.items).toEqual([]);
    expect((await api("GET", "/v1/processes/ans-decline/messages?view=active")).body.items).toHaveLength(8);
  });

  it("accepts: folds the range into a chained memory with a marker at the end of the range", async () => {
    const id = "ans-accept";
    const { marker, work, completedAt } = await planSession(id, 2);
    const after = await say(id, "USER", "Now, something else entirely");
    // A prior summary exists: the range memory must chain it, so nothing leaves the replay.
    const sliding = await api("POST", `/v1/processes/${id}/compaction`, { body: { model: { contextWindow: 100_000 }, force: "EMERGENCY" } });
    expect(sliding.body.compacted).toBe(false); // 10 messages <= keepRecent: nothing to fold yet
    await planCompleted(id, completedAt);
    const [offer] = await offersOf(id);
    const [a, b] = await Promise.all([
      api("POST", `/v1/inbox/${offer.id}/answer`, { body: { accepted: true } }),
      api("POST", `/v1/inbox/${offer.id}/answer`, { body: { accepted: true } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect([a, b].find((r) => r.status === 409)!.body.error.code).toBe("inbox.already_answered");
    await ctx.service.bus.drain();

    const memories = (await api("GET", `/v1/processes/${id}/memories`)).body.items as any[];
    expect(memories).toHaveLength(1);
    const memory = memories[0];
    expect(memory.metadata).toMatchObject({
      recompaction: true,
      topicLabel: "db-migration",
      rangeFromAt: marker.createdAt,
      rangeToAt: completedAt,
      compactedMessages: 4,
    });
    expect(memory.sourceRefs).toEqual([marker.id, ...work.map((m: any) => m.id)]);

    const all = (await api("GET", `/v1/processes/${id}/messages?limit=1000`)).body.items as any[];
    const ids = all.map((m) => m.id);
    const markerMsg = all.find((m) => m.tags.includes("RECOMPACTION:db-migration"));
    expect(markerMsg.role).toBe("SYSTEM");
    // Ordered at the end of the range: right after the last folded message, before the later one.
    expect(ids.indexOf(markerMsg.id)).toBe(ids.indexOf(work[2].id) + 1);
    expect(ids.indexOf(markerMsg.id)).toBeLessThan(ids.indexOf(after.id));
    for (const m of all) {
      if (memory.sourceRefs.includes(m.id)) expect(m.archivedInMemoryId).toBe(memory.id);
      else expect(m.archivedInMemoryId).toBeNull();
    }
    const events = (await api("GET", "/local/events")).body.items as any[];
    expect(events.filter((e) => e.detailType === "MemoryCompacted" && e.detail.processId === id)).toEqual([
      expect.objectContaining({ detail: expect.objectContaining({ mode: "RANGE", memoryId: memory.id, compactedMessages: 4 }) }),
    ]);
    expect(events.some((e) => e.detailType === "InboxItemAnswered" && e.detail.itemId === offer.id)).toBe(true);

    // A duplicated InboxItemAnswered delivery changes nothing.
    const redeliver = async () => {
      await ctx.service.bus.deliver({ source: "vancetope.inbox", detailType: "InboxItemAnswered", detail: { tenantId: "tenant-a", itemId: offer.id, accepted: true } });
      await ctx.service.bus.drain();
    };
    await redeliver();
    expect((await api("GET", `/v1/processes/${id}/memories`)).body.items).toHaveLength(1);
    expect((await offersOf(id))[0]).toMatchObject({ status: "ACCEPTED", rangeJobId: memory.id });

    // The user undoes the range fold; a redelivery after that does not fold the range again.
    expect((await api("POST", `/v1/processes/${id}/memories/${memory.id}/revert`)).status).toBe(200);
    await redeliver();
    expect((await api("GET", `/v1/processes/${id}/memories?includeReverted=true&includePrepared=true`)).body.items).toEqual([
      expect.objectContaining({ id: memory.id, status: "REVERTED" }),
    ]);
    const active = (await api("GET", `/v1/processes/${id}/messages?view=active`)).body.items.map((m: any) => m.id);
    for (const ref of memory.sourceRefs) expect(active).toContain(ref);
  });

  it("chains the prior active summary and supersedes it", async () => {
    const id = "ans-chain";
    await api("PUT", `/v1/processes/${id}`, { body: { projectId: "p" } });
    for (let i = 0; i < 14; i++) await say(id, i % 2 ? "ASSISTANT" : "USER", `old topic turn ${i}`);
    const first = await api("POST", `/v1/processes/${id}/compaction`, { body: { model: { contextWindow: 100_000 }, force: "HARD" } });
    expect(first.body.compacted).toBe(true);
    const from = clock.now().toISOString();
    await say(id, "USER", "plan: write the report", ["MODE:plan"]);
    await say(id, "ASSISTANT", "report written");
    const to = clock.now().toISOString();
    await say(id, "USER", "next topic, please"); // the range never folds the newest USER turn
    fake.calls.length = 0;
    const range = await api("POST", `/v1/processes/${id}/compaction/range`, { body: { from, to, topicLabel: "report" } });
    expect(range.status).toBe(200);
    expect(range.body.compactedMessages).toBe(2);
    expect(fake.calls[0]?.priorSummary).toContain("folded"); // the prior summary went in
    const memories = (await api("GET", `/v1/processes/${id}/memories`)).body.items as any[];
    expect(memories.map((m) => m.id)).toEqual([range.body.memoryId, first.body.memoryId]);
    expect(memories[1].supersededByMemoryId).toBe(range.body.memoryId);
    expect(memories[0].metadata.supersededMemoryId).toBe(first.body.memoryId);
    const context = await api("GET", `/v1/processes/${id}/context`);
    expect(context.body.block).toContain(memories[0].content);
    expect(context.body.block).not.toContain(`${memories[1].content}\n`);
  });

  it("answers 404 for an unknown or another tenant's item", async () => {
    const { completedAt } = await planSession("ans-404", 2);
    await planCompleted("ans-404", completedAt);
    const [offer] = await offersOf("ans-404");
    expect((await api("POST", `/v1/inbox/${offer.id}/answer`, { key: "key-b", body: { accepted: true } })).status).toBe(404);
    expect((await api("POST", "/v1/inbox/inb_nothing/answer", { body: { accepted: true } })).status).toBe(404);
    expect((await api("POST", `/v1/inbox/${offer.id}/answer`, { body: { accepted: "yes" } })).status).toBe(400);
  });
});

describe("local PutEvents endpoint", () => {
  /** The real EventBridge client, signing with the API key as its access key id. */
  const eventBridge = (key: string) =>
    new EventBridgeClient({
      endpoint: `${ctx.service.url}/local/eventbridge`,
      region: "us-east-1",
      credentials: { accessKeyId: key, secretAccessKey: "unused" },
    });
  const planEntry = (processId: string, completedAt: string, planId: string, topicLabel: string) => ({
    Source: "vancetope.plan",
    DetailType: "PlanCompleted",
    Detail: JSON.stringify({ tenantId: "tenant-a", processId, planId, topicLabel, completedAt }),
  });

  it("accepts PutEvents from the real EventBridge client and routes PlanCompleted to the handler", async () => {
    const { completedAt } = await planSession("put-events", 2);
    const out = await eventBridge(KEY_A).send(new PutEventsCommand({ Entries: [planEntry("put-events", completedAt, "p9", "via-sdk")] }));
    expect(out.FailedEntryCount).toBe(0);
    expect(out.Entries?.[0]?.EventId).toBeTruthy();
    await ctx.service.bus.drain();
    expect((await offersOf("put-events"))[0]?.payload.topicLabel).toBe("via-sdk");
  });

  it("acts only for the tenant of the key that put the event", async () => {
    const { completedAt } = await planSession("put-events-b", 2);
    // Accepted, as EventBridge accepts it; the handler drops it: key B may not act for tenant A.
    const out = await eventBridge(KEY_B).send(new PutEventsCommand({ Entries: [planEntry("put-events-b", completedAt, "p1", "forged")] }));
    expect(out.FailedEntryCount).toBe(0);
    await ctx.service.bus.drain();
    expect(await offersOf("put-events-b")).toEqual([]);
    const bearer = await fetch(`${ctx.service.url}/local/eventbridge`, {
      method: "POST",
      headers: { "x-amz-target": "AWSEvents.PutEvents", authorization: `Bearer ${KEY_B}` },
      body: JSON.stringify({ Entries: [planEntry("put-events-b", completedAt, "p2", "forged")] }),
    });
    expect(bearer.status).toBe(200);
    await ctx.service.bus.drain();
    expect(await offersOf("put-events-b")).toEqual([]);
    const metrics = ctx.service.deps.metrics as ReturnType<typeof createRecordingMetrics>;
    expect(metrics.droppedEvents.filter((d) => d.reason === "publisher_not_allowed")).toHaveLength(2);
  });

  it("refuses a request without a known key and delivers nothing", async () => {
    const { completedAt } = await planSession("put-events-nokey", 2);
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer not-a-key" },
      { authorization: "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/events/aws4_request" },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${ctx.service.url}/local/eventbridge`, {
        method: "POST",
        headers: { "x-amz-target": "AWSEvents.PutEvents", ...headers },
        body: JSON.stringify({ Entries: [planEntry("put-events-nokey", completedAt, "p3", "anon")] }),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ __type: "UnrecognizedClientException" });
    }
    await expect(eventBridge("local").send(new PutEventsCommand({ Entries: [planEntry("put-events-nokey", completedAt, "p4", "anon")] }))).rejects.toMatchObject({
      name: "UnrecognizedClientException",
    });
    await ctx.service.bus.drain();
    expect(await offersOf("put-events-nokey")).toEqual([]);
  });

  it(`reads a body of at most ${LOCAL_EVENTBRIDGE_MAX_BYTES} bytes and answers 413 one byte past it, before parsing`, async () => {
    const sized = (bytes: number) => {
      const open = '{"Entries":[],"pad":"';
      return `${open}${"x".repeat(bytes - open.length - 2)}"}`;
    };
    const put = (body: string) =>
      fetch(`${ctx.service.url}/local/eventbridge`, { method: "POST", headers: { "x-amz-target": "AWSEvents.PutEvents", authorization: `Bearer ${KEY_A}` }, body });
    const at = await put(sized(LOCAL_EVENTBRIDGE_MAX_BYTES));
    expect(at.status).toBe(400);
    expect(await at.json()).toMatchObject({ __type: "ValidationException" });
    expect((await put(sized(LOCAL_EVENTBRIDGE_MAX_BYTES + 1))).status).toBe(413);
  });

  it("reports malformed entries as failed entries", async () => {
    const res = await fetch(`${ctx.service.url}/local/eventbridge`, {
      method: "POST",
      headers: { "x-amz-target": "AWSEvents.PutEvents", "content-type": "application/x-amz-json-1.1", authorization: `Bearer ${KEY_A}` },
      body: JSON.stringify({ Entries: [{ Source: "vancetope.plan", DetailType: "PlanCompleted", Detail: "{nope" }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ FailedEntryCount: 1, Entries: [{ ErrorCode: "MalformedDetail" }] });
  });
});

describe("local event list", () => {
  it("needs a key and lists only the events of the key's tenant", async () => {
    expect((await api("GET", "/local/events", { key: null })).status).toBe(401);
    expect((await api("GET", "/local/events", { key: "not-a-key" })).status).toBe(401);
    await ctx.service.bus.publish({
      source: "vancetope.memory",
      detailType: "MemoryReverted",
      detail: { tenantId: "tenant-b", processId: "listed-b", memoryId: "mem_x", restoredMessages: 1, activeSummaryId: null },
    });
    const forB = (await api("GET", "/local/events", { key: KEY_B })).body.items as any[];
    const forA = (await api("GET", "/local/events")).body.items as any[];
    expect(forA.length).toBeGreaterThan(0);
    expect(forB.map((e) => e.detail.processId)).toEqual(["listed-b"]);
    expect(forA.every((e) => e.detail.tenantId === "tenant-a")).toBe(true);
    expect(forB.every((e) => e.detail.tenantId === "tenant-b")).toBe(true);
  });
});

describe("answer and event are never split", () => {
  it("publishes before storing: a crash in between leaves the offer OPEN and answerable, and nothing is lost", async () => {
    const tableName = `svc-crash-${Date.now()}`;
    const faulty = createFaultyStore(createDynamoStore({ client: createDocumentClient({ endpoint: dynamoEndpoint() }), tableName }));
    const crash = await startTestService({ tableName, overrides: { store: faulty, summarizer: async () => fake } });
    crash.service.deps.clock = clock;
    const api2 = crash.api;
    try {
      await api2("PUT", "/v1/processes/split-1", { body: { projectId: "p" } });
      const post2 = async (role: string, content: string, tags?: string[]) =>
        (await api2("POST", "/v1/processes/split-1/messages", { body: { role, content, ...(tags ? { tags } : {}) } })).body.message;
      await post2("USER", "first topic");
      await post2("USER", "second topic");
      await post2("USER", "plan the launch", ["MODE:plan"]);
      await post2("ASSISTANT", "launch planned");
      const completedAt = clock.now().toISOString();
      await post2("USER", "what is next?"); // the range never folds the newest USER turn
      await crash.service.bus.deliver({
        source: "vancetope.plan",
        detailType: "PlanCompleted",
        detail: { tenantId: "tenant-a", processId: "split-1", planId: "plan-x", topicLabel: "launch", completedAt },
      });
      await crash.service.bus.drain();
      const [offer] = (await api2("GET", "/v1/inbox?processId=split-1")).body.items;

      // The container dies after publishing, before the answer is stored.
      faulty.inject({ method: "answerInboxItem", when: "before" });
      const failed = await api2("POST", `/v1/inbox/${offer.id}/answer`, { body: { accepted: true } });
      expect(failed.status).toBe(500);
      expect((await api2("GET", "/v1/inbox?processId=split-1")).body.items[0].status).toBe("OPEN");

      // The engine answers again: stored, published, and the range is folded.
      const again = await api2("POST", `/v1/inbox/${offer.id}/answer`, { body: { accepted: true } });
      expect(again.body.item.status).toBe("ACCEPTED");
      await crash.service.bus.drain();
      const memories = (await api2("GET", "/v1/processes/split-1/memories")).body.items;
      expect(memories).toHaveLength(1);
      expect(memories[0].metadata).toMatchObject({ recompaction: true, topicLabel: "launch" });
    } finally {
      await crash.service.stop();
    }
  });
});
