/**
 * The TypeScript client against the local runner (offline summarizer): beginTurn through a
 * compaction, every typed method, errors, and the prompt helpers on real turns.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient, MemoryApiError, toAnthropicRequest, toOpenAIMessages, type MemoryClient, type Turn } from "../../client/index.js";
import { KEY_A, startTestService } from "../support/service.js";
import { steppingClock } from "../support/stepping-clock.js";

const clock = steppingClock();

let ctx: Awaited<ReturnType<typeof startTestService>>;
let memory: MemoryClient;

beforeAll(async () => {
  ctx = await startTestService();
  // Every reading a distinct millisecond: range boundaries taken between two writes are unambiguous.
  ctx.service.deps.clock = clock;
  memory = createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
});
afterAll(async () => ctx?.service.stop());

const MODEL = { name: "small-local-model", contextWindow: 2000 };
const topics = ["the tokenizer", "error recovery", "the AST layout", "operator precedence", "unicode identifiers"];

/** A simulated engine: user turns via beginTurn, assistant replies (some with tool calls) appended. */
/** The first turn that replays a summary: folded in the turn, or committed by the worker since the last one. */
interface Compacted {
  turn: Turn;
  at: number;
  memoryId: string;
  folded: number;
}

async function runUntilCompacted(processId: string, maxTurns = 40): Promise<Compacted> {
  for (let i = 0; i < maxTurns; i++) {
    const content =
      i % 4 === 3 ? "ok thanks!" : `Turn ${i}: let us settle ${topics[i % topics.length]}; we need tests for edge case ${i} and a decision by Friday.`;
    const turn = await memory.beginTurn(processId, { message: { role: "USER", content }, model: MODEL });
    if (turn.compaction.compacted) return { turn, at: i, memoryId: turn.compaction.memoryId!, folded: turn.compaction.compactedMessages };
    // Below EMERGENCY a due prepared fold is committed by the worker, between two turns
    // (docs/compaction.md, "Who commits a prepared fold"): this turn is the first to replay it.
    if (turn.context.block !== "") {
      const [newest] = (await memory.listMemories(processId)).items;
      return { turn, at: i, memoryId: newest!.id, folded: newest!.sourceRefs.length };
    }
    // A queued fold is prepared by the in-process worker; waiting for it keeps the turn on which
    // the session compacts independent of how fast this machine runs the worker.
    await ctx.service.bus.drain();
    if (i % 5 === 1) {
      await memory.appendMessage(processId, {
        role: "ASSISTANT",
        content: "",
        toolCalls: [{ id: `call-${i}`, name: "run_tests", arguments: JSON.stringify({ filter: `case-${i}` }) }],
      });
      await memory.appendMessage(processId, { role: "TOOL", content: `case-${i}: 2 passed, 1 failed`, toolCallId: `call-${i}` });
    }
    await memory.appendMessage(processId, {
      role: "ASSISTANT",
      content: `For ${topics[i % topics.length]} I propose option ${String.fromCharCode(65 + (i % 3))}; edge case ${i} gets a regression test.`,
    });
  }
  throw new Error(`no compaction within ${maxTurns} turns`);
}

