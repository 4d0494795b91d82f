/**
 * The strength analyzer against DynamoDB Local: the side channel on append, the inline rating
 * before a HARD fold (offline, and through both SDK adapters against the local wire server, inline
 * and in the background worker), bad model answers, and that a caller's rating always wins, also
 * when it lands between the analyzer's read and its write.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicSummarizer } from "../../core/adapters/llm/anthropic-summarizer.js";
import { createOfflineSummarizer } from "../../core/adapters/llm/offline-summarizer.js";
import { createOpenAISummarizer } from "../../core/adapters/llm/openai-summarizer.js";
import type { Message, Role } from "../../core/domain/model.js";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { compactIfNeeded } from "../../core/services/compaction/compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { appendMessage, setMessageStrength } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { checkInvariants } from "../../tools/invariants.js";
import {
  anthropicMessageBody,
  chatCompletionBody,
  startLlmWireServer,
  type LlmWireServer,
  type RecordedRequest,
} from "../../tools/llm-wire-server.js";
import { testContainer } from "../support/container.js";

const TENANT = "strength";
const OFFLINE = ["STRENGTH_BY:offline-analyzer"];
let store: Store;
let server: LlmWireServer;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("strength"));
  server = await startLlmWireServer();
});
afterAll(async () => server?.close());

function harness(options: { env?: Record<string, string>; summarizer?: Summarizer; store?: Store; worker?: boolean; workerWaits?: () => Promise<void> } = {}) {
  return testContainer({
    store: options.store ?? store,
    env: { COMPACTION_EXECUTION: "inline", ...options.env },
    summarizer: options.summarizer ?? createOfflineSummarizer(),
    retryDelaysMs: [50],
    worker: options.worker,
    workerWaits: options.workerWaits,
  });
}

async function newProcess(deps: ServiceDeps, projectId = "proj"): Promise<ProcessKey> {
  const key = { tenantId: TENANT, processId: `s-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId });
  return key;
}

const say = async (deps: ServiceDeps, key: ProcessKey, role: Role, content: string, tags?: string[]) =>
  (await appendMessage(deps, key, { role, content, ...(tags ? { tags } : {}) })).message;

/** Seeds a history a HARD fold works on: a decision, an ack, chatter, a caller-rated decision, a tool call, a tail. */
async function seed(deps: ServiceDeps) {
  const key = await newProcess(deps);
  const task = await say(deps, key, "USER", "Plan the product launch with me.");
  const decision = await say(deps, key, "ASSISTANT", "Decision: the launch moves to 14 June 2025, budget $12,000.");
  const ack = await say(deps, key, "USER", "ok thanks!");
  const chatter: Message[] = [];
  for (let i = 0; i < 6; i++) chatter.push(await say(deps, key, i % 2 ? "USER" : "ASSISTANT", `We chatted about the weather and the garden, part ${i}.`));
  const callerWeak = await say(deps, key, "ASSISTANT", "Decision: archive the old logs on 3 March 2025.", ["STRENGTH:weak"]);
  const call = (await appendMessage(deps, key, { role: "ASSISTANT", content: "", toolCalls: [{ id: "c1", name: "calendar", arguments: "{}" }] })).message;
  const result = (await appendMessage(deps, key, { role: "TOOL", content: "calendar is free in June", toolCallId: "c1" })).message;
  for (let i = 0; i < 6; i++) await say(deps, key, i % 2 ? "ASSISTANT" : "USER", `Recent note ${i} stays.`);
  return { key, task, decision, ack, chatter, callerWeak, call, result };
}

const hard = { model: { contextWindow: 10_000 }, prompt: { tokens: 8_700 } };
const byId = async (key: ProcessKey, id: string) => (await store.getMessage(key, id))!;

