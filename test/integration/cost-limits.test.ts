/**
 * Cost limits per tenant against DynamoDB Local (docs/reliability.md, "Limits, budgets and rates"): a
 * merge that does not converge stops, a fold past the call cap folds its oldest part (a range
 * fails), every piece of model work is metered per tenant, and the daily budget refuses work that
 * needs the model (a reason for a turn, a dropped job for the worker), atomically across folds.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Message, Role } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { SummarizeInput, SummarizeOutcome } from "../../core/ports/summarizer.js";
import { compactIfNeeded, type CompactionRequest } from "../../core/services/compaction/compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { queueFold } from "../../core/services/compaction/transitions.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { BUDGET_EXCEEDED, utcDay } from "../../core/services/compaction/model-budget.js";
import { upsertProcess } from "../../core/services/processes.js";
import { compactRange } from "../../core/services/compaction/range-compaction.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { runTurn } from "../../core/services/turn.js";
import { runQueuedFold } from "../../core/services/compaction/worker.js";
import { freshTable } from "../support/dynamo.js";
import { createFakeSummarizer, type FakeSummarizer } from "../support/fake-summarizer.js";
import { checkInvariants } from "../../tools/invariants.js";
import { testContainer } from "../support/container.js";

const WINDOW = 100_000;
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("cost"));
});

/** Noon UTC on a fixed day, moving with real time: a test never straddles midnight. */
const NOON = Date.parse("2026-03-01T12:00:00.000Z");
const started = Date.now();
const clock = { now: () => new Date(NOON + (Date.now() - started)) };
const DAY = utcDay(clock.now());

/** Deps of one container; events go nowhere (the tests run the worker themselves). */
const harness = (options: { env?: Record<string, string>; fake?: FakeSummarizer } = {}) => testContainer({ ...options, store, clock });

async function process(deps: ServiceDeps, tenantId: string, n: number, content: (i: number) => string): Promise<{ key: ProcessKey; messages: Message[] }> {
  const key = { tenantId, processId: `cost-${++seq}` };
  await upsertProcess(deps, tenantId, key.processId, { projectId: "proj" });
  const messages: Message[] = [];
  for (let i = 0; i < n; i++) {
    const role: Role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
    messages.push((await appendMessage(deps, key, { role, content: content(i) })).message);
  }
  return { key, messages };
}

const facts = (i: number) => `step ${i}: shelf ${i} goes to aisle ${i % 7} on day ${i % 5}.`;
const HARD: CompactionRequest = { model: { contextWindow: WINDOW }, force: "HARD" };
const activeIds = async (key: ProcessKey) => (await store.activeView(key))!.messages.map((m) => m.id);
/** A summarizer answer of `chars` characters. */
const answer = (chars: number) => async (): Promise<SummarizeOutcome> => ({ ok: true, summary: "y".repeat(chars), usage: { inputTokens: 10, outputTokens: 5 } });