describe("beginTurn", () => {
  let compacted: Compacted;

  beforeAll(async () => {
    await memory.upsertProcess("client-main", { projectId: "client", name: "Frankie", engine: "frankie" });
    compacted = await runUntilCompacted("client-main");
  });

  it("drives a session into a compaction and replays the summary", async () => {
    const { turn, memoryId, folded } = compacted;
    if (turn.compaction.compacted) {
      expect(["SOFT", "HARD", "EMERGENCY"]).toContain(turn.compaction.mode);
      // A SOFT fold of acknowledgements may only break even; it never grows the prompt.
      expect(turn.compaction.tokensAfter).toBeLessThanOrEqual(turn.compaction.tokensBefore);
    }
    const { items } = await memory.listMemories("client-main");
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ id: memoryId, status: "OK", supersededAt: null });
    expect(items[0]!.metadata.provider).toBe("offline");
    expect(turn.context.block).toBe(`## Earlier Conversation (compacted)\n${items[0]!.content}`);
    expect(turn.context.staticBlock).toBe(turn.context.block);
    expect(turn.messages.every((m) => m.archivedInMemoryId === null)).toBe(true);
    expect(await memory.getContext("client-main")).toEqual(turn.context);
    const active = await memory.listMessages("client-main", { view: "active", limit: 1000 });
    expect(active.items).toEqual(turn.messages);
    const all = await memory.listMessages("client-main", { limit: 1000 });
    expect(folded).toBeGreaterThan(0);
    expect(all.items.length).toBe(turn.messages.length + folded);
  });

  it("feeds the helpers: OpenAI messages and an Anthropic request with the block before the breakpoint", async () => {
    const turn = await memory.beginTurn("client-main", { message: { role: "USER", content: "where were we?" }, model: MODEL });
    const openai = toOpenAIMessages(turn, { system: "You are Frankie." });
    expect(openai[0]).toEqual({ role: "system", content: `You are Frankie.\n\n${turn.context.block}` });
    expect(openai.length).toBe(turn.messages.length + 1);
    expect(openai.at(-1)).toEqual({ role: "user", content: "where were we?" });

    const anthropic = toAnthropicRequest(turn, { system: "You are Frankie." });
    expect(anthropic.system.at(-1)).toEqual({ type: "text", text: turn.context.staticBlock, cache_control: { type: "ephemeral" } });
    expect(anthropic.messages[0]!.role).toBe("user");
    anthropic.messages.forEach((m, i) => i > 0 && expect(m.role).not.toBe(anthropic.messages[i - 1]!.role));
    expect(JSON.stringify(anthropic.messages)).not.toMatch(/"role":"(system|tool)"/);
  });
});

