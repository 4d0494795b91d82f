/**
 * Per-message and per-summary controls of api.md over HTTP against the local runner: reading one
 * message in full, changing its strength, and undoing a compaction.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Message } from "../../core/domain/model.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { KEY_A, KEY_B, startTestService, type ApiResponse } from "../support/service.js";

const fake = createFakeSummarizer();
let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];

beforeAll(async () => {
  ctx = await startTestService({ overrides: { summarizer: async () => fake } });
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

const MODEL = { contextWindow: 100_000 };

/** A process with a (pinned) task and `n` substantive messages, the last one USER; returns their ids. */
async function chat(id: string, n = 16): Promise<string[]> {
  expect((await api("PUT", `/v1/processes/${id}`, { body: { projectId: "proj" } })).status).toBe(200);
  const ids: string[] = [];
  const task = await api("POST", `/v1/processes/${id}/messages`, { body: { role: "USER", content: "Plan the warehouse move." } });
  ids.push(task.body.message.id);
  for (let i = 0; i < n; i++) {
    const role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
    const res = await api("POST", `/v1/processes/${id}/messages`, { body: { role, content: `item ${i}: shelf ${i} moves on day ${i % 3}.` } });
    expect(res.status).toBe(201);
    ids.push(res.body.message.id);
  }
  return ids;
}

function expectError(res: ApiResponse, status: number, code?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  if (code) expect(res.body.error.code).toBe(code);
}

describe("GET /v1/processes/{id}/messages/{messageId}", () => {
  it("answers one message in full, active or archived", async () => {
    const ids = await chat("g-one");
    const active = await api("GET", `/v1/processes/g-one/messages/${ids[0]}`);
    expect(active.status).toBe(200);
    expect(Message.parse(active.body.message)).toMatchObject({
      id: ids[0],
      processId: "g-one",
      role: "USER",
      content: "Plan the warehouse move.",
      tags: ["STRENGTH:pinned"],
      archivedInMemoryId: null,
    });
    const folded = await api("POST", "/v1/processes/g-one/compaction", { body: { model: MODEL, force: "HARD" } });
    expect(folded.body.compacted).toBe(true);
    const archived = await api("GET", `/v1/processes/g-one/messages/${ids[1]}`);
    expect(archived.status).toBe(200);
    expect(archived.body.message).toMatchObject({ id: ids[1], content: "item 0: shelf 0 moves on day 0.", archivedInMemoryId: folded.body.memoryId });
  });

  it("is 404 for an unknown message, an unknown process and another tenant's message", async () => {
    const ids = await chat("g-private", 2);
    expectError(await api("GET", "/v1/processes/g-private/messages/no-such-message"), 404, "message.not_found");
    expectError(await api("GET", `/v1/processes/no-such-process/messages/${ids[0]}`), 404, "process.not_found");
    expectError(await api("GET", `/v1/processes/g-private/messages/${ids[0]}`, { key: KEY_B }), 404);
    expect((await api("GET", `/v1/processes/g-private/messages/${ids[0]}`, { key: KEY_A })).status).toBe(200);
  });
});

describe("PATCH /v1/processes/{id}/messages/{messageId}", () => {
  const patch = (pid: string, mid: string, body: unknown, key = KEY_A) =>
    api("PATCH", `/v1/processes/${pid}/messages/${mid}`, { body: body as Record<string, unknown>, key });

  it("sets the one STRENGTH tag (200 with the message); null removes it; the active view and the next compaction see it", async () => {
    const ids = await chat("p-pin");
    const pinned = await patch("p-pin", ids[1]!, { strength: "pinned" });
    expect(pinned.status).toBe(200);
    expect(Message.parse(pinned.body.message)).toMatchObject({ id: ids[1], tags: ["STRENGTH:pinned"], archivedInMemoryId: null });
    expect((await patch("p-pin", ids[0]!, { strength: null })).body.message.tags).toEqual([]);
    expect((await patch("p-pin", ids[2]!, { strength: "weak" })).body.message.tags).toEqual(["STRENGTH:weak"]);
    const active = (await api("GET", "/v1/processes/p-pin/messages?view=active&limit=100")).body.items as any[];
    expect(active.find((m) => m.id === ids[1])!.tags).toEqual(["STRENGTH:pinned"]);

    const folded = await api("POST", "/v1/processes/p-pin/compaction", { body: { model: MODEL, force: "HARD" } });
    expect(folded.body.compacted).toBe(true);
    expect((await api("GET", `/v1/processes/p-pin/messages/${ids[1]}`)).body.message.archivedInMemoryId).toBeNull();
    // The first message lost its auto-pin and was folded like any other.
    expect((await api("GET", `/v1/processes/p-pin/messages/${ids[0]}`)).body.message.archivedInMemoryId).toBe(folded.body.memoryId);
  });

  it("is 409 message.archived for an archived message, 404 for unknown or another tenant's, 400 for a bad body", async () => {
    const ids = await chat("p-bad");
    const folded = await api("POST", "/v1/processes/p-bad/compaction", { body: { model: MODEL, force: "HARD" } });
    const archived = await patch("p-bad", ids[1]!, { strength: "pinned" });
    expectError(archived, 409, "message.archived");
    expect(archived.body.error.details).toEqual({ archivedInMemoryId: folded.body.memoryId });
    expectError(await patch("p-bad", "no-such-message", { strength: "pinned" }), 404, "message.not_found");
    expectError(await patch("no-such-process", ids[0]!, { strength: "pinned" }), 404, "process.not_found");
    expectError(await patch("p-bad", ids[0]!, { strength: "weak" }, KEY_B), 404);
    for (const body of [{ strength: "mega" }, {}, { strength: "pinned", tags: [] }]) {
      const res = await patch("p-bad", ids[0]!, body);
      expectError(res, 400, "request.invalid");
    }
    expect((await api("GET", `/v1/processes/p-bad/messages/${ids[0]}`)).body.message.tags).toEqual(["STRENGTH:pinned"]);
  });
});