describe("the side channel (sideChannelEnabled)", () => {
  it("is off by default: appended messages keep exactly the caller's tags", async () => {
    const { deps } = harness();
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Plan the launch.");
    const m = await say(deps, key, "ASSISTANT", "Decision: the launch moves to 14 June 2025.");
    expect(m.tags).toEqual([]);
    expect((await byId(key, m.id)).tags).toEqual([]);
  });

  it("rates unrated messages in the append itself, on the append route and in a turn, and leaves caller tags, auto-pin and tool messages alone", async () => {
    const { deps } = harness();
    const key = await newProcess(deps, "side-channel");
    await deps.tunables.save(TENANT, "side-channel", { sideChannelEnabled: true }, new Date().toISOString());
    const task = await say(deps, key, "USER", "ok");
    const decision = await say(deps, key, "ASSISTANT", "Decision: the launch moves to 14 June 2025.");
    const ack = await say(deps, key, "USER", "Thanks, got it!");
    const plain = await say(deps, key, "ASSISTANT", "The garden looks lovely this time of year.");
    const caller = await say(deps, key, "ASSISTANT", "Decision: keep the old logo.", ["STRENGTH:normal", "MODE:plan"]);
    const tool = (await appendMessage(deps, key, { role: "TOOL", content: "Decision: none", toolCallId: "x" })).message;
    const turn = await runTurn(deps, key, { message: { role: "USER", content: "You must not exceed $5,000." }, model: { contextWindow: 100_000 } });
    const viaTurn = turn.messages.at(-1)!;

    expect((await byId(key, task.id)).tags).toEqual(["STRENGTH:pinned"]); // auto-pin first, no analyzer mark
    expect((await byId(key, decision.id)).tags).toEqual(["STRENGTH:strong", ...OFFLINE]);
    expect((await byId(key, ack.id)).tags).toEqual(["STRENGTH:weak", ...OFFLINE]);
    expect((await byId(key, plain.id)).tags).toEqual(["STRENGTH:normal", ...OFFLINE]);
    expect((await byId(key, caller.id)).tags).toEqual(["STRENGTH:normal", "MODE:plan"]);
    expect((await byId(key, tool.id)).tags).toEqual([]);
    expect(viaTurn.content).toContain("$5,000");
    expect((await byId(key, viaTurn.id)).tags).toEqual(["STRENGTH:strong", ...OFFLINE]);
  });

  it("rates every one of many concurrent appends once, with caller tags untouched", async () => {
    const { deps } = harness({ env: { STRENGTH_SIDE_CHANNEL_ENABLED: "true" } });
    const key = await newProcess(deps);
    await say(deps, key, "USER", "Start."); // the auto-pin is taken before the burst
    const bodies = Array.from({ length: 24 }, (_, i) =>
      i % 4 === 0
        ? { role: "ASSISTANT" as const, content: `Decision: batch ${i} ships on 3 May 2025.` }
        : i % 4 === 1
          ? { role: "USER" as const, content: "ok thanks" }
          : i % 4 === 2
            ? { role: "ASSISTANT" as const, content: `Decision: batch ${i} is cancelled on 4 May 2025.`, tags: ["STRENGTH:weak"] }
            : { role: "TOOL" as const, content: `result ${i}`, toolCallId: `call-${i}` },
    );
    const appended = await Promise.all(bodies.map((body) => appendMessage(deps, key, body)));
    const stored = await Promise.all(appended.map(({ message }) => byId(key, message.id)));
    const expected = [["STRENGTH:strong", ...OFFLINE], ["STRENGTH:weak", ...OFFLINE], ["STRENGTH:weak"], []];
    stored.forEach((m, i) => expect(m.tags, m.content).toEqual(expected[i % 4]));
  });
});

