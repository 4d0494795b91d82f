/**
 * What a turn's answer says happened (docs/turns.md, "The window the turn used", "The last turn's
 * record", "What the answer says happened", "A prompt larger than the window"), over HTTP against
 * DynamoDB Local, with the Store calls of each turn recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messageTokens } from "../../core/domain/tokens.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { startRecordedService } from "../support/recording-store.js";

let ctx: Awaited<ReturnType<typeof startRecordedService>>;

beforeAll(async () => {
  ctx = await startRecordedService({ overrides: { summarizer: async () => createFakeSummarizer() } });
});
afterAll(async () => ctx?.service.stop());

const api = (...args: Parameters<typeof ctx.api>) => ctx.api(...args);
const WINDOW = { contextWindow: 100_000 };

const createProcess = async (id: string, projectId = "p") => expect((await api("PUT", `/v1/processes/${id}`, { body: { projectId } })).status).toBe(200);
const turn = (id: string, body: Record<string, unknown>) => api("POST", `/v1/processes/${id}/turns`, { body });
const say = async (id: string, n: number) => {
  for (let i = 0; i < n; i++) {
    const res = await api("POST", `/v1/processes/${id}/messages`, { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `step ${i}: shelf ${i} moves to aisle ${i % 7}.` } });
    expect(res.status).toBe(201);
  }
};
const compact = async (id: string) => {
  const res = await api("POST", `/v1/processes/${id}/compaction`, { body: { model: WINDOW, force: "HARD" } });
  expect(res.body).toMatchObject({ compacted: true, window: { tokens: 100_000, source: "request" } });
  return res.body.memoryId as string;
};
/** The Store calls `fn` makes. */
async function storeCalls(fn: () => Promise<unknown>) {
  ctx.recording.reset();
  await fn();
  return ctx.recording.calls.map((c) => c.method);
}

