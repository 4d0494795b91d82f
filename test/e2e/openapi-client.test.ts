/**
 * A client generated from docs/openapi.json, as an engine in any language would generate one
 * (openapi-typescript's types, openapi-fetch's calls; docs/integrations.md), drives a session
 * against the local runner: a process, turns to a compaction, search, memories and a revert.
 */
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../types/openapi.js";
import { KEY_A, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;
let memory: ReturnType<typeof createClient<paths>>;

beforeAll(async () => {
  ctx = await startTestService();
  memory = createClient<paths>({ baseUrl: ctx.service.url, headers: { authorization: `Bearer ${KEY_A}` } });
});
afterAll(async () => ctx?.service.stop());

const processId = "generated-1";
const path = { processId };
const MODEL = { name: "small-local-model", contextWindow: 1000 };
const topics = ["the lexer", "retries", "the cache key", "time zones", "the release train"];

/** `data` of a call that must succeed: a failed one ends the test with the error body. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${result.response.status}: ${JSON.stringify(result.error)}`);
  return result.data;
}

describe("a session through the generated client", () => {
  let compactedAt = -1;

  beforeAll(async () => {
    ok(await memory.PUT("/v1/processes/{processId}", { params: { path }, body: { projectId: "generated", engine: "generated-client" } }));
    for (let turn = 0; turn < 30 && compactedAt < 0; turn++) {
      const answer = ok(
        await memory.POST("/v1/processes/{processId}/turns", {
          params: { path },
          body: { message: { role: "USER", content: `Turn ${turn}: decide ${topics[turn % topics.length]}, case ${turn}, owner Dana by Friday.` }, model: MODEL },
        }),
      );
      // Folded in this turn, or committed by the worker since the last one (a summary is replayed).
      if (answer.compaction.compacted || answer.context.staticBlock !== "") compactedAt = turn;
      ok(
        await memory.POST("/v1/processes/{processId}/messages", {
          params: { path },
          body: { role: "ASSISTANT", content: `For ${topics[turn % topics.length]} we take option ${turn % 3}; case ${turn} gets a test.` },
        }),
      );
      // The in-process worker prepares a queued fold; waiting for it keeps the turn count steady.
      await ctx.service.bus.drain();
    }
  });

  it("reaches a compaction within 30 turns, and replays the summary", async () => {
    expect(compactedAt).toBeGreaterThanOrEqual(0);
    const { items } = ok(await memory.GET("/v1/processes/{processId}/memories", { params: { path } }));
    expect(items.map((m) => m.status)).toEqual(["OK"]);
    const context = ok(await memory.GET("/v1/processes/{processId}/context", { params: { path } }));
    expect(context.block).toContain(items[0]!.content);
  });

  it("finds a folded message through history search", async () => {
    const { items } = ok(await memory.GET("/v1/processes/{processId}/history/search", { params: { path, query: { q: "lexer" } } }));
    expect(items.length).toBeGreaterThan(0);
    expect(items.some((hit) => hit.message.archivedInMemoryId !== null && hit.message.content.includes("lexer"))).toBe(true);
  });

  it("reads a summary's detail and sources", async () => {
    const [summary] = ok(await memory.GET("/v1/processes/{processId}/memories", { params: { path } })).items;
    const detail = ok(await memory.GET("/v1/processes/{processId}/memories/{memoryId}", { params: { path: { processId, memoryId: summary!.id } } }));
    expect(detail.memory.id).toBe(summary!.id);
    const sources = ok(await memory.GET("/v1/processes/{processId}/memories/{memoryId}/sources", { params: { path: { processId, memoryId: summary!.id } } }));
    expect(sources.items.map((m) => m.id)).toEqual(summary!.sourceRefs);
  });

  it("reverts the compaction: its messages are active again and the memory is REVERTED", async () => {
    const [summary] = ok(await memory.GET("/v1/processes/{processId}/memories", { params: { path } })).items;
    const before = ok(await memory.GET("/v1/processes/{processId}/messages", { params: { path, query: { view: "active", limit: 1000 } } }));
    const reverted = ok(
      await memory.POST("/v1/processes/{processId}/memories/{memoryId}/revert", { params: { path: { processId, memoryId: summary!.id } } }),
    );
    expect(reverted.memory.status).toBe("REVERTED");
    expect(reverted.restoredMessages).toBe(summary!.sourceRefs.length);
    const after = ok(await memory.GET("/v1/processes/{processId}/messages", { params: { path, query: { view: "active", limit: 1000 } } }));
    expect(after.items.length).toBe(before.items.length + reverted.restoredMessages);
    const listed = ok(await memory.GET("/v1/processes/{processId}/memories", { params: { path, query: { includeReverted: "true" } } }));
    expect(listed.items.map((m) => m.status)).toEqual(["REVERTED"]);
  });

  it("answers a refusal as the document's error shape", async () => {
    const result = await memory.GET("/v1/processes/{processId}", { params: { path: { processId: "never-created" } } });
    expect(result.response.status).toBe(404);
    // The document's 404 is the service's error; API Gateway's own `{ message }` is only a 401/403/429.
    expect(result.error && "error" in result.error ? result.error.error.code : result.error).toBe("process.not_found");
  });
});
