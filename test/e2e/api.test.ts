/** The process and message endpoints of api.md over HTTP against the local runner. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKeyStore, hashApiKey } from "../../core/adapters/dynamodb/api-keys.js";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { KEY_B, startTestService, type ApiResponse } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];

beforeAll(async () => {
  ctx = await startTestService();
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

const createProcess = (id: string, body: Record<string, unknown> = { projectId: "proj" }) =>
  api("PUT", `/v1/processes/${id}`, { body });
const post = (id: string, body: Record<string, unknown>) => api("POST", `/v1/processes/${id}/messages`, { body });
const history = async (id: string) => (await api("GET", `/v1/processes/${id}/messages?limit=1000`)).body.items as any[];

function expectError(res: ApiResponse, status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.body.error).toBeDefined();
  if (code) expect(res.body.error.code).toBe(code);
}

describe("health and auth", () => {
  it("answers /health without a key", async () => {
    expect(await api("GET", "/health", { key: null })).toEqual({ status: 200, body: { ok: true } });
  });

  it("rejects a missing or unknown key with 401", async () => {
    expectError(await api("GET", "/v1/processes", { key: null }), 401, "auth.invalid_key");
    expectError(await api("GET", "/v1/processes", { key: "nope" }), 401, "auth.invalid_key");
  });

  it("accepts keys created in the table (npm run keys) until they are revoked", async () => {
    const keys = createApiKeyStore({ client: createDocumentClient({ endpoint: ctx.service.dynamoEndpoint }), tableName: ctx.service.tableName });
    const { key } = await keys.create({ tenantId: "tenant-c" });
    await api("PUT", "/v1/processes/table-key-proc", { key, body: { projectId: "p" } });
    expect((await api("GET", "/v1/processes", { key })).body.items.map((p: any) => p.processId)).toEqual(["table-key-proc"]);
    await keys.revoke(hashApiKey(key));
    expectError(await api("GET", "/v1/processes", { key }), 401);
  });

  it("hides another tenant's process (404 on read, write and list)", async () => {
    await createProcess("secret-1");
    await post("secret-1", { role: "USER", content: "tenant A's data" });
    expectError(await api("GET", "/v1/processes/secret-1", { key: KEY_B }), 404, "process.not_found");
    expectError(await api("GET", "/v1/processes/secret-1/messages", { key: KEY_B }), 404);
    expectError(await api("GET", "/v1/processes/secret-1/messages?view=active", { key: KEY_B }), 404);
    expectError(await api("POST", "/v1/processes/secret-1/messages", { key: KEY_B, body: { role: "USER", content: "x" } }), 404);
    const list = await api("GET", "/v1/processes", { key: KEY_B });
    expect(list.body.items.map((p: any) => p.processId)).not.toContain("secret-1");
    expect(await history("secret-1")).toHaveLength(1);
  });
});

describe("processes", () => {
  it("upserts, reads and lists newest first", async () => {
    const put = await createProcess("proc-a", { projectId: "p1", name: "Frankie", allowsCrossProjectSpawn: true });
    expect(put.status).toBe(200);
    expect(put.body.process).toMatchObject({ processId: "proc-a", projectId: "p1", name: "Frankie", allowsCrossProjectSpawn: true });
    expect((await api("GET", "/v1/processes/proc-a")).body.process.name).toBe("Frankie");
    await createProcess("proc-b", { projectId: "p2" });
    const list = await api("GET", "/v1/processes?projectId=p1");
    expect(list.body.items.map((p: any) => p.processId)).toEqual(["proc-a"]);
    expectError(await api("GET", "/v1/processes/unknown-proc"), 404, "process.not_found");
  });

  it("rejects bad input with 400 naming the fields", async () => {
    const res = await createProcess("proc-bad", { projectId: 42, bogus: true });
    expectError(res, 400, "request.invalid");
    expect(res.body.error.details.fields).toEqual(expect.arrayContaining(["body.projectId"]));
    expectError(await api("PUT", "/v1/processes/bad%23id", { body: { projectId: "p" } }), 400);
    expectError(await api("GET", "/v1/processes?limit=0"), 400);
    expectError(await api("GET", "/v1/processes?cursor=garbage"), 400, "cursor.invalid");
    expectError(await api("GET", "/v1/processes/proc-bad"), 404);
  });
});

describe("messages", () => {
  it("appends and lists oldest first, with the active view", async () => {
    await createProcess("chat-1");
    const a = await post("chat-1", { role: "USER", content: "Build me a parser" });
    expect(a.status).toBe(201);
    expect(a.body.message).toMatchObject({ role: "USER", archivedInMemoryId: null, processId: "chat-1" });
    await post("chat-1", { role: "ASSISTANT", content: "On it", toolCalls: [{ id: "c1", name: "grep", arguments: "{}" }] });
    await post("chat-1", { role: "TOOL", content: "3 matches", toolCallId: "c1" });
    const all = await history("chat-1");
    expect(all.map((m) => m.role)).toEqual(["USER", "ASSISTANT", "TOOL"]);
    const active = await api("GET", "/v1/processes/chat-1/messages?view=active&limit=2");
    expect(active.body.items).toHaveLength(2);
    const rest = await api("GET", `/v1/processes/chat-1/messages?view=active&cursor=${active.body.nextCursor}`);
    expect([...active.body.items, ...rest.body.items].map((m: any) => m.id)).toEqual(all.map((m) => m.id));
  });

  it("returns the first message when an idempotency key repeats", async () => {
    await createProcess("chat-idem");
    const body = { role: "USER", content: "hello", idempotencyKey: "turn-1" };
    const results = await Promise.all([post("chat-idem", body), post("chat-idem", body), post("chat-idem", body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(results.map((r) => r.body.message.id)).size).toBe(1);
    expect(await history("chat-idem")).toHaveLength(1);
  });

  it("rejects bad messages without writing anything", async () => {
    await createProcess("chat-bad");
    expectError(await post("chat-bad", { role: "BOT", content: "x" }), 400);
    expectError(await post("chat-bad", { role: "USER" }), 400);
    expectError(await post("chat-bad", { role: "USER", content: "x", tags: ["STRENGTH:mega"] }), 400);
    expectError(await post("chat-bad", { role: "USER", content: "x", toolCalls: [{ id: "1", name: "n", arguments: "" }] }), 400);
    expectError(await api("POST", "/v1/processes/chat-bad/messages", { rawBody: "{not json" }), 400, "request.malformed_json");
    expectError(await post("chat-bad", { role: "USER", content: "é".repeat(140_000) }), 413, "message.too_large");
    // Under the body limit (5 MiB) but past the message limit; past the body limit, a 413 before parsing.
    expectError(await api("POST", "/v1/processes/chat-bad/messages", { rawBody: JSON.stringify({ role: "USER", content: "x".repeat(500_000) }) }), 413, "message.too_large");
    expectError(await api("POST", "/v1/processes/chat-bad/messages", { rawBody: JSON.stringify({ role: "USER", content: "x".repeat(6_000_000) }) }), 413, "request.too_large");
    expectError(await post("no-such-process", { role: "USER", content: "x" }), 404);
    const lone = await api("POST", "/v1/processes/chat-bad/messages", { rawBody: '{"role":"USER","content":"half a pair \\ud83d here"}' });
    expectError(lone, 400, "request.invalid");
    expect(lone.body.error.details.fields).toEqual(["body.content"]);
    expect((await post("chat-bad", { role: "USER", content: "a whole pair 😀 is fine" })).status).toBe(201);
    expect((await history("chat-bad")).map((m) => m.content)).toEqual(["a whole pair 😀 is fine"]);
  });
});

describe("auto-pin of the first USER message (README, Auto-pin)", () => {
  const tagsOf = (r: ApiResponse) => r.body.message.tags as string[];

  it("pins the first USER message and no later one", async () => {
    await createProcess("pin-1");
    expect(tagsOf(await post("pin-1", { role: "USER", content: "the original task" }))).toContain("STRENGTH:pinned");
    expect(tagsOf(await post("pin-1", { role: "USER", content: "second" }))).not.toContain("STRENGTH:pinned");
  });

  it("leaves a caller's STRENGTH tag alone, STRENGTH:weak included", async () => {
    await createProcess("pin-2");
    expect(tagsOf(await post("pin-2", { role: "USER", content: "first", tags: ["STRENGTH:weak"] }))).toEqual(["STRENGTH:weak"]);
  });

  it("never pins ASSISTANT, SYSTEM or TOOL messages; those before the first USER message do not count", async () => {
    await createProcess("pin-3");
    expect(tagsOf(await post("pin-3", { role: "ASSISTANT", content: "hi" }))).toEqual([]);
    expect(tagsOf(await post("pin-3", { role: "TOOL", content: "t", toolCallId: "x" }))).toEqual([]);
    expect(tagsOf(await post("pin-3", { role: "USER", content: "task" }))).toEqual(["STRENGTH:pinned"]);
    await createProcess("pin-4");
    expect(tagsOf(await post("pin-4", { role: "SYSTEM", content: "You are helpful" }))).toEqual([]);
    expect(tagsOf(await post("pin-4", { role: "USER", content: "task", tags: ["MODE:chat"] }))).toEqual(["MODE:chat", "STRENGTH:pinned"]);
  });

  it("may pin both of two parallel first messages, and never loses one", async () => {
    await createProcess("pin-5");
    const [a, b] = await Promise.all([post("pin-5", { role: "USER", content: "a" }), post("pin-5", { role: "USER", content: "b" })]);
    const pinned = [a, b].filter((r) => tagsOf(r).includes("STRENGTH:pinned"));
    expect(pinned.length).toBeGreaterThanOrEqual(1);
    expect(await history("pin-5")).toHaveLength(2);
  });
});