describe("before a HARD fold (inlineOnCompaction), offline", () => {
  it("without it, an unrated decision folds like any normal message", async () => {
    const { deps } = harness();
    const { key, decision } = await seed(deps);
    const result = await compactIfNeeded(deps, key, hard);
    expect(result).toMatchObject({ mode: "HARD", compacted: true });
    expect((await byId(key, decision.id)).archivedInMemoryId).toBe(result.memoryId);
    expect((await store.getMemory(key, result.memoryId!))!.metadata.strengthAnalyzer).toBeUndefined();
  });

  it("rates the unrated messages first: the decision stays, the caller's weak rating folds, the cost is counted", async () => {
    const { deps, metrics } = harness({ env: { STRENGTH_INLINE_ON_COMPACTION: "true" } });
    const { key, task, decision, ack, chatter, callerWeak, call, result: toolResult } = await seed(deps);

    const result = await compactIfNeeded(deps, key, hard);

    expect(result).toMatchObject({ mode: "HARD", compacted: true });
    const kept = await byId(key, decision.id);
    expect(kept).toMatchObject({ archivedInMemoryId: null, tags: ["STRENGTH:strong", ...OFFLINE] });
    expect((await byId(key, task.id)).tags).toEqual(["STRENGTH:pinned"]);
    expect(await byId(key, ack.id)).toMatchObject({ archivedInMemoryId: result.memoryId, tags: ["STRENGTH:weak", ...OFFLINE] });
    expect(await byId(key, chatter[0]!.id)).toMatchObject({ archivedInMemoryId: result.memoryId, tags: ["STRENGTH:normal", ...OFFLINE] });
    expect(await byId(key, callerWeak.id)).toMatchObject({ archivedInMemoryId: result.memoryId, tags: ["STRENGTH:weak"] });
    expect((await byId(key, call.id)).tags).toEqual([]);
    expect((await byId(key, toolResult.id)).tags).toEqual([]);
    const rated = 1 + 1 + chatter.length + 1; // decision, ack, chatter, the oldest recent note outside the anchor
    const memory = (await store.getMemory(key, result.memoryId!))!;
    expect(memory.metadata.strengthAnalyzer).toEqual({ analyzer: "offline", tagged: rated });
    expect(metrics.strength).toEqual([{ analyzer: "offline", tagged: rated }]);
    expect(await checkInvariants(store, key, { settled: true, noLease: true })).toEqual([]);
  });

  it("does not run before SOFT or EMERGENCY folds", async () => {
    const { deps, metrics } = harness({ env: { STRENGTH_INLINE_ON_COMPACTION: "true" } });
    const { key, decision } = await seed(deps);
    const result = await compactIfNeeded(deps, key, { ...hard, force: "EMERGENCY" });
    expect(result.compacted).toBe(true);
    expect((await byId(key, decision.id)).tags).toEqual([]);
    expect(metrics.strength).toEqual([]);
  });

  it("never overrides a caller's PATCH that lands between the analyzer's read and its write", async () => {
    const target: { id?: string } = {};
    let deps!: ServiceDeps;
    const racing: Store = {
      ...store,
      async retagMessage(key, messageId, change) {
        if (messageId === target.id) {
          await setMessageStrength(deps, key, messageId, "weak");
        }
        return store.retagMessage(key, messageId, change);
      },
    };
    ({ deps } = harness({ env: { STRENGTH_INLINE_ON_COMPACTION: "true" }, store: racing }));
    const { key, decision, ack } = await seed(deps);
    target.id = decision.id;

    const result = await compactIfNeeded(deps, key, hard);

    // The caller's rating stands, without the analyzer's mark; the PATCH moved the version, so
    // the fold that read the old state is refused and the next one selects with the caller's rating.
    expect((await byId(key, decision.id)).tags).toEqual(["STRENGTH:weak"]);
    expect((await byId(key, ack.id)).tags).toEqual(["STRENGTH:weak", ...OFFLINE]);
    expect(result.compacted).toBe(false);
    const next = await compactIfNeeded(deps, key, hard);
    expect(next.compacted).toBe(true);
    expect(await byId(key, decision.id)).toMatchObject({ archivedInMemoryId: next.memoryId, tags: ["STRENGTH:weak"] });
  });

  it("a caller's later PATCH replaces the analyzer's rating and its mark", async () => {
    const { deps } = harness({ env: { STRENGTH_SIDE_CHANNEL_ENABLED: "true" } });
    const key = await newProcess(deps);
    const m = await say(deps, key, "ASSISTANT", "Decision: the launch moves to 14 June 2025.");
    expect(m.tags).toEqual(["STRENGTH:strong", ...OFFLINE]);
    const patched = await setMessageStrength(deps, key, m.id, "strong");
    expect(patched.tags).toEqual(["STRENGTH:strong"]);
    expect((await byId(key, m.id)).tags).toEqual(["STRENGTH:strong"]);
  });
});

