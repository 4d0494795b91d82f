/**
 * The memory block over HTTP (docs/turns.md, "The memory block"): summary replay, the worker parent context row by
 * row, and byte-identical blocks between turns without a compaction.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PARENT_SUMMARY_LEAD } from "../../core/domain/context-block.js";
import { RECALL_LEAD } from "../../core/domain/recall.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { makeMemory } from "../support/fixtures.js";
import { startRecordedService } from "../support/recording-store.js";
import { KEY_B, startTestService } from "../support/service.js";

const fake = createFakeSummarizer();
let ctx: Awaited<ReturnType<typeof startRecordedService>>;

beforeAll(async () => {
  ctx = await startRecordedService({ overrides: { summarizer: async () => fake } });
});
afterAll(async () => ctx?.service.stop());

const api = (...args: Parameters<typeof ctx.api>) => ctx.api(...args);
const BIG = { contextWindow: 1_000_000 };
const SUMMARY = "## Earlier Conversation (compacted)";
const PARENT = "## Parent Context";

async function createProcess(id: string, body: Record<string, unknown>) {
  expect((await api("PUT", `/v1/processes/${id}`, { body })).status).toBe(200);
}

/** Appends `n` substantive messages (USER first and last) and folds them into `summary` (HARD). */
async function compactWith(id: string, summary: string, n = 14) {
  for (let i = 0; i < n; i++) {
    const role = i % 2 === 0 || i === n - 1 ? "USER" : "ASSISTANT";
    await api("POST", `/v1/processes/${id}/messages`, { body: { role, content: `${id} message ${i} about the parser design` } });
  }
  fake.script.push({ ok: true, summary });
  const res = await api("POST", `/v1/processes/${id}/compaction`, { body: { model: BIG, force: "HARD" } });
  expect(res.body).toMatchObject({ compacted: true, mode: "HARD" });
  return res.body.memoryId as string;
}

const context = async (id: string, key?: string) => {
  const res = await api("GET", `/v1/processes/${id}/context`, key ? { key } : {});
  expect(res.status).toBe(200);
  return res.body as { block: string; staticBlock: string; sections: Array<{ name: string; content: string; cache: string }> };
};
const turn = async (id: string, body: Record<string, unknown> = {}) => {
  const res = await api("POST", `/v1/processes/${id}/turns`, { body: { model: BIG, ...body } });
  expect(res.status).toBe(200);
  return res.body;
};

const arthur = { projectId: "plan", name: "Arthur", recipe: "plan-session", engine: "arthur", title: "Ship v2" };
const identity = "Parent name: Arthur\nParent recipe: plan-session\nParent engine: arthur\nParent title: Ship v2";

describe("summary replay", () => {
  it("shows no section for a process without a summary", async () => {
    await createProcess("plain", { projectId: "p" });
    expect(await context("plain")).toEqual({ block: "", staticBlock: "", sections: [] });
  });

  it("replays only the newest summary after several compactions", async () => {
    await createProcess("replay", { projectId: "p" });
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await compactWith("replay", `SUMMARY-${n}: parser decisions round ${n}`));
    const c = await context("replay");
    expect(c.sections).toEqual([{ name: "Earlier Conversation (compacted)", content: "SUMMARY-3: parser decisions round 3", cache: "static" }]);
    expect(c.block).toBe(`${SUMMARY}\nSUMMARY-3: parser decisions round 3`);
    expect(c.block).not.toMatch(/SUMMARY-[12]/);
    const memories = (await api("GET", "/v1/processes/replay/memories")).body.items;
    expect(memories.map((m: any) => [m.id, m.supersededAt === null])).toEqual([
      [ids[2], true],
      [ids[1], false],
      [ids[0], false],
    ]);
    expect((await turn("replay")).context).toEqual(c);
  });

  it("takes the newer one when two summaries are briefly active", async () => {
    await createProcess("race", { projectId: "p" });
    await compactWith("race", "OLDER SUMMARY");
    const key = { tenantId: "tenant-a", processId: "race" };
    await ctx.service.deps.store.putMemory(key, makeMemory("race", { content: "NEWER SUMMARY", tokens: 3 }));
    await ctx.service.deps.store.putMemory(key, makeMemory("race", { status: "FAILED", content: "", tokens: 0 }));
    expect((await context("race")).block).toBe(`${SUMMARY}\nNEWER SUMMARY`);
  });
});

