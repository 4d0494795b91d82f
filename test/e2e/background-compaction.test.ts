/**
 * The background mode over HTTP on the local runner (its worker runs in process, started by the
 * bus): a turn queues a fold, GET .../memories?includePrepared=true shows it, a manual compaction
 * over its budget answers 202 and the worker commits it.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createDynamoStore } from "../../core/adapters/dynamodb/store.js";
import type { SummarizeInput } from "../../core/ports/summarizer.js";
import { awaitedStore } from "../support/awaited-store.js";
import { dynamoEndpoint } from "../support/dynamo.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { startTestService } from "../support/service.js";

const fake = createFakeSummarizer();
let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];
let watched: ReturnType<typeof awaitedStore>;

beforeAll(async () => {
  const tableName = `bg-${randomUUID().slice(0, 8)}`;
  watched = awaitedStore(createDynamoStore({ client: createDocumentClient({ endpoint: dynamoEndpoint() }), tableName }));
  ctx = await startTestService({
    tableName,
    overrides: { summarizer: async () => fake, store: watched.store },
    env: { COMPACTION_MANUAL_BUDGET_MS: "300" },
  });
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

async function chat(id: string, n = 16) {
  expect((await api("PUT", `/v1/processes/${id}`, { body: { projectId: "p" } })).status).toBe(200);
  await api("POST", `/v1/processes/${id}/messages`, { body: { role: "USER", content: "Move the archive to cold storage." } });
  for (let i = 0; i < n; i++) {
    await api("POST", `/v1/processes/${id}/messages`, { body: { role: i % 2 ? "USER" : "ASSISTANT", content: `box ${i} goes to shelf ${i % 3}.` } });
  }
}

const memories = async (id: string, query = "") => (await api("GET", `/v1/processes/${id}/memories${query}`)).body.items as any[];

describe("background compaction over HTTP", () => {
  it("a turn queues; the worker prepares; memories?includePrepared=true shows it; at HARD the worker commits it", async () => {
    await chat("bg-http");
    fake.calls.length = 0;
    const queued = await api("POST", "/v1/processes/bg-http/turns", { body: { model: { contextWindow: 10_000 }, prompt: { tokens: 7_500 } } });
    expect(queued.status).toBe(200);
    expect(queued.body.compaction).toMatchObject({ compacted: false, reason: "compaction_queued" });
    await ctx.service.bus.drain();
    expect(await memories("bg-http")).toEqual([]);
    const listed = await memories("bg-http", "?includePrepared=true");
    expect(listed).toEqual([expect.objectContaining({ id: queued.body.compaction.memoryId, status: "PREPARED" })]);
    const calls = fake.calls.length;

    // Below EMERGENCY the turn does not pay for the commit: it asks the worker (docs/compaction.md,
    // "Who commits a prepared fold").
    const hard = await api("POST", "/v1/processes/bg-http/turns", { body: { model: { contextWindow: 10_000 }, prompt: { tokens: 9_000 } } });
    expect(hard.body.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued", memoryId: queued.body.compaction.memoryId });
    await ctx.service.bus.drain();
    expect(fake.calls.length).toBe(calls);
    expect(await memories("bg-http")).toEqual([expect.objectContaining({ id: queued.body.compaction.memoryId, status: "OK", metadata: expect.objectContaining({ producedBy: "worker" }) })]);
    const events = (await api("GET", "/local/events")).body.items as any[];
    const mine = events.filter((e) => e.detail.processId === "bg-http").map((e) => [e.detailType, e.detail.producedBy ?? e.detail.job]);
    expect(mine).toEqual([
      ["CompactionRequested", "prepare"],
      ["CompactionRequested", "commit"],
      ["MemoryCompacted", "worker"],
    ]);
  });

  it("POST .../compaction answers 202 compaction_queued past its budget, and the worker finishes it", async () => {
    await chat("bg-manual");
    // The in-request fold summarizes until the test lets it go, so the request runs out of budget.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    fake.script.push(async (input: SummarizeInput) => {
      await released;
      return createFakeSummarizer().summarize(input);
    });
    const res = await api("POST", "/v1/processes/bg-manual/compaction", { body: { model: { contextWindow: 10_000 }, force: "HARD" } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued" });
    await ctx.service.bus.drain();
    // The abandoned in-request fold finishes: its commit is refused and it lets its lease go.
    const mark = watched.mark();
    release();
    const late = await watched.finished("commitCompaction", () => true, mark);
    expect(late.result).toMatchObject({ ok: false });
    const owner = (late.args[1] as { leaseOwner: string }).leaseOwner;
    await watched.finished("releaseLease", (c) => c.args[1] === owner, mark);
    const ok = await memories("bg-manual");
    expect(ok).toEqual([expect.objectContaining({ id: res.body.memoryId, status: "OK", metadata: expect.objectContaining({ producedBy: "worker" }) })]);
  });

  it("a discarded fold is listed with its reason by memories?includeFailed=true", async () => {
    await chat("bg-discard");
    const queued = await api("POST", "/v1/processes/bg-discard/turns", { body: { model: { contextWindow: 10_000 }, prompt: { tokens: 7_500 } } });
    const foldId = queued.body.compaction.memoryId;
    await ctx.service.bus.drain();
    const [prepared] = await memories("bg-discard", "?includePrepared=true");
    expect(prepared).toMatchObject({ id: foldId, status: "PREPARED" });
    // A message the fold covers is pinned: at HARD the worker discards the fold instead of committing it.
    const pin = await api("PATCH", `/v1/processes/bg-discard/messages/${prepared.sourceRefs[2]}`, { body: { strength: "pinned" } });
    expect(pin.status).toBe(200);
    const hard = await api("POST", "/v1/processes/bg-discard/turns", { body: { model: { contextWindow: 10_000 }, prompt: { tokens: 9_000 } } });
    expect(hard.body.compaction).toMatchObject({ compacted: false, reason: "compaction_queued" });
    await ctx.service.bus.drain();

    const listed = await memories("bg-discard", "?includeFailed=true");
    expect(listed.find((m) => m.id === foldId)).toMatchObject({ status: "DISCARDED", metadata: { discardReason: expect.stringContaining("pinned") } });
    expect((await memories("bg-discard")).map((m) => m.id)).not.toContain(foldId);
    await ctx.service.bus.drain();
  });

  it("rejects a bad includePrepared flag with a 400 naming it", async () => {
    await chat("bg-flag", 2);
    const res = await api("GET", "/v1/processes/bg-flag/memories?includePrepared=maybe");
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain("includePrepared");
  });
});
