/**
 * The per-turn call `POST /v1/processes/{id}/turns` (docs/turns.md): one request does the turn's whole
 * work, and its round trips are counted at the Store port and at the DynamoDB client
 * (the numbers in docs/turns.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { startRecordedService } from "../support/recording-store.js";

const fake = createFakeSummarizer();
let ctx: Awaited<ReturnType<typeof startRecordedService>>;

beforeAll(async () => {
  // These turns compact in the request (the inline mode): the round trips below are that path's.
  ctx = await startRecordedService({ overrides: { summarizer: async () => fake }, env: { COMPACTION_EXECUTION: "inline" } });
});
afterAll(async () => ctx?.service.stop());

const api = (...args: Parameters<typeof ctx.api>) => ctx.api(...args);
const BIG = { contextWindow: 1_000_000 };

const createProcess = async (id: string, body: Record<string, unknown> = { projectId: "p" }) =>
  expect((await api("PUT", `/v1/processes/${id}`, { body })).status).toBe(200);
const turn = (id: string, body: Record<string, unknown>) => api("POST", `/v1/processes/${id}/turns`, { body });
const history = async (id: string) => (await api("GET", `/v1/processes/${id}/messages?limit=1000`)).body.items as any[];

/**
 * Runs `fn` and returns the Store calls and DynamoDB commands it caused. `warm` first runs a
 * message-less turn on that process, so the tunables settings (cached 60 s) are not re-read.
 */
async function measure(fn: () => Promise<unknown>, warm?: string) {
  if (warm) await turn(warm, { model: BIG });
  ctx.recording.reset();
  ctx.dynamo.reset();
  await fn();
  await ctx.service.bus.drain();
  return {
    store: ctx.recording.calls.map((c) => c.method),
    dynamo: ctx.dynamo.commands.map((c) => (c.consistent ? `${c.name}(consistent)` : c.name)),
  };
}

describe("POST /v1/processes/{id}/turns", () => {
  it("appends the message, compacts nothing below the threshold, and returns the active view", async () => {
    await createProcess("t-fresh");
    const res = await turn("t-fresh", { message: { role: "USER", content: "Build me a parser" }, model: BIG });
    expect(res.status).toBe(200);
    expect(res.body.compaction).toMatchObject({ mode: "NONE", compacted: false, compactedMessages: 0 });
    expect(res.body.context).toEqual({ block: "", staticBlock: "", sections: [] });
    expect(res.body.messages).toHaveLength(1);
    expect(res.body.messages[0]).toMatchObject({ role: "USER", tags: ["STRENGTH:pinned"], archivedInMemoryId: null });
    const again = await turn("t-fresh", { model: BIG });
    expect(again.body.messages).toEqual(res.body.messages);
  });

  it("compacts inside the turn and returns the rebuilt view with the new summary", async () => {
    await createProcess("t-compact");
    for (let i = 0; i < 16; i++) {
      await api("POST", "/v1/processes/t-compact/messages", {
        body: { role: i % 2 ? "ASSISTANT" : "USER", content: `step ${i}: we discussed the tokenizer in detail` },
      });
    }
    fake.script.push({ ok: true, summary: "TURN SUMMARY" });
    // 900 of 1000 tokens: HARD.
    const res = await turn("t-compact", {
      message: { role: "USER", content: "and now the parser" },
      model: { name: "local-model", contextWindow: 1000 },
      prompt: { tokens: 900 },
    });
    expect(res.status).toBe(200);
    const { compaction, context, messages } = res.body;
    expect(compaction).toMatchObject({ mode: "HARD", compacted: true, tokensBefore: 900 });
    expect(compaction.tokensAfter).toBeLessThan(900);
    expect(context.block).toBe("## Earlier Conversation (compacted)\nTURN SUMMARY");
    expect(messages.every((m: any) => m.archivedInMemoryId === null)).toBe(true);
    expect(messages.at(-1).content).toBe("and now the parser");
    expect(messages).toHaveLength(17 - compaction.compactedMessages);
    const archived = (await history("t-compact")).filter((m) => m.archivedInMemoryId === compaction.memoryId);
    expect(archived).toHaveLength(compaction.compactedMessages);
  });

  it("appends once when a turn is retried with the same idempotency key", async () => {
    await createProcess("t-idem");
    const body = { message: { role: "USER", content: "hello", idempotencyKey: "turn-1" }, model: BIG };
    const [a, b] = [await turn("t-idem", body), await turn("t-idem", body)];
    expect(b.body.messages).toEqual(a.body.messages);
    expect(await history("t-idem")).toHaveLength(1);
  });

  it("rejects a bad turn before writing anything", async () => {
    await createProcess("t-bad");
    const unknownModel = await turn("t-bad", { message: { role: "USER", content: "x" }, model: { name: "my-llama" } });
    expect(unknownModel.status).toBe(400);
    expect(unknownModel.body.error.code).toBe("model.context_window_required");
    expect((await turn("t-bad", { message: { role: "BOT", content: "x" }, model: BIG })).status).toBe(400);
    expect((await turn("t-bad", { model: BIG, extra: 1 })).status).toBe(400);
    expect(await history("t-bad")).toEqual([]);
    expect((await turn("t-missing", { model: BIG })).body.error.code).toBe("process.not_found");
    expect((await api("POST", "/v1/processes/t-bad/turns", { key: null, body: { model: BIG } })).status).toBe(401);
  });
});

