/**
 * Cost limits per tenant over HTTP (docs/reliability.md, "Limits, budgets and rates"): settings that
 * would multiply summarizer calls stop at the tenant limits, a fold's calls are capped and its
 * merge converges whatever the deployment's settings, and the prompt size and window a caller
 * reports are bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { putSettingsParams } from "../../core/adapters/dynamodb/process-params.js";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { createOfflineSummarizer } from "../../core/adapters/llm/offline-summarizer.js";
import { MAX_CONTEXT_WINDOW, MAX_PROMPT_CHARS } from "../../core/domain/model-windows.js";
import type { Summarizer } from "../../core/ports/summarizer.js";
import { draftMessages, writeMessages } from "../support/seed.js";
import { startTestService } from "../support/service.js";

type Service = Awaited<ReturnType<typeof startTestService>>;

/** The offline summarizer, counting its calls. */
function countingOffline() {
  const inner = createOfflineSummarizer();
  const counter = { calls: 0 };
  const summarizer: Summarizer = {
    provider: inner.provider,
    model: inner.model,
    contextWindow: inner.contextWindow,
    maxOutputTokens: inner.maxOutputTokens,
    summarize: (input) => {
      counter.calls++;
      return inner.summarize(input);
    },
  };
  return { summarizer, counter };
}

/**
 * A process of 65 messages of ~520 chars full of names and numbers (so that the offline summary of
 * one is about as long as the message): a HARD fold takes 60 of them (5 stay as the anchor).
 */
async function seedSixtyFive(ctx: Service, id: string, projectId = "p") {
  expect((await ctx.api("PUT", `/v1/processes/${id}`, { body: { projectId } })).status).toBe(200);
  const key = { tenantId: "tenant-a", processId: id };
  const messages = draftMessages(key, 65, (i) => ({
    role: i % 2 ? "ASSISTANT" : "USER",
    content: Array.from({ length: 8 }, (_, k) => `Ana booked room ${100 * k + i} at Hotel Lisboa ${k} for ${k + 1} May, paying EUR ${200 + i * k}.`).join(" "),
  }));
  await writeMessages(createDocumentClient({ endpoint: ctx.service.dynamoEndpoint }), ctx.service.tableName, key, messages);
}

const forceHard = (ctx: Service, id: string) =>
  ctx.api("POST", `/v1/processes/${id}/compaction`, { body: { model: { name: "gpt-4o" }, force: "HARD" } });