describe("the window the turn used", () => {
  it("names where the window came from: the request, a known model name or its dated snapshot", async () => {
    await createProcess("w-1");
    expect((await turn("w-1", { model: { name: "gpt-4o", contextWindow: 4000 } })).body.window).toEqual({ tokens: 4000, source: "request" });
    expect((await turn("w-1", { model: { name: "gpt-4o-2024-08-06" } })).body.window).toEqual({ tokens: 128_000, source: "model", model: "gpt-4o" });
    expect((await turn("w-1", { model: { name: "Anthropic/claude-sonnet-4-5-20250929" } })).body.window).toEqual({
      tokens: 200_000,
      source: "model",
      model: "claude-sonnet-4-5",
    });
  });

  it("answers a 400 naming a model it does not know exactly, and appends nothing", async () => {
    await createProcess("w-2");
    const res = await turn("w-2", { message: { role: "USER", content: "hello" }, model: { name: "gpt-4-oh" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("model.context_window_required");
    expect(res.body.error.message).toContain("'gpt-4-oh'");
    expect((await api("GET", "/v1/processes/w-2/messages")).body.items).toEqual([]);
  });

  it("caps the window at maxPromptTokens, and applies the thresholds to the capped window", async () => {
    expect((await api("PUT", "/v1/settings?projectId=capped", { body: { maxPromptTokens: 8000 } })).status).toBe(200);
    await createProcess("w-3", "capped");
    const small = await turn("w-3", { model: { name: "gpt-4o" }, prompt: { tokens: 3000 } });
    expect(small.body.window).toEqual({ tokens: 8000, source: "setting", model: "gpt-4o" });
    expect(small.body.compaction.mode).toBe("NONE");
    // 7,700 tokens are 6% of gpt-4o's window but 96% of the capped one: EMERGENCY.
    expect((await turn("w-3", { model: { name: "gpt-4o" }, prompt: { tokens: 7700 } })).body.compaction.mode).toBe("EMERGENCY");
    // A window below the cap is the model's own.
    expect((await turn("w-3", { model: { contextWindow: 4000 } })).body.window).toEqual({ tokens: 4000, source: "request" });
    const compaction = await api("POST", "/v1/processes/w-3/compaction", { body: { model: { name: "gpt-4o" } } });
    expect(compaction.body.window).toEqual({ tokens: 8000, source: "setting", model: "gpt-4o" });
  });
});

describe("the last turn's record", () => {
  it("is shown with the process, and written again only when it changed", async () => {
    await createProcess("r-1");
    expect((await api("GET", "/v1/processes/r-1")).body.lastTurn).toBeUndefined();
    await turn("r-1", { message: { role: "USER", content: "hi" }, model: WINDOW });
    const shown = await api("GET", "/v1/processes/r-1");
    expect(shown.body.lastTurn).toMatchObject({ window: { tokens: 100_000, source: "request" }, summaryId: null, version: 0 });
    // The same window, nothing folded: the turn reads and writes nothing more.
    expect(await storeCalls(() => turn("r-1", { model: WINDOW }))).toEqual(["activeView"]);
    // Another window: one conditional update.
    expect(await storeCalls(() => turn("r-1", { model: { name: "gpt-4o" } }))).toEqual(["activeView", "recordTurn"]);
    expect((await api("GET", "/v1/processes/r-1")).body.lastTurn.window).toEqual({ tokens: 128_000, source: "model", model: "gpt-4o" });
  });
});

describe("what the answer says happened", () => {
  it("names the summary replayed and the folds committed since the previous turn, in order", async () => {
    await createProcess("f-1");
    await say("f-1", 16);
    const first = await turn("f-1", { model: WINDOW });
    expect(first.body).toMatchObject({ summaryId: null });
    expect(first.body.sinceLastTurn).toBeUndefined();

    const a = await compact("f-1");
    const afterOne = await turn("f-1", { model: WINDOW });
    expect(afterOne.body).toMatchObject({ summaryId: a, sinceLastTurn: { folds: [a] }, compaction: { compacted: false } });
    expect((await turn("f-1", { model: WINDOW })).body.sinceLastTurn).toEqual({ folds: [] });

    await say("f-1", 12);
    const b = await compact("f-1");
    await say("f-1", 12);
    const c = await compact("f-1");
    let answer: any;
    // Two folds since: the newest names the one before it, which costs one read.
    const calls = await storeCalls(async () => (answer = (await turn("f-1", { model: WINDOW })).body));
    expect(answer).toMatchObject({ summaryId: c, sinceLastTurn: { folds: [b, c] } });
    expect(calls.filter((m) => m === "getMemory")).toHaveLength(1);

    expect((await api("POST", `/v1/processes/f-1/memories/${c}/revert`)).status).toBe(200);
    expect((await turn("f-1", { model: WINDOW })).body).toMatchObject({ summaryId: b, sinceLastTurn: { folds: [], reverted: true } });
  });
});

describe("a prompt larger than the window", () => {
  /** Content whose message counts exactly `tokens`. */
  const sized = (tokens: number) => {
    let content = "";
    while (messageTokens({ content }) < tokens) content += "w";
    expect(messageTokens({ content })).toBe(tokens);
    return content;
  };

  it("keeps a message of exactly the window's size without a flag", async () => {
    await createProcess("o-1");
    const res = await turn("o-1", { message: { role: "USER", content: sized(1000) }, model: { contextWindow: 1000 } });
    expect(res.status).toBe(200);
    expect(res.body.overWindow).toBeUndefined();
  });

  it("flags a message one token larger than the window, stores it and answers it whole", async () => {
    await createProcess("o-2");
    const content = sized(1001);
    const res = await turn("o-2", { message: { role: "USER", content }, model: { contextWindow: 1000 } });
    expect(res.status).toBe(200);
    const [message] = res.body.messages;
    expect(message.content).toBe(content);
    expect(res.body.overWindow).toEqual({ tokens: 1001, window: 1000, reason: "message_larger_than_window", messageIds: [message.id] });
    expect((await api("GET", "/v1/processes/o-2/messages")).body.items.map((m: { id: string }) => m.id)).toEqual([message.id]);
  });

  it("says when the turn could not bring a prompt of ordinary messages under the window", async () => {
    await createProcess("o-3");
    await say("o-3", 4);
    const res = await turn("o-3", { model: { contextWindow: 1000 }, prompt: { tokens: 1200 } });
    expect(res.body.overWindow).toEqual({ tokens: 1200, window: 1000, reason: "not_reduced" });
    expect(res.body.compaction.reason).toBeDefined();
  });
});
