/**
 * A trim forgets nothing (docs/compaction.md, "What a turn does (background mode)", step 5), against
 * DynamoDB Local: the answer names what it left out, recall reaches the left-out messages for the
 * turn's query, the active listing still holds them, and consecutive trimmed turns keep the start
 * of the message list (and so the provider's prompt cache) while the prompt still fits.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createHttpApp } from "../../core/adapters/http/app.js";
import { allRouteGroups } from "../../core/adapters/http/groups.js";
import { parseBlock } from "../../core/domain/context-block.js";
import type { Message } from "../../core/domain/model.js";
import type { Store } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { RECALL_HEADING } from "../../core/services/context.js";
import { appendMessage } from "../../core/services/messages.js";
import { upsertProcess } from "../../core/services/processes.js";
import { runTurn } from "../../core/services/turn.js";
import { answerCacheKey, isCacheStable } from "../../bench/support/cache-stability.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

const TENANT = "trims";
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("trims"));
});

/** Background deps with no worker: the queued fold never lands, so every turn over the limit trims. */
const backgroundDeps = (): ServiceDeps => testContainer({ store }).deps;

/** A pinned-by-position task, then `n` messages of about 100 tokens; the oldest of them mentions the zeppelin. */
async function seeded(deps: ServiceDeps, n: number) {
  const key = { tenantId: TENANT, processId: `trims-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj" });
  const messages: Message[] = [(await appendMessage(deps, key, { role: "USER", content: "Plan the warehouse move." })).message];
  for (let i = 0; i < n; i++) {
    const role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
    const topic = i === 0 ? "the zeppelin hangar keeps the spare forklift batteries" : `shelf ${i} goes to aisle ${i % 7}`;
    const content = `step ${i}: ${topic}. `.padEnd(400, "Crates are labelled, counted and stacked by the loading bay. ");
    messages.push((await appendMessage(deps, key, { role, content })).message);
  }
  return { key, messages, own: messages.reduce((sum, m) => sum + m.tokens, 0) };
}

describe("a trimmed answer", () => {
  it("names the first and the last message it left out", async () => {
    const deps = backgroundDeps();
    const { key, messages, own } = await seeded(deps, 40);
    const res = await runTurn(deps, key, { model: { contextWindow: Math.ceil(own / 0.96) } });
    const trimmed = res.compaction.trimmed!;
    const kept = new Set(res.messages.map((m) => m.id));
    const left = messages.filter((m) => !kept.has(m.id));
    expect(trimmed.messages).toBe(left.length);
    expect(trimmed).toMatchObject({ fromMessageId: left[0]!.id, toMessageId: left.at(-1)!.id });
  });

  it("leaves recall the room below the emergency threshold, and recall brings back a left-out message that matches the query", async () => {
    const deps = backgroundDeps();
    const { key, messages, own } = await seeded(deps, 40);
    const window = Math.ceil(own / 0.96);
    const res = await runTurn(deps, key, { model: { contextWindow: window }, query: "Where are the zeppelin batteries? Which shelf goes to aisle 3?" });
    const kept = new Set(res.messages.map((m) => m.id));
    expect(kept.has(messages[1]!.id)).toBe(false); // step 0, the zeppelin
    // Recall is the message appended after the answer's last one (docs/turns.md, "Recall").
    const last = res.messages.at(-1)!;
    expect(last.role).toBe("SYSTEM");
    const recall = parseBlock(last.content).find((s) => s.name === RECALL_HEADING);
    expect(recall?.content).toContain("zeppelin hangar");
    // Only left-out messages are recalled: `shelf 3 goes to aisle 3` is still in the answer.
    const recalledSteps = [...(recall?.content ?? "").matchAll(/step (\d+):/g)].map((m) => Number(m[1]));
    for (const step of recalledSteps) expect(kept.has(messages[step + 1]!.id)).toBe(false);
    expect(recalledSteps.length).toBeGreaterThan(0);
    // The prompt with recall stays below the emergency threshold.
    const prompt = res.messages.reduce((sum, m) => sum + m.tokens, 0) + Math.ceil(res.context.block.length / 4);
    expect(prompt / window).toBeLessThan(0.95);
  });

  it("GET .../messages?view=active still lists the messages the answer left out", async () => {
    const deps = backgroundDeps();
    const { key, messages, own } = await seeded(deps, 40);
    const app = createHttpApp({ deps, resolveTenant: () => TENANT, groups: allRouteGroups });
    const turn = await app.request(`/v1/processes/${key.processId}/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: { contextWindow: Math.ceil(own / 0.96) } }),
    });
    expect(turn.status).toBe(200);
    const answer = (await turn.json()) as { compaction: { trimmed?: { messages: number } }; messages: Message[] };
    expect(answer.compaction.trimmed!.messages).toBeGreaterThan(0);
    const listed = await app.request(`/v1/processes/${key.processId}/messages?view=active&limit=100`);
    const ids = ((await listed.json()) as { items: Message[] }).items.map((m) => m.id);
    expect(ids).toEqual(messages.map((m) => m.id));
    expect(answer.messages.length).toBe(messages.length - answer.compaction.trimmed!.messages);
  });

  it("keeps the start of the message list across appends while the prompt still fits (cache-stable)", async () => {
    const deps = backgroundDeps();
    const { key, own } = await seeded(deps, 40);
    const window = Math.ceil(own / 0.955);
    let previous: ReturnType<typeof answerCacheKey> | null = null;
    let trimmedTurns = 0;
    let stable = 0;
    for (let i = 0; i < 20; i++) {
      // About 80 tokens a turn: without blocks the cut would move on almost every turn.
      const content = `turn ${i}: the forklift for aisle ${i % 9} is booked until noon. `.padEnd(320, "Dana confirmed the slot. ");
      const res = await runTurn(deps, key, { model: { contextWindow: window }, message: { role: i % 2 ? "ASSISTANT" : "USER", content } });
      expect(res.compaction.compacted).toBe(false);
      if (res.compaction.trimmed) trimmedTurns++;
      const now = answerCacheKey(res);
      if (previous && isCacheStable(previous, now)) stable++;
      previous = now;
    }
    expect(trimmedTurns).toBe(20);
    // 19 turns follow another; the cut moves forward in blocks (a tenth of the window here, about
    // five turns' growth), so only a few of them break the cache.
    expect(stable).toBeGreaterThanOrEqual(14);
  }, 60_000);
});
