/**
 * Settings mean what they say: a tenant's or project's summary budget reaches the summarizer,
 * summaryMaxTokens is a maximum at every window,
 * settings that cannot work with the summarizer are refused when stored, a turn whose compaction
 * cannot run still answers 200 with a reason, and the SOFT wait is the softMinFoldTokens tunable.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerTokenLimit } from "../../core/domain/summary-prompt.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { chatCompletionBody, startLlmWireServer } from "../../tools/llm-wire-server.js";
import { serviceBeside } from "../support/service-beside.js";
import { startTestService } from "../support/service.js";

type Service = Awaited<ReturnType<typeof startTestService>>;

async function seed(api: Service["api"], id: string, projectId: string, count = 14) {
  await api("PUT", `/v1/processes/${id}`, { body: { projectId } });
  for (let i = 0; i < count; i++) {
    await api("POST", `/v1/processes/${id}/messages`, { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `turn ${i}: Ana plans a trip to Lisbon on 3 May` } });
  }
}
const hard = (api: Service["api"], id: string) =>
  api("POST", `/v1/processes/${id}/compaction`, { body: { model: { name: "gpt-4o" }, force: "HARD" } });

describe("the summary budget of a tenant or project reaches the summarizer", () => {
  // The fixed budget alone: the window share is the next describe's subject.
  const stack = serviceBeside(
    () => startLlmWireServer(),
    (url) => ({ SUMMARIZER: "openai", OPENAI_BASE_URL: `${url}/v1`, SUMMARY_MAX_TOKENS: "300", SUMMARY_WINDOW_SHARE: "0" }),
  );

  it("sends each process the budget of its own layer: project, else tenant, else the environment", async () => {
    stack.provider.setFallback({ body: chatCompletionBody("<analysis>x</analysis>\n<summary>Ana booked Lisbon for 3 May.</summary>") });
    expect((await stack.ctx.api("PUT", "/v1/settings?projectId=small", { body: { summaryMaxTokens: 120 } })).status).toBe(200);
    const budgets: Record<string, number> = {};
    for (const [id, projectId] of [["env-proc", "other"], ["proj-proc", "small"]] as const) {
      await seed(stack.ctx.api, id, projectId);
      stack.provider.reset();
      stack.provider.setFallback({ body: chatCompletionBody("<analysis>x</analysis>\n<summary>Ana booked Lisbon for 3 May.</summary>") });
      expect((await hard(stack.ctx.api, id)).body.compacted).toBe(true);
      const body = stack.provider.requests[0]!.body;
      budgets[id] = body.max_tokens;
      expect(body.messages[0].content).toContain(`within ${projectId === "small" ? 120 : 300} tokens`);
    }
    expect(budgets).toEqual({ "env-proc": answerTokenLimit(300), "proj-proc": answerTokenLimit(120) });

    // A tenant setting then applies to every project without its own.
    expect((await stack.ctx.api("PUT", "/v1/settings", { body: { summaryMaxTokens: 200 } })).status).toBe(200);
    await seed(stack.ctx.api, "tenant-proc", "third");
    stack.provider.reset();
    stack.provider.setFallback({ body: chatCompletionBody("<analysis>x</analysis>\n<summary>Ana booked Lisbon for 3 May.</summary>") });
    expect((await hard(stack.ctx.api, "tenant-proc")).body.compacted).toBe(true);
    expect(stack.provider.requests[0]!.body.max_tokens).toBe(answerTokenLimit(200));
  });
});

describe("summaryWindowShare grows a fold's summary budget with the model's window", () => {
  // The default share (0.2) over a 300-token minimum; the summarizer's own window is 16k.
  const stack = serviceBeside(
    () => startLlmWireServer(),
    (url) => ({ SUMMARIZER: "openai", OPENAI_BASE_URL: `${url}/v1`, SUMMARY_MIN_TOKENS: "300", SUMMARIZER_CONTEXT_WINDOW: "16384" }),
  );

  /** The budget a forced HARD fold for `contextWindow` asks the summarizer for. */
  async function budgetAt(id: string, projectId: string, contextWindow: number) {
    await seed(stack.ctx.api, id, projectId);
    stack.provider.reset();
    stack.provider.setFallback({ body: chatCompletionBody("<analysis>x</analysis>\n<summary>Ana booked Lisbon for 3 May.</summary>") });
    const res = await stack.ctx.api("POST", `/v1/processes/${id}/compaction`, { body: { model: { contextWindow }, force: "HARD" } });
    expect(res.body.compacted).toBe(true);
    const body = stack.provider.requests[0]!.body;
    const asked = Number(/within (\d+) tokens/.exec(body.messages[0].content)?.[1]);
    expect(body.max_tokens).toBe(answerTokenLimit(asked));
    return asked;
  }

  it("asks for the share of the window, never less than summaryMinTokens, never more than the summarizer can spare", async () => {
    expect(await budgetAt("w1k", "a", 1_000)).toBe(300); // 200 < the minimum
    expect(await budgetAt("w8k", "a", 8_000)).toBe(1_600);
    // 12,800, but growth leaves a 16k summarizer half its window for the messages: (8192 - 1500) / 3.
    expect(await budgetAt("w128k", "a", 128_000)).toBe(2_230);
  });

  it("never asks for more than a project's summaryMaxTokens, whatever the window", async () => {
    expect((await stack.ctx.api("PUT", "/v1/settings?projectId=capped", { body: { summaryMaxTokens: 120 } })).status).toBe(200);
    expect(await budgetAt("cap128k", "capped", 128_000)).toBe(120);
    expect((await stack.ctx.api("PUT", "/v1/settings?projectId=ranged", { body: { summaryMaxTokens: 1_000 } })).status).toBe(200);
    expect(await budgetAt("ranged4k", "ranged", 4_000)).toBe(800);
    expect(await budgetAt("ranged128k", "ranged", 128_000)).toBe(1_000);
    const bad = await stack.ctx.api("PUT", "/v1/settings?projectId=ranged", { body: { summaryMinTokens: 1_500, summaryMaxTokens: 1_000 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toEqual(["summaryMinTokens"]);
    expect((await stack.ctx.api("GET", "/v1/settings?projectId=ranged")).body.overrides).toEqual({ summaryMaxTokens: 1_000 });
  });

  it("is a setting like the others: 0 keeps the fixed budget, a bad value is a 400 naming it", async () => {
    expect((await stack.ctx.api("PUT", "/v1/settings?projectId=fixed", { body: { summaryWindowShare: 0 } })).status).toBe(200);
    expect(await budgetAt("fixed8k", "fixed", 8_000)).toBe(300);
    const bad = await stack.ctx.api("PUT", "/v1/settings", { body: { summaryWindowShare: 0.9 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toEqual(["body.summaryWindowShare"]);
    expect((await stack.ctx.api("GET", "/v1/settings")).body.overrides).toEqual({});
  });
});

describe("settings checked against the configured summarizer", () => {
  // An 8k window: summaryMinTokens fits up to 2119; one call takes <= 16,476 chars at 400 (11,076 at 1000).
  const fake = createFakeSummarizer({ contextWindow: 8192 });
  let ctx: Service;
  beforeAll(async () => {
    // A turn that compacts in the request (the inline execution mode).
    ctx = await startTestService({ overrides: { summarizer: async () => fake }, env: { COMPACTION_EXECUTION: "inline" } });
  });
  afterAll(async () => ctx?.service.stop());

  it("refuses a summaryMinTokens or maxSourceChars the summarizer's window cannot hold with a 400 naming it, storing nothing", async () => {
    const { api } = ctx;
    for (const [body, field, limit] of [
      [{ summaryMinTokens: 2500 }, "summaryMinTokens", "2119"],
      [{ maxSourceChars: 60_000 }, "maxSourceChars", "16476"],
      [{ summaryMinTokens: 1000, maxSourceChars: 12_000 }, "maxSourceChars", "11076"],
    ] as const) {
      for (const query of ["", "?projectId=p1"]) {
        const res = await api("PUT", `/v1/settings${query}`, { body });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("tunables.invalid");
        expect(res.body.error.details.fields).toEqual([field]);
        expect(res.body.error.message).toContain(limit);
        expect(res.body.error.message).toContain("window 8192");
      }
    }
    expect((await api("GET", "/v1/settings")).body.overrides).toEqual({});
    expect((await api("GET", "/v1/settings?projectId=p1")).body.overrides).toEqual({});

    // What fits is stored (at least 8,000 chars: the tenant floor of maxSourceChars).
    const ok = await api("PUT", "/v1/settings?projectId=p1", { body: { summaryMinTokens: 1000, maxSourceChars: 11_076 } });
    expect(ok.status).toBe(200);
    expect(ok.body.effective).toMatchObject({ summaryMinTokens: 1000, maxSourceChars: 11_076 });
    expect((await api("PUT", "/v1/settings?projectId=p1", { body: { summaryMinTokens: 2119 } })).status).toBe(200);
    // The maximum needs no room of its own: a grown budget stops at half the summarizer's window.
    expect((await api("PUT", "/v1/settings?projectId=p1", { body: { summaryMaxTokens: 4000 } })).status).toBe(200);
  });

  it("a turn whose compaction cannot run answers 200 with compaction.reason, its message stored once", async () => {
    const { api } = ctx;
    await seed(api, "small-window", "p2");
    const turn = () =>
      api("POST", "/v1/processes/small-window/turns", {
        body: { message: { role: "USER", content: "What is left to book?" }, model: { contextWindow: 10_000 }, prompt: { tokens: 9_000 } },
      });

    (fake as { contextWindow: number }).contextWindow = 2048; // the deployment changed to a summarizer too small for these settings
    try {
      const res = await turn();
      expect(res.status).toBe(200);
      expect(res.body.compaction).toMatchObject({ mode: "HARD", compacted: false });
      expect(res.body.compaction.reason).toMatch(/^summarizer_window_too_small: /);
      expect(res.body.messages.filter((m: any) => m.content === "What is left to book?")).toHaveLength(1);
      expect(fake.calls).toHaveLength(0);
      // Nothing else was written: no FAILED row, no lease left behind.
      expect((await api("GET", "/v1/processes/small-window/memories?includeFailed=true")).body.items).toEqual([]);
    } finally {
      (fake as { contextWindow: number }).contextWindow = 8192;
    }
    const again = await turn();
    expect(again.body.compaction).toMatchObject({ mode: "HARD", compacted: true });
  });

  it("a summarizer that cannot be built is a reason too, not an error after the append", async () => {
    const broken = await startTestService({
      overrides: { summarizer: () => Promise.reject(new Error("SUMMARIZER=openai needs OPENAI_API_KEY")) },
      env: { COMPACTION_EXECUTION: "inline" },
    });
    try {
      await seed(broken.api, "no-summarizer", "p");
      const res = await broken.api("POST", "/v1/processes/no-summarizer/turns", {
        body: { message: { role: "USER", content: "hello again" }, model: { contextWindow: 10_000 }, prompt: { tokens: 9_000 } },
      });
      expect(res.status).toBe(200);
      expect(res.body.compaction).toMatchObject({ compacted: false, reason: "summarizer_unavailable" });
      expect(res.body.messages.at(-1).content).toBe("hello again");
    } finally {
      await broken.service.stop();
    }
  });
});

describe("softMinFoldTokens: the SOFT wait", () => {
  // SOFT folds weak messages (acknowledgements) outside the soft anchor of 10: here 6 short ones.
  async function softProcess(api: Service["api"], id: string, projectId: string) {
    await api("PUT", `/v1/processes/${id}`, { body: { projectId } });
    await api("POST", `/v1/processes/${id}/messages`, { body: { role: "USER", content: "Plan the Lisbon offsite for 3 May." } });
    for (const ack of ["ok", "thanks", "got it", "great", "sounds good", "perfect"]) {
      await api("POST", `/v1/processes/${id}/messages`, { body: { role: "USER", content: ack } });
    }
    for (let i = 0; i < 10; i++) {
      await api("POST", `/v1/processes/${id}/messages`, { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `detail ${i} of the offsite plan` } });
    }
  }
  const soft = (api: Service["api"], id: string) =>
    api("POST", `/v1/processes/${id}/compaction`, { body: { model: { contextWindow: 10_000 }, prompt: { tokens: 5_000 } } });

  it("waits by default, folds at 0 from a project or tenant setting, and from the environment", async () => {
    const ctx = await startTestService();
    try {
      await softProcess(ctx.api, "soft-default", "a");
      expect((await soft(ctx.api, "soft-default")).body).toMatchObject({ mode: "SOFT", compacted: false, reason: "below_min_saving" });

      expect((await ctx.api("PUT", "/v1/settings?projectId=b", { body: { softMinFoldTokens: 0 } })).status).toBe(200);
      await softProcess(ctx.api, "soft-project", "b");
      expect((await soft(ctx.api, "soft-project")).body).toMatchObject({ mode: "SOFT", compacted: true, compactedMessages: 6 });

      // A project may ask for a wait above the tenant's 0, too.
      expect((await ctx.api("PUT", "/v1/settings", { body: { softMinFoldTokens: 0 } })).status).toBe(200);
      expect((await ctx.api("PUT", "/v1/settings?projectId=c", { body: { softMinFoldTokens: 5 } })).status).toBe(200);
      await softProcess(ctx.api, "soft-tenant", "a");
      await softProcess(ctx.api, "soft-waits", "c");
      expect((await soft(ctx.api, "soft-tenant")).body).toMatchObject({ compacted: true, compactedMessages: 6 });
      expect((await soft(ctx.api, "soft-waits")).body).toMatchObject({ compacted: true });

      const bad = await ctx.api("PUT", "/v1/settings", { body: { softMinFoldTokens: -1 } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.fields).toEqual(["body.softMinFoldTokens"]);
    } finally {
      await ctx.service.stop();
    }
    const fromEnv = await startTestService({ env: { COMPACTION_SOFT_MIN_FOLD_TOKENS: "0" } });
    try {
      await softProcess(fromEnv.api, "soft-env", "a");
      expect((await soft(fromEnv.api, "soft-env")).body).toMatchObject({ mode: "SOFT", compacted: true, compactedMessages: 6 });
      expect((await fromEnv.api("GET", "/v1/settings")).body.effective.softMinFoldTokens).toBe(0);
    } finally {
      await fromEnv.service.stop();
    }
  });
});