describe("POST /v1/processes/{id}/memories/{memoryId}/revert", () => {
  const revert = (pid: string, mid: string, key = KEY_A) => api("POST", `/v1/processes/${pid}/memories/${mid}/revert`, { key });
  const compact = async (pid: string) => (await api("POST", `/v1/processes/${pid}/compaction`, { body: { model: MODEL, force: "HARD" } })).body;

  it("answers 200 { memory, restoredMessages, activeSummaryId }, restores the messages, and lists the memory only with includeReverted", async () => {
    const ids = await chat("r-ok");
    const first = await compact("r-ok");
    for (let i = 0; i < 12; i++) await api("POST", "/v1/processes/r-ok/messages", { body: { role: i % 2 ? "USER" : "ASSISTANT", content: `more ${i}` } });
    const second = await compact("r-ok");
    const res = await revert("r-ok", second.memoryId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      memory: expect.objectContaining({ id: second.memoryId, status: "REVERTED" }),
      restoredMessages: second.compactedMessages,
      activeSummaryId: first.memoryId,
    });
    const listed = async (q: string) => ((await api("GET", `/v1/processes/r-ok/memories${q}`)).body.items as any[]).map((m) => m.id);
    expect(await listed("")).toEqual([first.memoryId]);
    expect(await listed("?includeReverted=true")).toEqual([second.memoryId, first.memoryId]);
    const context = await api("GET", "/v1/processes/r-ok/context");
    expect(context.body.block).toContain(`folded ${ids[1]}`); // the first summary is replayed again
    const events = (await api("GET", "/local/events")).body.items as any[];
    expect(events.filter((e) => e.detailType === "MemoryReverted").map((e) => e.detail)).toContainEqual({
      tenantId: "tenant-a",
      processId: "r-ok",
      memoryId: second.memoryId,
      restoredMessages: second.compactedMessages,
      activeSummaryId: first.memoryId,
    });
  });

  it("is 409 for an older, a FAILED or an already reverted memory, 404 for unknown or another tenant's", async () => {
    await chat("r-bad");
    const first = await compact("r-bad");
    for (let i = 0; i < 12; i++) await api("POST", "/v1/processes/r-bad/messages", { body: { role: i % 2 ? "USER" : "ASSISTANT", content: `more ${i}` } });
    const second = await compact("r-bad");
    for (let i = 0; i < 8; i++) await api("POST", "/v1/processes/r-bad/messages", { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `late ${i}` } });
    fake.script.push({ ok: false, failure: { kind: "summarizer_error", retryable: false, message: "model overloaded" } });
    const failed = await compact("r-bad");
    expect(failed.memoryId).toEqual(expect.any(String));

    const older = await revert("r-bad", first.memoryId);
    expectError(older, 409, "memory.not_newest");
    expect(older.body.error.details).toEqual({ activeSummaryId: second.memoryId });
    expectError(await revert("r-bad", failed.memoryId), 409, "memory.failed");
    expectError(await revert("r-bad", "no-such-memory"), 404, "memory.not_found");
    expectError(await revert("no-such-process", second.memoryId), 404, "process.not_found");
    expectError(await revert("r-bad", second.memoryId, KEY_B), 404);
    expect((await revert("r-bad", second.memoryId)).status).toBe(200);
    expectError(await revert("r-bad", second.memoryId), 409, "memory.reverted");
    expect((await revert("r-bad", first.memoryId)).body.activeSummaryId).toBeNull();
  });
});