describe("worker parent context (one test per row)", () => {
  beforeAll(async () => {
    await createProcess("arthur-1", arthur);
    await compactWith("arthur-1", "PARENT SUMMARY: ship v2 by Friday, Postgres chosen");
  });

  it("same-project worker with an active parent summary: identity and summary", async () => {
    await createProcess("worker-same", { projectId: "plan", parentProcessId: "arthur-1", engine: "frankie" });
    const c = await context("worker-same");
    expect(c.sections.map((s) => s.name)).toEqual(["Parent Context"]);
    expect(c.block).toBe(
      `${PARENT}\n${identity}\n\n### Parent Conversation Summary\n${PARENT_SUMMARY_LEAD}\n> PARENT SUMMARY: ship v2 by Friday, Postgres chosen`,
    );
  });

  it("same-project worker whose parent has no summary: identity only, missing fields as ?", async () => {
    await createProcess("eddie-1", { projectId: "plan", engine: "eddie" });
    await createProcess("worker-nosum", { projectId: "plan", parentProcessId: "eddie-1" });
    expect((await context("worker-nosum")).block).toBe(
      `${PARENT}\nParent name: ?\nParent recipe: ?\nParent engine: eddie\nParent title: ?`,
    );
  });

  it("cross-project worker: identity only, and the parent's summary is never read", async () => {
    await createProcess("worker-cross", { projectId: "other", parentProcessId: "arthur-1", engine: "trillian" });
    ctx.recording.reset();
    const viaContext = await context("worker-cross");
    const viaTurn = (await turn("worker-cross", { message: { role: "USER", content: "start the control loop" } })).context;
    for (const c of [viaContext, viaTurn]) {
      expect(c.block).toBe(`${PARENT}\n${identity}`);
      expect(c.block).not.toContain("PARENT SUMMARY");
    }
    expect(ctx.recording.callsFor("arthur-1").map((c) => c.method)).toEqual(["getProcess", "getProcess"]);
  });

  it("orphaned parent: no section, the call succeeds", async () => {
    await createProcess("worker-orphan", { projectId: "plan", parentProcessId: "deleted-parent" });
    expect(await context("worker-orphan")).toEqual({ block: "", staticBlock: "", sections: [] });
    expect((await turn("worker-orphan", { message: { role: "USER", content: "hello" } })).context.block).toBe("");
  });

  it("another tenant's process as parent counts as orphaned", async () => {
    await api("PUT", "/v1/processes/worker-tenant-b", { key: KEY_B, body: { projectId: "plan", parentProcessId: "arthur-1" } });
    expect((await context("worker-tenant-b", KEY_B)).block).toBe("");
  });

  it("store down during the lookup: no section, the turn still succeeds with the worker's own summary", async () => {
    await createProcess("worker-down", { projectId: "plan", parentProcessId: "arthur-1" });
    await compactWith("worker-down", "WORKER SUMMARY");
    expect((await context("worker-down")).sections.map((s) => s.name)).toEqual(["Earlier Conversation (compacted)", "Parent Context"]);
    ctx.recording.fail = (call) =>
      call.method === "getProcess" && call.processId === "arthur-1" ? new Error("DynamoDB unavailable") : undefined;
    try {
      const t = await turn("worker-down", { message: { role: "USER", content: "continue with the parser" } });
      expect(t.context.block).toBe(`${SUMMARY}\nWORKER SUMMARY`);
      expect(t.messages.at(-1).content).toBe("continue with the parser");
      expect((await context("worker-down")).block).toBe(`${SUMMARY}\nWORKER SUMMARY`);
    } finally {
      ctx.recording.reset();
    }
  });
});

describe("prompt-cache friendliness", () => {
  it("keeps the block byte-identical between turns without a compaction, and changes it on one", async () => {
    await createProcess("cache-1", { projectId: "plan", parentProcessId: "arthur-1", name: "Frankie" });
    await compactWith("cache-1", "FIRST SUMMARY");
    const first = await turn("cache-1", { message: { role: "USER", content: "next step?" } });
    expect(first.compaction.compacted).toBe(false);
    const blocks = [JSON.stringify(first.context)];
    for (const content of ["ok thanks!", "what about the lexer?"]) {
      const t = await turn("cache-1", { message: { role: "USER", content } });
      expect(t.compaction.compacted).toBe(false);
      blocks.push(JSON.stringify(t.context));
    }
    blocks.push(JSON.stringify(await context("cache-1")));
    expect(new Set(blocks).size).toBe(1);
    expect(first.context.staticBlock).toBe(first.context.block);
    expect(first.context.sections.every((s: any) => s.cache === "static")).toBe(true);

    await compactWith("cache-1", "SECOND SUMMARY", 12);
    const after = await turn("cache-1");
    expect(after.context.block).not.toBe(first.context.block);
    expect(after.context.block.startsWith(`${SUMMARY}\nSECOND SUMMARY\n\n${PARENT}`)).toBe(true);
  });
});

