/**
 * The compaction endpoints of api.md over HTTP against the local runner: POST .../compaction,
 * GET .../memories with its filters, the published MemoryCompacted event, and tunables settings.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TurnWindowShape } from "../../core/domain/last-turn.js";
import { Memory } from "../../core/domain/model.js";
import { CompactionResult } from "../../core/domain/compaction-result.js";
import * as z from "../../core/domain/zod.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { KEY_A, KEY_B, startTestService, type ApiResponse } from "../support/service.js";

const KEY_C = "key-c";
const KEY_D = "key-d";
const fake = createFakeSummarizer();
let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];

beforeAll(async () => {
  ctx = await startTestService({
    overrides: { summarizer: async () => fake },
    // Turns summarize in the request here (the inline mode); the background mode has its own tests.
    env: { MEMORY_API_KEYS: `${KEY_A}=tenant-a,${KEY_B}=tenant-b,${KEY_C}=tenant-c,${KEY_D}=tenant-d`, COMPACTION_EXECUTION: "inline" },
  });
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());
beforeEach(() => {
  fake.calls.length = 0;
  fake.script.length = 0;
});

const MODEL = { contextWindow: 100_000 };
const compaction = (id: string, body: Record<string, unknown>, key = KEY_A) =>
  api("POST", `/v1/processes/${id}/compaction`, { body, key });
const memories = (id: string, query = "", key = KEY_A) => api("GET", `/v1/processes/${id}/memories${query}`, { key });

/** A process with a (pinned) task and `n` substantive messages, the last one USER. */
async function chat(id: string, n = 16, options: { key?: string; projectId?: string } = {}) {
  const key = options.key ?? KEY_A;
  expect((await api("PUT", `/v1/processes/${id}`, { key, body: { projectId: options.projectId ?? "proj" } })).status).toBe(200);
  await api("POST", `/v1/processes/${id}/messages`, { key, body: { role: "USER", content: "Plan the warehouse move." } });
  for (let i = 0; i < n; i++) {
    const role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
    const res = await api("POST", `/v1/processes/${id}/messages`, { key, body: { role, content: `item ${i}: shelf ${i} moves on day ${i % 3}.` } });
    expect(res.status).toBe(201);
  }
}

function expectError(res: ApiResponse, status: number, code?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  if (code) expect(res.body.error.code).toBe(code);
}

