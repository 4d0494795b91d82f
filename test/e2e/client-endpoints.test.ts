/**
 * Against the local runner over DynamoDB Local: roles in lower case as the model SDKs write them,
 * an idempotency key sent again with another body (409, nothing written), and the client methods
 * for a summary's detail and sources, the settings and the health check.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient, MemoryApiError, type MemoryClient } from "../../client/index.js";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let memory: MemoryClient;

beforeAll(async () => {
  ctx = await startTestService();
  memory = createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A, maxRetries: 0 });
});
afterAll(async () => ctx?.service.stop());

describe("roles in lower case", () => {
  it("are accepted on an append and a turn, and stored in upper case", async () => {
    await memory.upsertProcess("roles-1", { projectId: "roles" });
    const user = await memory.appendMessage("roles-1", { role: "user", content: "Plan a trip to Lisbon" });
    expect(user.message.role).toBe("USER");
    const turn = await memory.beginTurn("roles-1", { message: { role: "assistant", content: "Which month?" }, model: { name: "tiny", contextWindow: 4000 } });
    await memory.appendMessage("roles-1", { role: "system", content: "Be brief." });
    expect(turn.messages.map((m) => m.role)).toEqual(["USER", "ASSISTANT"]);
    expect((await memory.listMessages("roles-1")).items.map((m) => m.role)).toEqual(["USER", "ASSISTANT", "SYSTEM"]);
    // The first USER message is auto-pinned whatever case its role was sent in.
    expect(user.message.tags).toContain("STRENGTH:pinned");
  });

  it("a role in another case is still a 400 naming the field, and nothing is written", async () => {
    const res = await ctx.api("POST", "/v1/processes/roles-1/messages", { body: { role: "User", content: "x" } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(["body.role"]);
    expect((await memory.listMessages("roles-1")).items).toHaveLength(3);
  });
});

describe("an idempotency key", () => {
  beforeAll(async () => {
    await memory.upsertProcess("idem-1", { projectId: "idem" });
  });

  it("sent again with the same body answers the first message (200, created false)", async () => {
    const first = await memory.appendMessage("idem-1", { role: "USER", content: "Book the flight", idempotencyKey: "k-1" });
    // The same body, its role in lower case: the same message after parsing.
    const again = await memory.appendMessage("idem-1", { role: "user", content: "Book the flight", idempotencyKey: "k-1" });
    expect(first.created).toBe(true);
    expect(again).toEqual({ message: first.message, created: false });
  });

  it("sent again with another body is a 409 idempotency.key_reused, and nothing is written", async () => {
    const before = (await memory.listMessages("idem-1")).items;
    const res = await ctx.api("POST", "/v1/processes/idem-1/messages", { body: { role: "USER", content: "Book the hotel", idempotencyKey: "k-1" } });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: "idempotency.key_reused", details: { fields: ["idempotencyKey"] } });
    expect(res.body.error.message).toContain("k-1");
    expect((await memory.listMessages("idem-1")).items).toEqual(before);
    // Another role or other tags are another body too.
    for (const body of [{ role: "ASSISTANT", content: "Book the flight" }, { role: "USER", content: "Book the flight", tags: ["trip"] }]) {
      const out = await ctx.api("POST", "/v1/processes/idem-1/messages", { body: { ...body, idempotencyKey: "k-1" } });
      expect(out.status).toBe(409);
    }
  });

  it("reused in a turn's message with another body is the same 409, and the turn appends nothing", async () => {
    const error = await memory
      .beginTurn("idem-1", { message: { role: "USER", content: "Something else", idempotencyKey: "k-1" }, model: { name: "tiny", contextWindow: 4000 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemoryApiError);
    expect(error).toMatchObject({ status: 409, code: "idempotency.key_reused", retryable: false });
    expect((await memory.listMessages("idem-1")).items.map((m) => m.content)).toEqual(["Book the flight"]);
  });
});

describe("client methods for the remaining endpoints", () => {
  it("getMemory and getMemorySources answer a summary's detail and the originals it folded", async () => {
    await memory.upsertProcess("detail-1", { projectId: "detail" });
    const from = new Date().toISOString();
    const ids: string[] = [];
    for (const content of ["The budget is 2,400 EUR.", "We fly on 3 May from Porto.", "Noted."]) {
      ids.push((await memory.appendMessage("detail-1", { role: "user", content })).message.id);
    }
    const to = new Date().toISOString();
    const range = await memory.compactRange("detail-1", { from, to, topicLabel: "trip" });
    const memoryId = range.memoryId!;

    const detail = await memory.getMemory("detail-1", memoryId);
    expect(detail.memory.id).toBe(memoryId);
    expect(detail.provenance.flatMap((p) => p.messageIds).every((id) => ids.includes(id))).toBe(true);

    const sources = await memory.getMemorySources("detail-1", memoryId);
    expect(sources.memory.id).toBe(memoryId);
    expect(sources.items).toHaveLength(range.compactedMessages);
    expect(sources.items.length).toBeGreaterThan(0);
    expect(sources.items.every((m) => ids.includes(m.id) && m.archivedInMemoryId === memoryId)).toBe(true);
    expect(sources.expired).toEqual([]);
  });

  it("getSettings and updateSettings read and store a project's overrides", async () => {
    const stored = await memory.updateSettings({ keepRecent: 4 }, { projectId: "detail" });
    expect(stored.overrides).toEqual({ keepRecent: 4 });
    expect(stored.effective.keepRecent).toBe(4);
    const read = await memory.getSettings({ projectId: "detail" });
    expect(read).toEqual(stored);
    // The tenant's own settings are untouched.
    expect((await memory.getSettings()).overrides).toEqual({});
    const bad = await memory.updateSettings({ keepRecent: -1 }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, details: { fields: ["body.keepRecent"] } });
  });

  it("health and getOpenApiDocument need no key", async () => {
    const keyless = createMemoryClient({ baseUrl: ctx.service.url, apiKey: "not-a-key" });
    expect(await keyless.health()).toEqual({ ok: true });
    expect(await keyless.getOpenApiDocument()).toMatchObject({ openapi: expect.stringMatching(/^3\.1/) });
  });
});