describe("recall of archived messages for a query", () => {
  it("adds matching archived originals as a dynamic section after the cache breakpoint", async () => {
    const { service, api } = await startTestService({ overrides: { summarizer: async () => createFakeSummarizer() } });
    try {
      await api("PUT", "/v1/processes/recall-1", { body: { projectId: "p" } });
      await api("POST", "/v1/processes/recall-1/messages", { body: { role: "USER", content: "Our staging database password rotates every Tuesday at 04:00 UTC" } });
      await api("POST", "/v1/processes/recall-1/messages", { body: { role: "ASSISTANT", content: "The deploy window for the billing service is Friday afternoon" } });
      for (let i = 0; i < 14; i++) {
        await api("POST", "/v1/processes/recall-1/messages", { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `unrelated chatter about lunch options number ${i}`, tags: ["STRENGTH:normal"] } });
      }
      for (let i = 0; i < 4; i++) await api("POST", "/v1/processes/recall-1/messages", { body: { role: "USER", content: `more chatter ${i}` } });
      const folded = await api("POST", "/v1/processes/recall-1/compaction", { body: { model: { contextWindow: 100_000 }, force: "HARD" } });
      expect(folded.body.compacted).toBe(true);

      const plain = await api("GET", "/v1/processes/recall-1/context");
      const recalled = await api("GET", "/v1/processes/recall-1/context?query=when%20is%20the%20billing%20deploy%20window");
      const section = recalled.body.sections.find((s: any) => s.name === "Recalled From History");
      expect(section).toMatchObject({ cache: "dynamic" });
      expect(section.content).toContain("deploy window for the billing service");
      // Quoted material (docs/api.md): a lead line that says so, then each recalled line quoted.
      const [lead, ...quoted] = section.content.split("\n");
      expect(lead).toBe(RECALL_LEAD);
      expect(quoted.length).toBeGreaterThan(0);
      for (const line of quoted) expect(line).toMatch(/^> - \[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\] (USER|ASSISTANT|SYSTEM|TOOL): /);
      // The static part, and so the prompt cache, is untouched by the query.
      expect(recalled.body.staticBlock).toBe(plain.body.staticBlock);
      expect(recalled.body.block.startsWith(plain.body.staticBlock)).toBe(true);
      expect(recalled.body.block.indexOf("## Recalled From History")).toBeGreaterThan(recalled.body.staticBlock.length - 1);

      // Active messages are already in the prompt: they are never recalled.
      const active = await api("GET", "/v1/processes/recall-1/context?query=more%20chatter");
      expect(active.body.sections.some((s: any) => s.name === "Recalled From History" && s.content.includes("more chatter"))).toBe(false);

      // A turn brings recall into the transcript where it was recalled: one SYSTEM message, stored,
      // that quotes each message once (docs/turns.md, "Recall"); the block and the prompt before it
      // stay as they were.
      const before = await api("POST", "/v1/processes/recall-1/turns", { body: { model: { contextWindow: 100_000 } } });
      const turn = await api("POST", "/v1/processes/recall-1/turns", { body: { model: { contextWindow: 100_000 }, query: "billing deploy window" } });
      expect(turn.body.context.block).toBe(plain.body.block);
      expect(turn.body.prefix).toEqual({ kept: true });
      expect(turn.body.messages.slice(0, -1)).toEqual(before.body.messages);
      const recall = turn.body.messages.at(-1);
      expect(recall).toMatchObject({ role: "SYSTEM", archivedInMemoryId: null });
      expect(recall.content.startsWith(`## Recalled From History\n${RECALL_LEAD}\n`)).toBe(true);
      expect(recall.content).toContain("deploy window for the billing service");
      expect(recall.tags.length).toBeGreaterThan(0);
      expect(recall.tags.every((t: string) => t.startsWith("RECALL:"))).toBe(true);
      // Never shown twice: the same query again recalls nothing new while that message is in the prompt.
      const again = await api("POST", "/v1/processes/recall-1/turns", { body: { model: { contextWindow: 100_000 }, query: "billing deploy window" } });
      expect(again.body.messages).toEqual(turn.body.messages);
      expect(again.body.prefix).toEqual({ kept: true });
    } finally {
      await service.stop();
    }
  });
});