describe("POST /v1/processes/{id}/compaction", () => {
  it("folds past the hard threshold and answers a CompactionResult", async () => {
    await chat("c-hard");
    const res = await compaction("c-hard", { model: MODEL, prompt: { tokens: 90_000 } });
    expect(res.status).toBe(200);
    const result = z.strictObject({ ...CompactionResult.shape, window: TurnWindowShape }).parse(res.body);
    expect(result.window).toEqual({ tokens: MODEL.contextWindow, source: "request" });
    expect(result).toMatchObject({ mode: "HARD", compacted: true, tokensBefore: 90_000, memoryId: expect.any(String) });
    expect(result.compactedMessages).toBe(16 - 5);
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore);

    const active = await api("GET", "/v1/processes/c-hard/messages?view=active");
    expect(active.body.items).toHaveLength(1 + 5);
    const all = (await api("GET", "/v1/processes/c-hard/messages?limit=1000")).body.items as any[];
    expect(all).toHaveLength(17);
    expect(all.filter((m) => m.archivedInMemoryId === result.memoryId)).toHaveLength(11);
    const context = await api("GET", "/v1/processes/c-hard/context");
    expect(context.body.block).toContain("## Earlier Conversation (compacted)");
  });

  it("answers NONE below the soft threshold without calling the summarizer", async () => {
    await chat("c-none", 12);
    const res = await compaction("c-none", { model: MODEL, prompt: { chars: 100 } });
    expect(res.body).toEqual({ mode: "NONE", compacted: false, compactedMessages: 0, tokensBefore: 25, tokensAfter: 25, window: { tokens: MODEL.contextWindow, source: "request" } });
    expect(fake.calls).toEqual([]);
  });

  it("passes force's instructions to the summarizer", async () => {
    await chat("c-force");
    const res = await compaction("c-force", { model: MODEL, force: "EMERGENCY", instructions: "Keep every shelf number." });
    expect(res.body).toMatchObject({ mode: "EMERGENCY", compacted: true, compactedMessages: 16 - 3 });
    expect(fake.calls.map((c) => c.instructions)).toEqual(["Keep every shelf number."]);
  });

  it("knows gpt-4o's window and answers 400 model.context_window_required for an unknown model", async () => {
    await chat("c-model");
    const known = await compaction("c-model", { model: { name: "gpt-4o" }, prompt: { tokens: 110_000 } });
    expect(known.body).toMatchObject({ mode: "HARD", compacted: true });

    const unknown = await compaction("c-model", { model: { name: "house-llm-7b" }, prompt: { tokens: 110_000 } });
    expectError(unknown, 400, "model.context_window_required");
    expect(unknown.body.error.details.fields).toEqual(["body.model.contextWindow"]);
    expectError(await compaction("c-model", { model: {} }), 400, "model.context_window_required");
    expect((await memories("c-model")).body.items).toHaveLength(1);
  });

  it("rejects invalid bodies with 400 naming the fields, and writes nothing", async () => {
    await chat("c-bad", 12);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: MODEL, force: "NONE" }, "body.force"],
      [{ model: { contextWindow: 10 } }, "body.model.contextWindow"],
      [{ model: MODEL, prompt: { tokens: -1 } }, "body.prompt.tokens"],
      [{ prompt: { tokens: 1 } }, "body.model"],
      [{ model: MODEL, instructions: "x".repeat(4001) }, "body.instructions"],
    ];
    for (const [body, field] of cases) {
      const res = await compaction("c-bad", body);
      expectError(res, 400, "request.invalid");
      expect(res.body.error.details.fields).toContain(field);
    }
    expectError(await compaction("c-bad", { model: MODEL, surprise: true }), 400, "request.invalid");
    expect(fake.calls).toEqual([]);
    expect((await memories("c-bad")).body.items).toEqual([]);
  });

  it("is 404 for another tenant's process and for an unknown one", async () => {
    await chat("c-private");
    expectError(await compaction("c-private", { model: MODEL, force: "HARD" }, KEY_B), 404, "process.not_found");
    expectError(await memories("c-private", "", KEY_B), 404, "process.not_found");
    expectError(await compaction("c-nobody", { model: MODEL, force: "HARD" }), 404, "process.not_found");
    expectError(await memories("c-nobody"), 404, "process.not_found");
    expect(fake.calls).toEqual([]);
    // The owner still sees an untouched process.
    expect((await api("GET", "/v1/processes/c-private/messages?view=active")).body.items).toHaveLength(17);
  });

  it("publishes MemoryCompacted, listed by GET /local/events", async () => {
    await chat("c-event");
    const res = await compaction("c-event", { model: MODEL, force: "HARD" });
    const events = (await api("GET", "/local/events")).body.items as any[];
    const mine = events.filter((e) => e.detail.processId === "c-event");
    expect(mine).toEqual([
      {
        source: "vancetope.memory",
        detailType: "MemoryCompacted",
        detail: { tenantId: "tenant-a", processId: "c-event", memoryId: res.body.memoryId, mode: "HARD", compactedMessages: 11, producedBy: "inline" },
        time: expect.any(String),
      },
    ]);
  });
});