describe("a fold's summarizer calls are bounded", () => {
  it("stops a merge round that would not take fewer calls than the one before: one FAILED row with the reason, nothing archived", async () => {
    // 5,000-char calls at a 400-token budget hold two partial summaries, so the chunks run in
    // parallel; but these partial summaries are 3,000 chars, one per call: round 2 would not shrink.
    const fake = createFakeSummarizer();
    fake.script = Array.from({ length: 100 }, () => answer(3000));
    const { deps } = harness({ fake, env: { COMPACTION_MAX_SOURCE_CHARS: "5000", SUMMARY_WINDOW_SHARE: "0" } });
    const { key } = await process(deps, "t-merge", 29, (i) => `${facts(i)} ${"x".repeat(2000)}`);
    const before = await activeIds(key);

    const result = await compactIfNeeded(deps, key, HARD);
    // 24 messages (5 stay as the anchor), two per call: 12 calls, and no second round.
    expect(fake.calls).toHaveLength(12);
    expect(result.compacted).toBe(false);
    expect(result.reason).toBe(
      "summarizer_failed: summarizer_merge_stalled: merge round 2 would take 12 calls after 12 in round 1: the partial summaries do not fit fewer calls of 5000 chars",
    );
    const memories = await store.listMemories(key);
    expect(memories).toHaveLength(1);
    expect(memories[0]).toMatchObject({ status: "FAILED", metadata: { summarizerCalls: 12 } });
    expect(memories[0]!.metadata.error).toMatch(/^summarizer_merge_stalled: /);
    expect(await activeIds(key)).toEqual(before);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("folds the oldest part a capped fold can summarize, tool groups whole, and the next fold takes the rest", async () => {
    // Chained 1,000-char calls (one message each), at most 4 calls: 3 messages a fold.
    const env = { COMPACTION_MAX_SOURCE_CHARS: "1000", COMPACTION_SUMMARIZER_CONCURRENCY: "1", COMPACTION_MAX_SUMMARIZER_CALLS: "4" };
    const { deps, fake } = harness({ env });
    const { key } = await process(deps, "t-cap", 2, (i) => `${facts(i)} ${"x".repeat(600)}`);
    // A tool call and its result right where the first fold's cut would fall.
    await appendMessage(deps, key, { role: "ASSISTANT", content: "Looking it up.", toolCalls: [{ id: "c1", name: "grep", arguments: "{}" }] });
    await appendMessage(deps, key, { role: "TOOL", content: `aisle map ${"z".repeat(600)}`, toolCallId: "c1" });
    for (let i = 0; i < 14; i++) await appendMessage(deps, key, { role: i % 2 ? "USER" : "ASSISTANT", content: `${facts(i)} ${"x".repeat(600)}` });

    const first = await compactIfNeeded(deps, key, HARD);
    // Three calls of the four (one kept for the quality gate's retry): the first message (the
    // second, the first USER message, is pinned), the tool call with its result, one more message.
    expect(first).toMatchObject({ compacted: true, compactedMessages: 4 });
    expect(fake.calls).toHaveLength(3);
    expect(fake.calls.map((c) => c.messages.map((m) => m.role))).toEqual([["ASSISTANT"], ["ASSISTANT", "TOOL"], ["ASSISTANT"]]);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);

    // 13 messages and the pin left, 5 of them the anchor: the next fold takes three more.
    const second = await compactIfNeeded(deps, key, HARD);
    expect(second).toMatchObject({ compacted: true, compactedMessages: 3 });
    expect((await store.getMemory(key, second.memoryId!))!.sourceRefs).toHaveLength(3);
    expect(fake.calls).toHaveLength(6);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("fails a range that needs more calls than a fold may make, before any call; the worker drops such a job with its reason", async () => {
    const env = { COMPACTION_MAX_SOURCE_CHARS: "1000", COMPACTION_SUMMARIZER_CONCURRENCY: "1", COMPACTION_MAX_SUMMARIZER_CALLS: "4" };
    const { deps, fake } = harness({ env });
    const { key, messages } = await process(deps, "t-range", 12, (i) => `${facts(i)} ${"x".repeat(600)}`);
    const range = { from: messages[0]!.createdAt, to: messages[9]!.createdAt, topicLabel: "shelves" };
    const before = await activeIds(key);

    const direct = await compactRange(deps, key, range);
    expect(direct.compactedMessages).toBe(0);
    // Messages 0 to 9 but the auto-pinned first USER message: 9 calls of one message each.
    expect(direct.reason).toBe("summarizer_failed: summarizer_call_cap: the fold needs 9 summarizer calls, at most 4 are allowed per fold (maxSummarizerCalls)");
    expect(fake.calls).toHaveLength(0);
    expect(await activeIds(key)).toEqual(before);

    const job = await queueFold(deps, key, await settledView(deps, key), { mode: "RANGE", job: "range", range: { ...range, inboxItemId: "inbox-1" } });
    // Not a throw (a retry would meet the same cap): the job ends DISCARDED with the reason.
    await expect(runQueuedFold(deps, { tenantId: key.tenantId, processId: key.processId, foldId: job.id, mode: "RANGE", job: "range" })).resolves.toEqual({
      done: "failed",
      foldId: job.id,
    });
    const dropped = (await store.getMemory(key, job.id))!;
    expect(dropped.status).toBe("DISCARDED");
    expect(dropped.metadata.discardReason).toMatch(/^summarizer_failed: summarizer_call_cap: the fold needs 9 summarizer calls/);
    expect(await activeIds(key)).toEqual(before);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });
});

describe("each tenant's model use is metered", () => {
  it("adds each fold's calls and tokens to the tenant's usage of the day and to the metrics, per tenant", async () => {
    const { deps, metrics } = harness();
    const a = await process(deps, "t-meter-a", 14, facts);
    const b = await process(deps, "t-meter-b", 14, facts);
    const a2 = await process(deps, "t-meter-a", 14, facts);
    expect((await compactIfNeeded(deps, a.key, HARD)).compacted).toBe(true);
    expect((await compactIfNeeded(deps, b.key, HARD)).compacted).toBe(true);
    expect((await compactIfNeeded(deps, a2.key, HARD)).compacted).toBe(true);

    // The fake reports 10 input and 5 output tokens a call.
    expect(await store.getUsage("t-meter-a", DAY)).toEqual({ day: DAY, tokens: 30, calls: 2, inputTokens: 20, outputTokens: 10 });
    expect(await store.getUsage("t-meter-b", DAY)).toEqual({ day: DAY, tokens: 15, calls: 1, inputTokens: 10, outputTokens: 5 });
    expect(metrics.modelUse).toEqual([
      { tenantId: "t-meter-a", purpose: "summary", calls: 1, inputTokens: 10, outputTokens: 5 },
      { tenantId: "t-meter-b", purpose: "summary", calls: 1, inputTokens: 10, outputTokens: 5 },
      { tenantId: "t-meter-a", purpose: "summary", calls: 1, inputTokens: 10, outputTokens: 5 },
    ]);
  });

  it("counts the service's chars/4 estimate for a summarizer that reports no usage", async () => {
    const fake = createFakeSummarizer();
    fake.script = [async (input: SummarizeInput) => ({ ok: true, summary: `folded ${input.messages.length}` })];
    const { deps } = harness({ fake });
    const { key } = await process(deps, "t-meter-est", 14, facts);
    expect((await compactIfNeeded(deps, key, HARD)).compacted).toBe(true);
    const usage = await store.getUsage("t-meter-est", DAY);
    expect(usage).toMatchObject({ calls: 1, outputTokens: 2 }); // "folded 9": 8 chars
    expect(usage.inputTokens).toBeGreaterThan(100);
    expect(usage.tokens).toBe(usage.inputTokens + usage.outputTokens);
  });
});

describe("the tenant's daily budget", () => {
  it("refuses a fold over the budget: reason budget_exceeded, no summarizer call, nothing written, counted", async () => {
    const { deps, fake, metrics } = harness();
    await store.putTenantBudget("t-over", 1000, clock.now().toISOString());
    await store.addUsage("t-over", DAY, { tokens: 990 });
    const { key } = await process(deps, "t-over", 14, facts);
    const before = await activeIds(key);

    const result = await compactIfNeeded(deps, key, HARD);
    expect(result).toMatchObject({ compacted: false, reason: BUDGET_EXCEEDED });
    expect(result.budget).toMatchObject({ dailyTokens: 1000, usedTokens: 990, day: DAY, resetsAt: "2026-03-02T00:00:00.000Z" });
    expect(fake.calls).toHaveLength(0);
    expect(await store.listMemories(key)).toEqual([]);
    expect(await activeIds(key)).toEqual(before);
    expect((await store.getUsage("t-over", DAY)).tokens).toBe(990);
    expect(metrics.budgetRefusals).toEqual(["t-over"]);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);

    // A manual compaction throws the 429.
    await expect(compactManually(deps, key, HARD)).rejects.toMatchObject({ kind: "too_many_requests", code: "budget.exceeded" });
    // Another tenant is not affected.
    const other = await process(deps, "t-under", 14, facts);
    expect((await compactIfNeeded(deps, other.key, HARD)).compacted).toBe(true);
  });

  it("lets exactly one of two concurrent folds near the budget run: the reservation is one conditional ADD", async () => {
    const fake = createFakeSummarizer();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    fake.script = [
      async () => {
        await gate;
        return { ok: true, summary: "first fold", usage: { inputTokens: 10, outputTokens: 5 } };
      },
    ];
    const env = { SUMMARY_WINDOW_SHARE: "0" };
    const a = harness({ env, fake });
    const b = harness({ env, fake }); // a second container over the same table and tenant
    const one = await process(a.deps, "t-near", 14, facts);
    const two = await process(a.deps, "t-near", 14, facts);
    // Each fold reserves about 6,000 tokens (two calls' reserve of 1,500 + 3 x 400, and its input at
    // 3 chars a token): 8,000 left holds one reservation, not two.
    await store.putTenantBudget("t-near", 20_000, clock.now().toISOString());
    await store.addUsage("t-near", DAY, { tokens: 12_000 });

    const runs = [compactIfNeeded(a.deps, one.key, HARD), compactIfNeeded(b.deps, two.key, HARD)];
    // The refused fold answers while the admitted one waits in the summarizer.
    const refused = await Promise.race(runs);
    expect(refused).toMatchObject({ compacted: false, reason: BUDGET_EXCEEDED });
    expect(fake.calls).toHaveLength(1);
    const held = await store.getUsage("t-near", DAY);
    expect(held.tokens).toBeGreaterThan(12_000 + 5_000);
    expect(held.tokens).toBeLessThanOrEqual(20_000);
    release();
    const results = await Promise.all(runs);
    expect(results.filter((r) => r.compacted)).toHaveLength(1);
    expect(results.filter((r) => r.reason === BUDGET_EXCEEDED)).toHaveLength(1);
    // Once it ran, the reservation is corrected to what the call used.
    expect(await store.getUsage("t-near", DAY)).toEqual({ day: DAY, tokens: 12_015, calls: 1, inputTokens: 10, outputTokens: 5 });
    for (const key of [one.key, two.key]) expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("a background turn over the budget answers with the reason, queues nothing and trims its answer below the emergency threshold", async () => {
    const { deps, fake } = harness();
    await store.putTenantBudget("t-turn", 100, clock.now().toISOString());
    await store.addUsage("t-turn", DAY, { tokens: 100 });
    const { key } = await process(deps, "t-turn", 30, facts);
    const turn = await runTurn(deps, key, {
      message: { role: "USER", content: "Where does shelf 3 go?" },
      model: { contextWindow: 2_000 },
      prompt: { tokens: 1_990 },
    });
    expect(turn.compaction).toMatchObject({ mode: "EMERGENCY", compacted: false, reason: BUDGET_EXCEEDED });
    expect(turn.compaction.trimmed!.messages).toBeGreaterThan(0);
    expect(turn.compaction).not.toHaveProperty("budget");
    expect(turn.messages.length).toBe(31 - turn.compaction.trimmed!.messages);
    expect(turn.messages.at(-1)!.content).toBe("Where does shelf 3 go?");
    expect(fake.calls).toHaveLength(0);
    expect((await settledView(deps, key)).folds).toEqual([]);
  });

  it("an inline turn over the budget answers the same way", async () => {
    const { deps, fake } = harness({ env: { COMPACTION_EXECUTION: "inline" } });
    await store.putTenantBudget("t-inline", 100, clock.now().toISOString());
    await store.addUsage("t-inline", DAY, { tokens: 100 });
    const { key } = await process(deps, "t-inline", 30, facts);
    const turn = await runTurn(deps, key, { model: { contextWindow: 2_000 }, prompt: { tokens: 1_990 } });
    expect(turn.compaction).toMatchObject({ mode: "EMERGENCY", compacted: false, reason: BUDGET_EXCEEDED });
    expect(turn.compaction).not.toHaveProperty("budget");
    expect(turn.compaction.trimmed!.messages).toBeGreaterThan(0);
    expect(turn.messages.length).toBe(30 - turn.compaction.trimmed!.messages);
    expect(fake.calls).toHaveLength(0);
    expect(await store.listMemories(key)).toEqual([]);
  });

  it("the worker drops a queued job over the budget with a readable reason instead of failing the delivery", async () => {
    const { deps, fake } = harness();
    const { key, messages } = await process(deps, "t-worker", 14, facts);
    const view = await settledView(deps, key);
    const prepare = await queueFold(deps, key, view, { mode: "HARD", job: "prepare", contextWindow: WINDOW, tokensBefore: 90_000 });
    const manual = await queueFold(deps, key, view, { mode: "HARD", job: "manual", contextWindow: WINDOW, tokensBefore: 90_000, forced: true });
    const range = { from: messages[0]!.createdAt, to: messages[5]!.createdAt, topicLabel: "shelves", inboxItemId: "inbox-w" };
    const rangeJob = await queueFold(deps, key, view, { mode: "RANGE", job: "range", range });
    // The budget is used up after they were queued.
    await store.putTenantBudget("t-worker", 50, clock.now().toISOString());
    await store.addUsage("t-worker", DAY, { tokens: 50 });
    const detail = (fold: { id: string }, job: "prepare" | "manual" | "range", mode: "HARD" | "RANGE") => ({ tenantId: "t-worker", processId: key.processId, foldId: fold.id, job, mode });

    await expect(runQueuedFold(deps, detail(prepare, "prepare", "HARD"))).resolves.toEqual({ skipped: "budget_exceeded", foldId: prepare.id });
    await expect(runQueuedFold(deps, detail(manual, "manual", "HARD"))).resolves.toEqual({ done: "failed", foldId: manual.id });
    await expect(runQueuedFold(deps, detail(rangeJob, "range", "RANGE"))).resolves.toEqual({ done: "failed", foldId: rangeJob.id });
    for (const job of [prepare, manual, rangeJob]) {
      const row = (await store.getMemory(key, job.id))!;
      expect(row.status).toBe("DISCARDED");
      expect(row.metadata.discardReason).toMatch(/^budget_exceeded: 50 of the tenant's 50 tokens for 2026-03-01 \(UTC\) used, the fold needs up to \d+$/);
    }
    expect(fake.calls).toHaveLength(0);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("an unlimited tenant budget overrides a deployment default, and a removed one falls back to it", async () => {
    const { deps, fake } = harness({ env: { TENANT_DAILY_TOKEN_BUDGET: "10" } });
    const { key } = await process(deps, "t-default", 14, facts);
    expect((await compactIfNeeded(deps, key, HARD)).reason).toBe(BUDGET_EXCEEDED);
    await store.putTenantBudget("t-default", "unlimited", clock.now().toISOString());
    const fresh = harness({ env: { TENANT_DAILY_TOKEN_BUDGET: "10" }, fake }); // a container that has not cached the old budget
    expect((await compactIfNeeded(fresh.deps, key, HARD)).compacted).toBe(true);
    await store.putTenantBudget("t-default", null, clock.now().toISOString());
    expect(await store.getTenantBudget("t-default")).toBeNull();
    const again = harness({ env: { TENANT_DAILY_TOKEN_BUDGET: "10" }, fake });
    const next = await process(deps, "t-default", 14, facts);
    expect((await compactIfNeeded(again.deps, next.key, HARD)).reason).toBe(BUDGET_EXCEEDED);
  });
});
