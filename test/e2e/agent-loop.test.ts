/**
 * An agent loop over HTTP against the local runner: tool results are cleared from the replay and
 * come back in full through `GET .../messages/{messageId}`; old tool groups of the current turn
 * fold in HARD; every tool call in the replay is answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { KEY_B, startTestService } from "../support/service.js";

const fake = createFakeSummarizer();
let ctx: Awaited<ReturnType<typeof startTestService>>;
let api: Awaited<ReturnType<typeof startTestService>>["api"];

beforeAll(async () => {
  ctx = await startTestService({ overrides: { summarizer: async () => fake } });
  api = ctx.api;
});
afterAll(async () => ctx?.service.stop());

const MODEL = { contextWindow: 32_000 };
const output = (i: number) => `log ${i} needle-${i}-quokka\n${"GET /health 200 3ms\n".repeat(260)}`;

async function loop(id: string, pairs: number) {
  expect((await api("PUT", `/v1/processes/${id}`, { body: { projectId: "proj" } })).status).toBe(200);
  await api("POST", `/v1/processes/${id}/messages`, { body: { role: "USER", content: "Find why the health check flaps." } });
  for (let i = 0; i < pairs; i++) {
    const call = { id: `call_${i}`, name: "tail_log", arguments: `{"n":${i}}` };
    expect((await api("POST", `/v1/processes/${id}/messages`, { body: { role: "ASSISTANT", content: "", toolCalls: [call] } })).status).toBe(201);
    expect((await api("POST", `/v1/processes/${id}/messages`, { body: { role: "TOOL", content: output(i), toolCallId: call.id } })).status).toBe(201);
  }
}

// Each test sends dozens of requests: generous time for a loaded machine.
describe("an agent loop over HTTP", { timeout: 120_000 }, () => {
  it("records old tool results as cleared for the next fold and serves each one in full by its message id", async () => {
    await loop("loop-1", 20);
    const turn = await api("POST", "/v1/processes/loop-1/turns", { body: { model: MODEL } });
    expect(turn.status).toBe(200);
    // ~26 000 tokens of 32k is SOFT: the newest 10 messages (5 results) are its anchor.
    expect(turn.body.compaction).toMatchObject({ compacted: false, clearedMessages: 15 });
    // The round waits for the next fold (docs/turns.md, "Append-only between folds"): this
    // replay shows every result whole, and the stored results carry the round.
    expect(turn.body.messages.filter((m: any) => m.cleared)).toEqual([]);
    const all = await api("GET", "/v1/processes/loop-1/messages?view=all&limit=100");
    const cleared = all.body.items.filter((m: any) => m.cleared);
    expect(cleared).toHaveLength(15);
    const first = cleared[0];

    const full = await api("GET", `/v1/processes/loop-1/messages/${first.id}`);
    expect(full.status).toBe(200);
    expect(full.body.message).toMatchObject({ id: first.id, content: output(0), cleared: { toolName: "tail_log", chars: output(0).length } });
    expect((await api("GET", `/v1/processes/loop-1/messages/${first.id}`, { key: KEY_B })).status).toBe(404);

    const active = await api("GET", "/v1/processes/loop-1/messages?view=active&limit=100");
    expect(active.body.items.map((m: any) => m.content)).toEqual(turn.body.messages.map((m: any) => m.content));
    const search = await api("GET", "/v1/processes/loop-1/history/search?q=needle-0-quokka");
    expect(search.body.items[0].message.id).toBe(first.id);

    const events = await api("GET", "/local/events");
    const items = (events.body.items ?? events.body) as any[];
    expect(items.some((e) => e.detailType === "ToolResultsCleared" && e.detail.processId === "loop-1")).toBe(true);
  });

  it("folds the current turn's old tool groups in HARD and answers a call whose result never came", async () => {
    await loop("loop-2", 12);
    await api("POST", "/v1/processes/loop-2/messages", {
      body: { role: "ASSISTANT", content: "", toolCalls: [{ id: "lost", name: "tail_log", arguments: "{}" }] },
    });
    await api("POST", "/v1/processes/loop-2/messages", { body: { role: "ASSISTANT", content: "The restart loop comes from the probe timeout." } });
    const fold = await api("POST", "/v1/processes/loop-2/compaction", { body: { model: MODEL, force: "HARD" } });
    // 12 pairs + the lost call + the note: HARD's anchor of 5 keeps the last two pairs, the lost call and the note.
    expect(fold.body).toMatchObject({ mode: "HARD", compacted: true, compactedMessages: 20 });
    const turn = await api("POST", "/v1/processes/loop-2/turns", { body: { model: MODEL } });
    expect(turn.status).toBe(200);
    const messages = turn.body.messages as any[];
    expect(messages[0]).toMatchObject({ role: "USER", content: "Find why the health check flaps." });
    const lost = messages.findIndex((m) => m.toolCalls?.[0]?.id === "lost");
    expect(messages[lost + 1]).toMatchObject({ role: "TOOL", toolCallId: "lost", missingResult: true });
  });
});