describe("GET /v1/processes/{id}/memories", () => {
  it("lists the chain newest first, with the includeSuperseded, includeFailed and kind filters", async () => {
    await chat("m-chain");
    const first = (await compaction("m-chain", { model: MODEL, force: "HARD" })).body;
    await chat("m-chain", 12); // re-PUT keeps the process; 12 more messages
    const second = (await compaction("m-chain", { model: MODEL, force: "HARD" })).body;
    await chat("m-chain", 12);
    fake.script.push({ ok: false, failure: { kind: "provider_unavailable", retryable: true, message: "model overloaded at llm-gw.corp.internal" } });
    const failed = (await compaction("m-chain", { model: MODEL, force: "HARD" })).body;
    expect(failed.reason).toBe("summarizer_failed: provider_unavailable");
    expect([first.compacted, second.compacted, failed.compacted]).toEqual([true, true, false]);

    const idsOf = (res: ApiResponse) => (res.body.items as any[]).map((m) => m.id);
    const all = await memories("m-chain");
    expect(all.status).toBe(200);
    expect(idsOf(all)).toEqual([second.memoryId, first.memoryId]);
    for (const m of all.body.items) Memory.parse(m);
    const [newest, oldest] = all.body.items;
    expect(newest).toMatchObject({
      kind: "ARCHIVED_CHAT",
      status: "OK",
      supersededAt: null,
      metadata: { compactedMessages: second.compactedMessages, provider: "fake", model: "fake-model", supersededMemoryId: first.memoryId },
    });
    expect(oldest).toMatchObject({ supersededAt: expect.any(String), supersededByMemoryId: second.memoryId });
    expect(oldest.sourceRefs).toHaveLength(first.compactedMessages);

    expect(idsOf(await memories("m-chain", "?includeSuperseded=false"))).toEqual([second.memoryId]);
    const withFailed = await memories("m-chain", "?includeFailed=true");
    expect(idsOf(withFailed)).toEqual([failed.memoryId, second.memoryId, first.memoryId]);
    // The failure's code; the summarizer's words stay in the log (docs/summarizers.md, "Failures").
    expect(withFailed.body.items[0]).toMatchObject({ status: "FAILED", metadata: { error: "provider_unavailable" } });
    expect(JSON.stringify(withFailed.body)).not.toContain("llm-gw");
    expect(idsOf(await memories("m-chain", "?includeSuperseded=false&includeFailed=true"))).toEqual([failed.memoryId, second.memoryId]);
    expect(idsOf(await memories("m-chain", "?kind=ARCHIVED_CHAT"))).toEqual([second.memoryId, first.memoryId]);

    expectError(await memories("m-chain", "?kind=KNOWLEDGE"), 400, "request.invalid");
    expectError(await memories("m-chain", "?includeFailed=yes"), 400, "request.invalid");
  });

  it("answers an empty list for a process that never compacted", async () => {
    await api("PUT", "/v1/processes/m-empty", { body: { projectId: "proj" } });
    expect(await memories("m-empty")).toEqual({ status: 200, body: { items: [] } });
  });
});

describe("tunables settings", () => {
  // Tenant B only: its tenant-wide settings must not leak into tenant A's tests.
  it("applies tenant settings, and project settings over them", async () => {
    const tenant = await api("PUT", "/v1/settings", { key: KEY_B, body: { keepRecent: 40 } });
    expect(tenant.status).toBe(200);
    expect(tenant.body).toMatchObject({ overrides: { keepRecent: 40 }, effective: { keepRecent: 40, hardAnchor: 5 } });
    const project = await api("PUT", "/v1/settings?projectId=fast", { key: KEY_B, body: { keepRecent: 4, hardAnchor: 2 } });
    expect(project.body).toMatchObject({ overrides: { keepRecent: 4, hardAnchor: 2 }, effective: { keepRecent: 4, hardAnchor: 2 } });

    await chat("s-slow", 16, { key: KEY_B, projectId: "slow" });
    await chat("s-fast", 16, { key: KEY_B, projectId: "fast" });
    expect((await compaction("s-slow", { model: MODEL, force: "HARD" }, KEY_B)).body).toMatchObject({ compacted: false, reason: "keep_recent" });
    expect((await compaction("s-fast", { model: MODEL, force: "HARD" }, KEY_B)).body).toMatchObject({ compacted: true, compactedMessages: 16 - 2 });

    const read = await api("GET", "/v1/settings?projectId=fast", { key: KEY_B });
    expect(read.body).toMatchObject({ overrides: { keepRecent: 4, hardAnchor: 2 }, effective: { keepRecent: 4, hardAnchor: 2, softAnchor: 10 } });
    // Tenant A never saw them.
    expect((await api("GET", "/v1/settings")).body.effective.keepRecent).toBe(10);
  });

  it("rejects invalid settings with 400 naming the field, and stores nothing", async () => {
    const stored = await api("PUT", "/v1/settings?projectId=p1", { key: KEY_C, body: { softAnchor: 6 } });
    expect(stored.status).toBe(200);
    const before = [(await api("GET", "/v1/settings", { key: KEY_C })).body, (await api("GET", "/v1/settings?projectId=p1", { key: KEY_C })).body];

    const negative = await api("PUT", "/v1/settings", { key: KEY_C, body: { keepRecent: -1 } });
    expectError(negative, 400, "request.invalid");
    expect(negative.body.error.details.fields).toEqual(["body.keepRecent"]);
    const threshold = await api("PUT", "/v1/settings?projectId=p1", { key: KEY_C, body: { hardThreshold: 1.5 } });
    expectError(threshold, 400, "request.invalid");
    expect(threshold.body.error.details.fields).toEqual(["body.hardThreshold"]);
    const unknown = await api("PUT", "/v1/settings", { key: KEY_C, body: { keepRecnet: 3 } });
    expectError(unknown, 400, "request.invalid");
    expect(unknown.body.error.message).toContain("keepRecnet");
    // Valid alone, but soft would pass hard (0.85) once merged: the merged result is checked too.
    const order = await api("PUT", "/v1/settings?projectId=p1", { key: KEY_C, body: { softThreshold: 0.9 } });
    expectError(order, 400, "tunables.invalid");
    expect(order.body.error.message).toMatch(/hardThreshold/);
    expectError(await api("PUT", "/v1/settings?projectId=bad%23id", { key: KEY_C, body: { keepRecent: 3 } }), 400);

    const after = [(await api("GET", "/v1/settings", { key: KEY_C })).body, (await api("GET", "/v1/settings?projectId=p1", { key: KEY_C })).body];
    expect(after).toEqual(before);
    expect(after[1].overrides).toEqual({ softAnchor: 6 });
  });

  it("keeps a project compacting when a later tenant override conflicts with its thresholds", async () => {
    expect((await api("PUT", "/v1/settings?projectId=clash", { key: KEY_D, body: { softThreshold: 0.6, hardAnchor: 2 } })).status).toBe(200);
    expect((await api("PUT", "/v1/settings", { key: KEY_D, body: { softThreshold: 0.3, hardThreshold: 0.5 } })).status).toBe(200);
    await chat("s-clash", 16, { key: KEY_D, projectId: "clash" });
    const res = await compaction("s-clash", { model: MODEL, prompt: { tokens: 50_000 } }, KEY_D);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ mode: "HARD", compacted: true, compactedMessages: 16 - 2 });
    const effective = (await api("GET", "/v1/settings?projectId=clash", { key: KEY_D })).body.effective;
    expect(effective).toMatchObject({ softThreshold: 0.3, hardThreshold: 0.5, hardAnchor: 2 });
  });
});

