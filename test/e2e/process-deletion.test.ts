/**
 * `DELETE /v1/processes/{id}` over HTTP and through the npm client (docs/api.md, "Deleting a
 * process"): 204 for a small process, 202 then 204 for a large one erased by the worker on the
 * local bus, 404 for another tenant's id, and the deleted process gone for reads and writes.
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryClient, MemoryApiError } from "../../client/index.js";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { processPk } from "../../core/adapters/dynamodb/keys.js";
import { KEY_A, KEY_B, startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;

beforeAll(async () => {
  ctx = await startTestService();
}, 60_000);
afterAll(async () => ctx?.service.stop());

const memory = () => createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });

async function seed(processId: string, messages: number) {
  const client = memory();
  await client.upsertProcess(processId, { projectId: "del" });
  for (let i = 0; i < messages; i++) await client.appendMessage(processId, { role: i % 2 ? "ASSISTANT" : "USER", content: `line ${i}` });
}

async function itemsOf(processId: string) {
  const db = createDocumentClient({ endpoint: ctx.service.dynamoEndpoint });
  const out = await db.send(
    new QueryCommand({
      TableName: ctx.service.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": processPk({ tenantId: "tenant-a", processId }) },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map((i) => i.sk as string);
}

const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => (e instanceof MemoryApiError ? { status: e.status, code: e.code } : e));

describe("DELETE /v1/processes/{processId}", () => {
  it("answers 204 for a small process; reads are 404 and writes refused afterwards; a repeat is 204", async () => {
    await seed("small-1", 4);
    expect(await ctx.api("DELETE", "/v1/processes/small-1", { key: KEY_B })).toMatchObject({ status: 404, body: { error: { code: "process.not_found" } } });
    // META, 4 messages, and the idempotency record the client gives each append (it may retry).
    expect(await itemsOf("small-1")).toHaveLength(9);

    const res = await ctx.api("DELETE", "/v1/processes/small-1");
    expect(res.status).toBe(204);
    expect(await itemsOf("small-1")).toEqual(["META"]);
    expect(await ctx.api("GET", "/v1/processes/small-1")).toMatchObject({ status: 404, body: { error: { code: "process.not_found" } } });
    expect(await ctx.api("GET", "/v1/processes/small-1/messages")).toMatchObject({ status: 404 });
    expect(await ctx.api("POST", "/v1/processes/small-1/messages", { body: { role: "USER", content: "again" } })).toMatchObject({ status: 404 });
    expect(await ctx.api("POST", "/v1/processes/small-1/turns", { body: { message: { role: "USER", content: "again" }, model: { contextWindow: 8000 } } })).toMatchObject({ status: 404 });
    expect(await ctx.api("PUT", "/v1/processes/small-1", { body: { projectId: "del" } })).toMatchObject({ status: 409, body: { error: { code: "process.deleted" } } });
    expect((await ctx.api("GET", "/v1/processes")).body.items.map((p: { processId: string }) => p.processId)).not.toContain("small-1");
    expect(await itemsOf("small-1")).toEqual(["META"]);

    expect((await ctx.api("DELETE", "/v1/processes/small-1")).status).toBe(204);
    expect(await ctx.api("DELETE", "/v1/processes/never-there")).toMatchObject({ status: 404, body: { error: { code: "process.not_found" } } });
  });

  it("the client's deleteProcess: deleting, then deleted once the worker erased the rest", async () => {
    await seed("large-1", 12);
    ctx.service.deps.erasure = { inlineItems: 4, batchItems: 3 };
    try {
      const client = memory();
      expect(await client.deleteProcess("large-1")).toEqual({ status: "deleting" });
      expect(await failure(client.getProcess("large-1"))).toEqual({ status: 404, code: "process.not_found" });
      await ctx.service.bus.drain();
      expect(await itemsOf("large-1")).toEqual(["META"]);
      expect(await client.deleteProcess("large-1")).toEqual({ status: "deleted" });
      expect(await failure(client.deleteProcess("unknown-1"))).toEqual({ status: 404, code: "process.not_found" });
    } finally {
      delete ctx.service.deps.erasure;
    }
  });
});