describe("typed methods", () => {
  it("manages processes, messages, compaction and ranges", async () => {
    const p = await memory.upsertProcess("client-2", { projectId: "client-b", title: "Range test" });
    expect(p).toMatchObject({ processId: "client-2", projectId: "client-b", allowsCrossProjectSpawn: false });
    expect(await memory.getProcess("client-2")).toEqual(p);
    expect((await memory.listProcesses({ projectId: "client-b" })).items.map((x) => x.processId)).toEqual(["client-2"]);

    const first = await memory.appendMessage("client-2", { role: "USER", content: "the original task", idempotencyKey: "i-1" });
    expect(first).toMatchObject({ created: true, message: { tags: ["STRENGTH:pinned"] } });
    expect(await memory.appendMessage("client-2", { role: "USER", content: "the original task", idempotencyKey: "i-1" })).toEqual({
      ...first,
      created: false,
    });
    const from = clock.now().toISOString();
    for (let i = 0; i < 4; i++) await memory.appendMessage("client-2", { role: i % 2 ? "ASSISTANT" : "USER", content: `topic detail ${i}` });
    const to = clock.now().toISOString();
    // The range never folds the newest USER turn: the engine has moved on to another one.
    await memory.appendMessage("client-2", { role: "USER", content: "next topic" });

    expect(await memory.compact("client-2", { model: { contextWindow: 1_000_000 } })).toMatchObject({ mode: "NONE", compacted: false });
    const range = await memory.compactRange("client-2", { from, to, topicLabel: "details" });
    expect(range.compactedMessages).toBe(4);
    expect(range.memoryId).toEqual(expect.any(String));
    expect((await memory.getContext("client-2")).sections.map((s) => s.name)).toEqual(["Earlier Conversation (compacted)"]);

    const folded = (await memory.listMessages("client-2", { view: "all" })).items.find((m) => m.archivedInMemoryId === range.memoryId)!;
    expect(await memory.getMessage("client-2", folded.id)).toEqual(folded);
    expect(await memory.setMessageStrength("client-2", folded.id, "pinned").catch((e: MemoryApiError) => [e.status, e.code])).toEqual([
      409,
      "message.archived",
    ]);
    expect((await memory.setMessageStrength("client-2", first.message.id, null)).tags).toEqual([]);
    expect((await memory.setMessageStrength("client-2", first.message.id, "pinned")).tags).toEqual(["STRENGTH:pinned"]);

    const hits = await memory.searchHistory("client-2", { q: "topic detail", limit: 10 });
    expect(hits.items.length).toBeGreaterThan(0);
    expect(hits.items.some((h) => h.message.archivedInMemoryId === range.memoryId && typeof h.score === "number")).toBe(true);
    const undo = await memory.revertMemory("client-2", range.memoryId!);
    expect(undo).toMatchObject({ restoredMessages: 4, activeSummaryId: null, memory: { id: range.memoryId, status: "REVERTED" } });
    expect((await memory.listMemories("client-2", { includeReverted: true })).items.map((m) => m.status)).toEqual(["REVERTED"]);
    expect(await memory.revertMemory("client-2", range.memoryId!).catch((e: MemoryApiError) => [e.status, e.code])).toEqual([409, "memory.reverted"]);

    expect((await memory.listInbox({ processId: "client-2" })).items).toEqual([]);
    expect(await memory.answerInboxItem("inb_missing", { accepted: true }).catch((e: MemoryApiError) => e.status)).toBe(404);
  });

  it("builds the inbox and history search requests of api.md", async () => {
    const seen: Array<{ method: string; url: string; body?: unknown }> = [];
    const recording = createMemoryClient({
      baseUrl: "http://memory.test/",
      apiKey: "k",
      fetch: async (url, init) => {
        seen.push({ method: init!.method!, url: String(url), ...(init?.body ? { body: JSON.parse(String(init.body)) } : {}) });
        expect(new Headers(init!.headers).get("authorization")).toBe("Bearer k");
        const body = String(url).includes("/answer") ? { item: { id: "inb_1", status: "ACCEPTED" } } : { items: [] };
        return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
      },
    });
    expect(await recording.searchHistory("p 1", { q: "parser bug", limit: 5 })).toEqual({ items: [] });
    expect(await recording.listInbox({ status: "OPEN" })).toEqual({ items: [] });
    expect(await recording.answerInboxItem("inb_1", { accepted: true })).toMatchObject({ status: "ACCEPTED" });
    expect(seen).toEqual([
      { method: "GET", url: "http://memory.test/v1/processes/p%201/history/search?q=parser+bug&limit=5" },
      { method: "GET", url: "http://memory.test/v1/inbox?status=OPEN" },
      { method: "POST", url: "http://memory.test/v1/inbox/inb_1/answer", body: { accepted: true } },
    ]);
  });
});

describe("errors", () => {
  const caught = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      return e as MemoryApiError;
    }
    throw new Error("expected a MemoryApiError");
  };

  it("throws MemoryApiError with status, code, message and details", async () => {
    const notFound = await caught(memory.getProcess("nope"));
    expect(notFound).toBeInstanceOf(MemoryApiError);
    expect(notFound).toMatchObject({ status: 404, code: "process.not_found", retryable: false });
    const invalid = await caught(memory.upsertProcess("bad", { projectId: 42 as unknown as string }));
    expect(invalid).toMatchObject({ status: 400, code: "request.invalid" });
    expect((invalid.details as { fields: string[] }).fields).toContain("body.projectId");
    const unauthorized = await caught(createMemoryClient({ baseUrl: ctx.service.url, apiKey: "wrong" }).listProcesses());
    expect(unauthorized).toMatchObject({ status: 401, code: "auth.invalid_key" });
    expect(unauthorized.message).toMatch(/API key/);
  });

  it("reports a connection failure as status 0, retryable", async () => {
    const offline = createMemoryClient({ baseUrl: "http://127.0.0.1:9", apiKey: "k" });
    expect(await caught(offline.getProcess("x"))).toMatchObject({ status: 0, code: "network.error", retryable: true });
  });
});