const ADAPTERS = {
  openai: {
    make: () => createOpenAISummarizer({ baseURL: `${server.url}/v1`, apiKey: "test", retry: { maxAttempts: 1 } }),
    body: (text: string) => ({ body: chatCompletionBody(text, { promptTokens: 321, completionTokens: 12 }) }),
    system: (r: RecordedRequest) => String(r.body.messages[0].content),
    user: (r: RecordedRequest) => String(r.body.messages[1].content),
  },
  anthropic: {
    make: () => createAnthropicSummarizer({ baseURL: server.url, apiKey: "test", retry: { maxAttempts: 1 } }),
    body: (text: string) => ({ body: anthropicMessageBody(text, { inputTokens: 321, outputTokens: 12 }) }),
    system: (r: RecordedRequest) => String(r.body.system),
    user: (r: RecordedRequest) => String(r.body.messages[0].content),
  },
} as const;

const isRating = (system: string) => system.startsWith("You rate chat messages");
const SUMMARY = "<summary>- Earlier chatter about the launch. [#1]</summary>";

/** Rates by content: the decision strong, the ack weak, the rest normal. */
function ratingsFor(user: string): string {
  return [...user.matchAll(/^#(\d+) \w+: (.*)$/gm)]
    .map(([, n, text]) => `#${n} ${/Decision/.test(text!) ? "strong" : /thanks/.test(text!) ? "weak" : "normal"}`)
    .join("\n");
}

describe.each(Object.keys(ADAPTERS) as Array<keyof typeof ADAPTERS>)("the model analyzer through the %s adapter", (name) => {
  const adapter = ADAPTERS[name];
  const scripted = (rating: (user: string) => { status?: number; body: unknown }) => {
    server.reset();
    server.setFallback((r) => (isRating(adapter.system(r)) ? rating(adapter.user(r)) : adapter.body(SUMMARY)));
  };

  it("rates the fold's unrated messages in one batched call before summarizing, and counts its tokens", async () => {
    const { deps, metrics } = harness({ env: { STRENGTH_INLINE_ON_COMPACTION: "true" }, summarizer: adapter.make() });
    const { key, decision, ack, chatter, callerWeak } = await seed(deps);
    scripted((user) => adapter.body(ratingsFor(user)));

    const result = await compactIfNeeded(deps, key, hard);

    expect(result.compacted).toBe(true);
    const ratingCalls = server.requests.filter((r) => isRating(adapter.system(r)));
    expect(ratingCalls).toHaveLength(1);
    expect(isRating(adapter.system(server.requests[0]!))).toBe(true); // before the summary
    const sent = adapter.user(ratingCalls[0]!);
    expect(sent).toContain("Decision: the launch moves to 14 June 2025");
    expect(sent).not.toContain("archive the old logs"); // the caller rated it
    expect(sent).not.toContain("calendar is free"); // tool results are not rated
    const MODEL = ["STRENGTH_BY:model-analyzer"];
    expect(await byId(key, decision.id)).toMatchObject({ archivedInMemoryId: null, tags: ["STRENGTH:strong", ...MODEL] });
    expect((await byId(key, ack.id)).tags).toEqual(["STRENGTH:weak", ...MODEL]);
    expect((await byId(key, chatter[1]!.id)).tags).toEqual(["STRENGTH:normal", ...MODEL]);
    expect((await byId(key, callerWeak.id)).tags).toEqual(["STRENGTH:weak"]);
    const usage = { inputTokens: 321, outputTokens: 12 };
    expect((await store.getMemory(key, result.memoryId!))!.metadata.strengthAnalyzer).toEqual({ analyzer: "model", tagged: 3 + chatter.length, usage });
    expect(metrics.strength).toEqual([{ analyzer: "model", tagged: 3 + chatter.length, usage }]);
    // Metered for the tenant as strength work, beside the summary's own calls.
    expect(metrics.modelUse[0]).toEqual({ tenantId: TENANT, purpose: "strength", calls: 1, ...usage });
    expect(metrics.modelUse.slice(1).map((u) => u.purpose)).toEqual(["summary"]);
  });

  it("over the tenant's daily budget makes no rating call and changes no tag", async () => {
    const { deps } = harness({ env: { STRENGTH_INLINE_ON_COMPACTION: "true" }, summarizer: adapter.make() });
    const { key, decision, ack } = await seed(deps);
    scripted((user) => adapter.body(ratingsFor(user)));
    await store.putTenantBudget(TENANT, 1, new Date().toISOString());
    try {
      const result = await compactIfNeeded(deps, key, hard);
      expect(result).toMatchObject({ compacted: false, reason: "budget_exceeded" });
      expect(server.requests).toEqual([]);
      expect((await byId(key, decision.id)).tags).toEqual([]);
      expect((await byId(key, ack.id)).tags).toEqual([]);
    } finally {
      await store.putTenantBudget(TENANT, null, new Date().toISOString());
    }
  });

  it.each([
    ["a refusal", () => adapter.body("I'm sorry, but I can't help with rating these messages."), "answer_unusable"],
    ["ratings out of range", () => adapter.body("#1 strong\n#99 weak"), "answer_unusable"],
    ["an HTTP 500", () => ({ status: 500, body: { error: { message: "boom at llm-gw.corp.internal", type: "server_error" } } }), "provider_unavailable"],
  ])("%s changes no tag; the fold goes on as without the analyzer", async (_, reply, code) => {
    const { deps, metrics } = harness({ env: { STRENGTH_INLINE_ON_COMPACTION: "true" }, summarizer: adapter.make() });
    const { key, decision, ack } = await seed(deps);
    scripted(() => reply());

    const result = await compactIfNeeded(deps, key, hard);

    expect(result.compacted).toBe(true);
    expect(await byId(key, decision.id)).toMatchObject({ archivedInMemoryId: result.memoryId, tags: [] });
    expect((await byId(key, ack.id)).tags).toEqual([]);
    const analysis = (await store.getMemory(key, result.memoryId!))!.metadata.strengthAnalyzer;
    expect(analysis).toMatchObject({ analyzer: "model", tagged: 0 });
    // The code; the provider's or the model's words only in the log (docs/summarizers.md, "Failures").
    expect(analysis?.error).toBe(code);
    expect(metrics.strength).toMatchObject([{ analyzer: "model", tagged: 0 }]);
  });
});

describe("the model analyzer in background mode", () => {
  it("runs in the worker before it prepares the fold; committing the fold calls no model", async () => {
    // The worker is held until the turn has answered: what the model got by then, the turn sent.
    let release!: () => void;
    const turnAnswered = new Promise<void>((r) => (release = r));
    const { deps, bus } = harness({
      env: { COMPACTION_EXECUTION: "background", STRENGTH_INLINE_ON_COMPACTION: "true" },
      summarizer: ADAPTERS.openai.make(),
      worker: true,
      workerWaits: () => turnAnswered,
    });
    const { key, decision, ack } = await seed(deps);
    server.reset();
    server.setFallback((r) => (isRating(ADAPTERS.openai.system(r)) ? ADAPTERS.openai.body(ratingsFor(ADAPTERS.openai.user(r))) : ADAPTERS.openai.body(SUMMARY)));

    const queued = await runTurn(deps, key, { model: { contextWindow: 10_000 }, prompt: { tokens: 7_500 } });
    expect(queued.compaction.reason).toBe("compaction_queued");
    expect(server.requests).toHaveLength(0); // nothing in the turn
    release();
    await bus.drain();
    expect(server.requests.map((r) => isRating(ADAPTERS.openai.system(r)))).toEqual([true, false]);
    const [prepared] = (await store.listMemories(key)).filter((m) => m.status === "PREPARED");
    expect(prepared!.metadata.strengthAnalyzer).toMatchObject({ analyzer: "model", tagged: 9 });
    expect(prepared!.sourceRefs).not.toContain(decision.id);
    expect(prepared!.sourceRefs).toContain(ack.id);

    // The analyzer's writes did not move the version: the prepared fold is still good and commits.
    // The HARD turn asks the worker to commit it (docs/compaction.md, "Who commits a prepared fold").
    const due = await runTurn(deps, key, hard);
    expect(due.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued", memoryId: prepared!.id });
    await bus.drain();
    expect((await store.getMemory(key, prepared!.id))!.status).toBe("OK");
    expect(server.requests).toHaveLength(2);
    expect(await byId(key, decision.id)).toMatchObject({ archivedInMemoryId: null, tags: ["STRENGTH:strong", "STRENGTH_BY:model-analyzer"] });
  });
});