describe("POST /v1/processes/{id}/turns", () => {
  it("appends, compacts when the prompt is past a threshold, and answers the new active view", async () => {
    await chat("t-turn");
    const res = await api("POST", "/v1/processes/t-turn/turns", {
      body: { message: { role: "USER", content: "Which shelves move first?" }, model: MODEL, prompt: { tokens: 96_000 } },
    });
    expect(res.status).toBe(200);
    expect(res.body.compaction).toMatchObject({ mode: "EMERGENCY", compacted: true, compactedMessages: 17 - 3 });
    expect(res.body.messages.map((m: any) => m.content).at(-1)).toBe("Which shelves move first?");
    expect(res.body.messages).toHaveLength(1 + 3);
    expect(res.body.context.block).toContain("## Earlier Conversation (compacted)");
  });
});

describe("foldTarget: fold only down to a share of the window", () => {
  it("keeps more recent turns verbatim than a full HARD fold, and lands near the target", async () => {
    const { service, api } = await startTestService({ overrides: { summarizer: async () => createFakeSummarizer() } });
    try {
      const seed = async (id: string) => {
        await api("PUT", `/v1/processes/${id}`, { body: { projectId: id } });
        for (let i = 0; i < 40; i++) {
          await api("POST", `/v1/processes/${id}/messages`, { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `turn ${i} `.padEnd(400, "x") } });
        }
      };
      await seed("ft-off");
      await seed("ft-on");
      expect((await api("PUT", "/v1/settings?projectId=ft-on", { body: { foldTarget: 0.5 } })).status).toBe(200);
      const window = { contextWindow: 4_500 }; // 40 messages of ~104 tokens: ratio ~0.92, HARD
      const off = (await api("POST", "/v1/processes/ft-off/compaction", { body: { model: window } })).body;
      const on = (await api("POST", "/v1/processes/ft-on/compaction", { body: { model: window } })).body;
      expect([off.mode, on.mode]).toEqual(["HARD", "HARD"]);
      expect(on.compacted && off.compacted).toBe(true);
      expect(on.compactedMessages).toBeLessThan(off.compactedMessages);
      expect(on.tokensAfter).toBeGreaterThan(off.tokensAfter);
      expect(on.tokensAfter).toBeLessThanOrEqual(0.5 * 4_500);
      const activeOn = (await api("GET", "/v1/processes/ft-on/messages?view=active")).body.items.length;
      const activeOff = (await api("GET", "/v1/processes/ft-off/messages?view=active")).body.items.length;
      expect(activeOn).toBeGreaterThan(activeOff);
      // An invalid target is refused, naming the field.
      const bad = await api("PUT", "/v1/settings", { body: { foldTarget: 0.9 } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.fields).toContain("foldTarget");
      const tiny = await api("PUT", "/v1/settings", { rawBody: '{"foldTarget":5e-324}' });
      expect(tiny.status).toBe(400);
    } finally {
      await service.stop();
    }
  });
});