describe("round trips of a turn (docs/turns.md)", () => {
  beforeAll(async () => {
    await createProcess("rt-main", { projectId: "rt" });
    await createProcess("rt-parent", { projectId: "rt", name: "Arthur" });
    await createProcess("rt-worker", { projectId: "rt", parentProcessId: "rt-parent" });
    await createProcess("rt-cross", { projectId: "rt-other", parentProcessId: "rt-parent" });
    // The parent gets a summary, so the same-project worker reads it.
    for (let i = 0; i < 12; i++) {
      await api("POST", "/v1/processes/rt-parent/messages", { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `plan ${i}` } });
    }
    await api("POST", "/v1/processes/rt-parent/compaction", { body: { model: BIG, force: "HARD" } });
  });

  it("a turn with a message and no compaction: one consistent Query and one transaction", async () => {
    const m = await measure(() => turn("rt-main", { message: { role: "USER", content: "next" }, model: BIG }), "rt-main");
    expect(m.store).toEqual(["activeView", "appendMessage"]);
    expect(m.dynamo).toEqual(["QueryCommand(consistent)", "TransactWriteCommand"]);
  });

  it("a turn without a message, and GET context: one consistent Query", async () => {
    for (const fn of [() => turn("rt-main", { model: BIG }), () => api("GET", "/v1/processes/rt-main/context")]) {
      const m = await measure(fn, "rt-main");
      expect(m.store).toEqual(["activeView"]);
      expect(m.dynamo).toEqual(["QueryCommand(consistent)"]);
    }
  });

  it("an idempotency key adds no round trip (it rides in the same transaction)", async () => {
    const m = await measure(
      () => turn("rt-main", { message: { role: "ASSISTANT", content: "done", idempotencyKey: "k-1" }, model: BIG }),
      "rt-main",
    );
    expect(m.dynamo).toEqual(["QueryCommand(consistent)", "TransactWriteCommand"]);
  });

  it("a same-project worker adds the parent's META and summary reads; a cross-project one only META", async () => {
    const same = await measure(() => turn("rt-worker", { message: { role: "USER", content: "go" }, model: BIG }), "rt-worker");
    expect(same.store).toEqual(["activeView", "appendMessage", "getProcess", "getMemory"]);
    expect(same.dynamo).toEqual(["QueryCommand(consistent)", "TransactWriteCommand", "GetCommand(consistent)", "GetCommand(consistent)"]);
    const cross = await measure(() => turn("rt-cross", { message: { role: "USER", content: "go" }, model: BIG }), "rt-cross");
    expect(cross.store).toEqual(["activeView", "appendMessage", "getProcess"]);
    expect(cross.dynamo).toEqual(["QueryCommand(consistent)", "TransactWriteCommand", "GetCommand(consistent)"]);
  });

  it("a turn that compacts: lease, summary, the day's usage, one commit transaction, one re-read", async () => {
    await createProcess("rt-fold", { projectId: "rt" });
    for (let i = 0; i < 14; i++) {
      await api("POST", "/v1/processes/rt-fold/messages", { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `detail ${i}` } });
    }
    const m = await measure(
      () => turn("rt-fold", { message: { role: "USER", content: "more" }, model: { contextWindow: 1000 }, prompt: { tokens: 900 } }),
      "rt-fold",
    );
    // The tenant's budget (unlimited here) is read once a minute per container.
    const budgetReads = m.store.filter((c) => c === "getTenantBudget").length;
    expect(budgetReads === 0 || budgetReads === 1).toBe(true);
    expect(m.store).toEqual([
      "activeView",
      "appendMessage",
      "acquireLease",
      ...Array(budgetReads).fill("getTenantBudget"),
      "addUsage",
      "commitCompaction",
      "activeView",
      // The append recorded the turn with the summary it read; the answer replays the new one.
      "recordTurn",
    ]);
    expect(m.dynamo).toEqual([
      "QueryCommand(consistent)",
      "TransactWriteCommand",
      "UpdateCommand",
      ...Array(budgetReads).fill("GetCommand(consistent)"),
      "TransactWriteCommand",
      "TransactWriteCommand",
      "QueryCommand(consistent)",
      "UpdateCommand",
    ]);
  });

  it("the first turn of a container for a tenant and project reads the tunables settings once", async () => {
    await createProcess("rt-newproj", { projectId: "rt-fresh-project" });
    const m = await measure(() => turn("rt-newproj", { message: { role: "USER", content: "hi" }, model: BIG }));
    // The project's settings, and the tenant's too when their cache entry has expired meanwhile.
    const reads = m.store.filter((c) => c === "getSettings").length;
    expect(reads === 1 || reads === 2).toBe(true);
    // Read before the append: the window (maxPromptTokens) goes into the turn's record; a process's
    // first turn then records its replay mark too (docs/turns.md, "Append-only between folds").
    expect(m.store).toEqual(["activeView", ...Array(reads).fill("getSettings"), "appendMessage", "recordTurn"]);
    expect(m.dynamo).toEqual(["QueryCommand(consistent)", ...Array(reads).fill("GetCommand(consistent)"), "TransactWriteCommand", "UpdateCommand"]);
  });
});