describe("a tenant cannot multiply summarizer calls through its settings", () => {
  const { summarizer, counter } = countingOffline();
  let ctx: Service;
  beforeAll(async () => {
    ctx = await startTestService({ overrides: { summarizer: async () => summarizer } });
  });
  afterAll(async () => ctx?.service.stop());

  it("a fold of 60 messages takes one call with the defaults", async () => {
    await seedSixtyFive(ctx, "defaults");
    counter.calls = 0;
    const res = await forceHard(ctx, "defaults");
    expect(res.body).toMatchObject({ compacted: true, compactedMessages: 60 });
    expect(counter.calls).toBe(1);
  });

  it("refuses maxSourceChars below the tenant floor and summarizerConcurrency above the deployment's, naming both, storing nothing", async () => {
    for (const query of ["", "?projectId=p"]) {
      const res = await ctx.api("PUT", `/v1/settings${query}`, { body: { maxSourceChars: 1000, summarizerConcurrency: 32 } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("tunables.invalid");
      expect(res.body.error.details.fields).toEqual(["maxSourceChars", "summarizerConcurrency"]);
      expect(res.body.error.message).toContain("maxSourceChars: must be >= 8000");
      expect(res.body.error.message).toContain("summarizerConcurrency: must be <= 16");
      expect((await ctx.api("GET", `/v1/settings${query}`)).body.overrides).toEqual({});
    }
    // At the limits: stored.
    const ok = await ctx.api("PUT", "/v1/settings", { body: { maxSourceChars: 8000, summarizerConcurrency: 16, maxSummarizerCalls: 32 } });
    expect(ok.status).toBe(200);
    expect(ok.body.effective).toMatchObject({ maxSourceChars: 8000, summarizerConcurrency: 16, maxSummarizerCalls: 32 });
    for (const [body, field] of [
      [{ maxSourceChars: 7999 }, "maxSourceChars"],
      [{ summarizerConcurrency: 17 }, "summarizerConcurrency"],
      [{ maxSummarizerCalls: 33 }, "maxSummarizerCalls"],
    ] as const) {
      const res = await ctx.api("PUT", "/v1/settings", { body });
      expect(res.status, field).toBe(400);
      expect(res.body.error.details.fields).toEqual([field]);
    }
    expect((await ctx.api("PUT", "/v1/settings", { body: {} })).status).toBe(200);
  });

  it("holds stored settings from before the limits to them: the fold of 60 messages stays within the cap", async () => {
    // Written as a tenant could store them before the limits existed.
    const client = createDocumentClient({ endpoint: ctx.service.dynamoEndpoint });
    await client.send(
      new PutCommand(putSettingsParams(ctx.service.tableName, "tenant-a", undefined, { maxSourceChars: 1000, summarizerConcurrency: 32 }, new Date().toISOString())),
    );
    try {
      const read = await ctx.api("GET", "/v1/settings");
      expect(read.body.effective).toMatchObject({ maxSourceChars: 8000, summarizerConcurrency: 16 });
      await seedSixtyFive(ctx, "stored-before");
      counter.calls = 0;
      const res = await forceHard(ctx, "stored-before");
      expect(res.body).toMatchObject({ compacted: true, compactedMessages: 60 });
      // 60 messages of ~580 chars in calls of 8,000 chars: 5 chunks, chained (a partial summary of
      // the grown 4,000-token budget would not fit a merge call twice).
      expect(counter.calls).toBe(5);
    } finally {
      expect((await ctx.api("PUT", "/v1/settings", { body: {} })).status).toBe(200);
    }
  });
});

describe("the deployment's own settings cannot make a fold loop either", () => {
  const { summarizer, counter } = countingOffline();
  let ctx: Service;
  beforeAll(async () => {
    // The operator's range goes lower than a tenant's: 1,000-char calls, 32 at once.
    ctx = await startTestService({
      overrides: { summarizer: async () => summarizer },
      env: { COMPACTION_MAX_SOURCE_CHARS: "1000", COMPACTION_SUMMARIZER_CONCURRENCY: "32" },
    });
  });
  afterAll(async () => ctx?.service.stop());

  it("a fold of 60 messages in 1,000-char calls makes at most maxSummarizerCalls calls and folds the oldest part that fits", async () => {
    await seedSixtyFive(ctx, "operator");
    counter.calls = 0;
    const res = await forceHard(ctx, "operator");
    expect(res.status).toBe(200);
    expect(res.body.compacted).toBe(true);
    // No partial summary fits twice into 1,000 chars, so the chunks are chained, one call each:
    // the cap of 32 (one kept for the quality gate's retry) folds the oldest 31 messages.
    expect(counter.calls).toBe(31);
    expect(res.body.compactedMessages).toBe(31);
    const memory = (await ctx.api("GET", `/v1/processes/operator/memories/${res.body.memoryId}`)).body.memory;
    expect(memory.metadata.summarizerCalls).toBe(counter.calls);
    // The rest stays active for the next fold.
    const active = (await ctx.api("GET", "/v1/processes/operator/messages?view=active&limit=1000")).body.items;
    expect(active).toHaveLength(65 - res.body.compactedMessages);
  });

  it("stops at the operator's cap on calls, which a tenant may lower but not raise", async () => {
    expect((await ctx.api("PUT", "/v1/settings?projectId=small", { body: { maxSummarizerCalls: 33 } })).status).toBe(400);
    expect((await ctx.api("PUT", "/v1/settings?projectId=small", { body: { maxSummarizerCalls: 5 } })).status).toBe(200);
    await seedSixtyFive(ctx, "lowered", "small");
    counter.calls = 0;
    const res = await forceHard(ctx, "lowered");
    expect(res.body).toMatchObject({ compacted: true, compactedMessages: 4 });
    expect(counter.calls).toBe(4);
  });
});

describe("the prompt size and window a caller reports are bounded", () => {
  let ctx: Service;
  beforeAll(async () => {
    ctx = await startTestService();
    await ctx.api("PUT", "/v1/processes/bounds", { body: { projectId: "p" } });
  });
  afterAll(async () => ctx?.service.stop());

  const turn = (model: Record<string, unknown>, prompt?: Record<string, unknown>) =>
    ctx.api("POST", "/v1/processes/bounds/turns", { body: { model, ...(prompt ? { prompt } : {}) } });
  const compaction = (model: Record<string, unknown>, prompt?: Record<string, unknown>) =>
    ctx.api("POST", "/v1/processes/bounds/compaction", { body: { model, ...(prompt ? { prompt } : {}) } });

  it("accepts contextWindow and prompt.tokens up to 10,000,000 and prompt.chars up to 40,000,000", async () => {
    expect(MAX_CONTEXT_WINDOW).toBe(10_000_000);
    expect(MAX_PROMPT_CHARS).toBe(40_000_000);
    for (const call of [turn, compaction]) {
      expect((await call({ contextWindow: MAX_CONTEXT_WINDOW }, { tokens: MAX_CONTEXT_WINDOW })).status).toBe(200);
      expect((await call({ contextWindow: MAX_CONTEXT_WINDOW }, { chars: MAX_PROMPT_CHARS })).status).toBe(200);
    }
  });

  it("answers 400 naming the field one past each limit, and writes nothing", async () => {
    const before = (await ctx.api("GET", "/v1/processes/bounds/messages")).body.items.length;
    for (const call of [turn, compaction]) {
      for (const [model, prompt, field] of [
        [{ contextWindow: MAX_CONTEXT_WINDOW + 1 }, undefined, "body.model.contextWindow"],
        [{ contextWindow: 128_000 }, { tokens: MAX_CONTEXT_WINDOW + 1 }, "body.prompt.tokens"],
        [{ contextWindow: 128_000 }, { chars: MAX_PROMPT_CHARS + 1 }, "body.prompt.chars"],
        [{ contextWindow: 100_000_000 }, undefined, "body.model.contextWindow"],
      ] as const) {
        const res = await call(model, prompt);
        expect(res.status, field).toBe(400);
        expect(res.body.error.code).toBe("request.invalid");
        expect(res.body.error.details.fields).toEqual([field]);
      }
    }
    const message = { role: "USER", content: "still here?" };
    const res = await ctx.api("POST", "/v1/processes/bounds/turns", {
      body: { message, model: { contextWindow: 128_000 }, prompt: { tokens: MAX_CONTEXT_WINDOW + 1 } },
    });
    expect(res.status).toBe(400);
    expect((await ctx.api("GET", "/v1/processes/bounds/messages")).body.items).toHaveLength(before);
  });
});

describe("a tenant over its daily model budget", () => {
  const { summarizer, counter } = countingOffline();
  let ctx: Service;
  beforeAll(async () => {
    ctx = await startTestService({ overrides: { summarizer: async () => summarizer } });
    // Tenant A has a budget it has used up; tenant B has none (the deployment's default: unlimited).
    const day = new Date().toISOString().slice(0, 10);
    await ctx.service.deps.store.putTenantBudget("tenant-a", 5000, new Date().toISOString());
    await ctx.service.deps.store.addUsage("tenant-a", day, { tokens: 5000 });
    await seedSixtyFive(ctx, "over");
  });
  afterAll(async () => ctx?.service.stop());

  it("answers 429 budget.exceeded with Retry-After for a manual compaction and a range compaction, writing nothing", async () => {
    counter.calls = 0;
    const res = await fetch(`${ctx.service.url}/v1/processes/over/compaction`, {
      method: "POST",
      headers: { authorization: "Bearer key-a", "content-type": "application/json" },
      body: JSON.stringify({ model: { name: "gpt-4o" }, force: "HARD" }),
    });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    const body = (await res.json()) as { error: { code: string; message: string; details: Record<string, unknown> } };
    expect(body.error.code).toBe("budget.exceeded");
    expect(body.error.message).toMatch(/^the tenant's daily model budget is used up: 5000 of 5000 tokens used on \d{4}-\d{2}-\d{2} \(UTC\)/);
    expect(body.error.details).toMatchObject({ dailyTokens: 5000, usedTokens: 5000, retryAfterSeconds: retryAfter });

    const messages = (await ctx.api("GET", "/v1/processes/over/messages?limit=1000")).body.items;
    const range = await ctx.api("POST", "/v1/processes/over/compaction/range", {
      body: { from: messages[0].createdAt, to: messages[30].createdAt, topicLabel: "rooms" },
    });
    expect(range.status).toBe(429);
    expect(range.body.error.code).toBe("budget.exceeded");

    expect(counter.calls).toBe(0);
    expect((await ctx.api("GET", "/v1/processes/over/memories?includeFailed=true&includePrepared=true")).body.items).toEqual([]);
    expect((await ctx.api("GET", "/v1/processes/over/messages?view=active&limit=1000")).body.items).toHaveLength(65);
  });

  it("still answers a turn with 200: the reason says why nothing was folded, and the answer is trimmed inside the window", async () => {
    const res = await ctx.api("POST", "/v1/processes/over/turns", {
      body: { message: { role: "USER", content: "Which room on 3 May?" }, model: { contextWindow: 8_000 }, prompt: { tokens: 7_900 } },
    });
    expect(res.status).toBe(200);
    expect(res.body.compaction).toMatchObject({ mode: "EMERGENCY", compacted: false, reason: "budget_exceeded" });
    expect(res.body.compaction.trimmed.messages).toBeGreaterThan(0);
    expect(res.body.compaction.trimmed.tokens).toBeGreaterThanOrEqual(7_900 - Math.ceil(0.95 * 8_000));
    expect(res.body.messages.at(-1).content).toBe("Which room on 3 May?");
    expect(counter.calls).toBe(0);
  });

  it("leaves another tenant's work alone", async () => {
    await ctx.api("PUT", "/v1/processes/other-tenant", { key: "key-b", body: { projectId: "p" } });
    for (let i = 0; i < 14; i++) {
      await ctx.api("POST", "/v1/processes/other-tenant/messages", { key: "key-b", body: { role: i % 2 ? "ASSISTANT" : "USER", content: `note ${i} about room ${i}` } });
    }
    const res = await ctx.api("POST", "/v1/processes/other-tenant/compaction", { key: "key-b", body: { model: { name: "gpt-4o" }, force: "HARD" } });
    expect(res.status).toBe(200);
    expect(res.body.compacted).toBe(true);
  });
});