describe("foldMinRoomTokens: a fold target leaves room below the hard threshold", () => {
  it("lowers the target on a small window so the fold frees at least that room; a negative value is refused", async () => {
    const { service, api } = await startTestService({ overrides: { summarizer: async () => createFakeSummarizer() } });
    try {
      const seed = async (id: string, settings: Record<string, number>) => {
        await api("PUT", `/v1/processes/${id}`, { body: { projectId: id } });
        expect((await api("PUT", `/v1/settings?projectId=${id}`, { body: settings })).status).toBe(200);
        for (let i = 0; i < 40; i++) {
          await api("POST", `/v1/processes/${id}/messages`, { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `turn ${i} `.padEnd(400, "x") } });
        }
      };
      await seed("room-0", { foldTarget: 0.7, foldMinRoomTokens: 0 });
      await seed("room-2k", { foldTarget: 0.7, foldMinRoomTokens: 2_000 });
      const window = { contextWindow: 4_500 }; // ratio ~0.92: HARD; target 0.7 = 3,150 tokens
      const plain = (await api("POST", "/v1/processes/room-0/compaction", { body: { model: window } })).body;
      const roomy = (await api("POST", "/v1/processes/room-2k/compaction", { body: { model: window } })).body;
      expect([plain.mode, roomy.mode]).toEqual(["HARD", "HARD"]);
      expect(plain.compacted && roomy.compacted).toBe(true);
      // Without the room: near the share (above 0.85 x 4,500 - 2,000 = 1,825). With it: at most 1,825.
      expect(plain.tokensAfter).toBeGreaterThan(1_825);
      expect(plain.tokensAfter).toBeLessThanOrEqual(0.7 * 4_500);
      expect(roomy.tokensAfter).toBeLessThanOrEqual(1_825);
      expect(roomy.compactedMessages).toBeGreaterThan(plain.compactedMessages);
      const bad = await api("PUT", "/v1/settings", { body: { foldMinRoomTokens: -1 } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.fields).toEqual(["body.foldMinRoomTokens"]);
    } finally {
      await service.stop();
    }
  });
});

describe("GET /v1/processes/{id}/memories/{memoryId}", () => {
  it("answers the memory with its full loss report and per-line provenance; 404 for unknown ids and other tenants", async () => {
    await chat("c-detail");
    const res = await compaction("c-detail", { model: MODEL, prompt: { tokens: 90_000 } });
    const id = res.body.memoryId as string;
    const detail = await api("GET", `/v1/processes/c-detail/memories/${id}`);
    expect(detail.status).toBe(200);
    expect(Memory.parse(detail.body.memory).id).toBe(id);
    // The fake's summary names ids, not the shelves and days of the folded items: all dropped.
    expect(detail.body.loss.units).toBeGreaterThan(0);
    expect(detail.body.loss.units).toBe(detail.body.loss.kept + detail.body.loss.dropped.length);
    expect(detail.body.loss.dropped[0]).toEqual({ text: expect.any(String), messageIds: expect.arrayContaining([expect.any(String)]) });
    expect(detail.body.provenance).toEqual([{ line: 1, text: detail.body.memory.content, messageIds: [] }]);
    expect(detail.body.memory.metadata.loss.dropped.length).toBeLessThanOrEqual(20);

    const listed = (await memories("c-detail")).body.items[0];
    expect(listed).not.toHaveProperty("citations");
    expect(listed).not.toHaveProperty("droppedUnits");

    expectError(await api("GET", `/v1/processes/c-detail/memories/mem_unknown`), 404);
    expectError(await api("GET", `/v1/processes/c-detail/memories/${id}`, { key: KEY_B }), 404);
  });
});