describe("recall sized to the window", () => {
  it("fills the room below the hard threshold up to recallMaxTokens, and 0 turns it off", async () => {
    const { service, api } = await startTestService({ overrides: { summarizer: async () => createFakeSummarizer() } });
    try {
      await api("PUT", "/v1/processes/recall-2", { body: { projectId: "p-system" } });
      // Recall in the system prompt's dynamic section (the opt-in): sized the same way.
      expect((await api("PUT", "/v1/settings?projectId=p-system", { body: { recallInSystem: true } })).status).toBe(200);
      for (let i = 0; i < 24; i++) {
        const content = `Deploy note ${i}: the billing deploy window for region ${i} is slot ${300 + i}, ${"with a long explanation of the rollout ".repeat(3)}`;
        await api("POST", "/v1/processes/recall-2/messages", { body: { role: i % 2 ? "ASSISTANT" : "USER", content, tags: ["STRENGTH:normal"] } });
      }
      expect((await api("POST", "/v1/processes/recall-2/compaction", { body: { model: { contextWindow: 100_000 }, force: "HARD" } })).body.compacted).toBe(true);

      const section = (body: any) => body.context.sections.find((s: any) => s.name === "Recalled From History");
      const turn = (tokens: number) =>
        api("POST", "/v1/processes/recall-2/turns", { body: { model: { contextWindow: 2_000 }, prompt: { tokens }, query: "billing deploy window" } });
      // 1,500 of 2,000 tokens: 200 tokens are left below the hard threshold (1,700).
      const tight = await turn(1_500);
      expect(tight.body.compaction.compacted).toBe(false);
      const tightTokens = Math.ceil(section(tight.body).content.length / 4);
      expect(tightTokens).toBeGreaterThan(50);
      expect(1_500 + tightTokens).toBeLessThanOrEqual(1_700);
      // With room, up to recallMaxTokens (1,000 by default): more than the three hits of old.
      const roomy = await turn(200);
      expect(section(roomy.body).content.split("\n").length).toBeGreaterThan(3);
      expect(Math.ceil(section(roomy.body).content.length / 4)).toBeLessThanOrEqual(1_000);

      expect((await api("PUT", "/v1/settings?projectId=p-system", { body: { recallMaxTokens: 0 } })).status).toBe(200);
      expect(section((await turn(200)).body)).toBeUndefined();
    } finally {
      await service.stop();
    }
  });
});

describe("recall with a large budget", () => {
  it("considers enough search hits to fill it: more than 40 short archived matches come back", async () => {
    const { service, api } = await startTestService({ overrides: { summarizer: async () => createFakeSummarizer() } });
    try {
      await api("PUT", "/v1/processes/recall-3", { body: { projectId: "wide" } });
      for (let i = 0; i < 56; i++) {
        const content = `Deploy note ${i}: the billing deploy window for region ${i} is slot ${300 + i}.`;
        await api("POST", "/v1/processes/recall-3/messages", { body: { role: i % 2 ? "ASSISTANT" : "USER", content, tags: ["STRENGTH:normal"] } });
      }
      expect((await api("POST", "/v1/processes/recall-3/compaction", { body: { model: { contextWindow: 100_000 }, force: "HARD" } })).body.compacted).toBe(true);
      expect((await api("PUT", "/v1/settings?projectId=wide", { body: { recallMaxTokens: 5_000 } })).status).toBe(200);
      const turn = await api("POST", "/v1/processes/recall-3/turns", { body: { model: { contextWindow: 100_000 }, prompt: { tokens: 500 }, query: "billing deploy window" } });
      const recall = turn.body.messages.at(-1);
      // 51 archived matches of ~25 tokens each fit 5,000 tokens: more than the first 40, up to the
      // 48 one recall message quotes (one tag each).
      expect(recall.content.split("\n").length).toBeGreaterThan(40);
      expect(recall.tags).toHaveLength(48);
      expect(Math.ceil(recall.content.length / 4)).toBeLessThanOrEqual(5_000);
    } finally {
      await service.stop();
    }
  });
});
