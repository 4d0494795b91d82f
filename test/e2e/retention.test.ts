/**
 * Retention over HTTP (docs/configuration.md, "Retention"): `retentionDays` is stored and refused
 * like every setting, at its limit and one past it, and `GET …/sources` names the originals the
 * table's TTL removed (a DeleteItem stands in for it) instead of failing.
 */
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { messageSk, processPk } from "../../core/adapters/dynamodb/keys.js";
import { RETENTION_DAYS_MAX } from "../../core/domain/tunables.js";
import { startTestService } from "../support/service.js";

let ctx: Awaited<ReturnType<typeof startTestService>>;

beforeAll(async () => {
  ctx = await startTestService();
});
afterAll(async () => {
  await ctx?.service.stop();
});

describe("PUT /v1/settings retentionDays", () => {
  it("stores 1 and the maximum, for a tenant and a project, and null over a layer below", async () => {
    const { api } = ctx;
    for (const value of [1, RETENTION_DAYS_MAX]) {
      const put = await api("PUT", "/v1/settings?projectId=keep", { body: { retentionDays: value } });
      expect(put.status).toBe(200);
      expect(put.body.effective.retentionDays).toBe(value);
    }
    expect((await api("PUT", "/v1/settings", { body: { retentionDays: 30 } })).status).toBe(200);
    const project = await api("PUT", "/v1/settings?projectId=forever", { body: { retentionDays: null } });
    expect(project.status).toBe(200);
    expect(project.body.effective.retentionDays).toBeNull();
    expect((await api("GET", "/v1/settings?projectId=other")).body.effective.retentionDays).toBe(30);
    expect((await api("PUT", "/v1/settings", { body: {} })).status).toBe(200);
  });

  it.each([0, -1, 1.5, RETENTION_DAYS_MAX + 1, "30"])("refuses %j with a 400 naming retentionDays, and stores nothing", async (value) => {
    const { api } = ctx;
    expect((await api("PUT", "/v1/settings?projectId=bad", { body: { retentionDays: 7 } })).status).toBe(200);
    const put = await api("PUT", "/v1/settings?projectId=bad", { body: { retentionDays: value, keepRecent: 4 } });
    expect(put.status).toBe(400);
    expect(put.body.error.details.fields).toEqual(["body.retentionDays"]);
    expect(put.body.error.message).toContain("retentionDays");
    const stored = await api("GET", "/v1/settings?projectId=bad");
    expect(stored.body.overrides).toEqual({ retentionDays: 7 });
  });
});

describe("GET …/memories/{id}/sources under a retention", () => {
  it("answers the originals still kept and names those the TTL removed in expired", async () => {
    const { api, service } = ctx;
    expect((await api("PUT", "/v1/settings?projectId=ttl", { body: { retentionDays: 2 } })).status).toBe(200);
    expect((await api("PUT", "/v1/processes/ttl-1", { body: { projectId: "ttl" } })).status).toBe(200);
    for (let i = 0; i < 20; i++) {
      await api("POST", "/v1/processes/ttl-1/messages", { body: { role: i % 2 ? "ASSISTANT" : "USER", content: `turn ${i}: crate ${i} to dock ${i % 3}` } });
    }
    const fold = await api("POST", "/v1/processes/ttl-1/compaction", { body: { model: { contextWindow: 8000 }, force: "HARD" } });
    expect(fold.status).toBe(200);
    const memoryId = fold.body.memoryId as string;
    const before = await api("GET", `/v1/processes/ttl-1/memories/${memoryId}/sources`);
    expect(before.status).toBe(200);
    expect(before.body.expired).toEqual([]);
    expect(before.body.memory.metadata.retentionDays).toBe(2);
    const refs = before.body.memory.sourceRefs as string[];
    expect(before.body.items.map((m: { id: string }) => m.id)).toEqual(refs);
    expect(before.body.items.every((m: { expiresAt?: string }) => typeof m.expiresAt === "string")).toBe(true);

    const client = createDocumentClient({ endpoint: service.dynamoEndpoint });
    const key = { pk: processPk({ tenantId: "tenant-a", processId: "ttl-1" }), sk: messageSk(refs[0]!) };
    await client.send(new DeleteCommand({ TableName: service.tableName, Key: key }));

    const after = await api("GET", `/v1/processes/ttl-1/memories/${memoryId}/sources`);
    expect(after.status).toBe(200);
    expect(after.body.expired).toEqual([refs[0]]);
    expect(after.body.items.map((m: { id: string }) => m.id)).toEqual(refs.slice(1));
    const revert = await api("POST", `/v1/processes/ttl-1/memories/${memoryId}/revert`);
    expect(revert.status).toBe(409);
    expect(revert.body.error.code).toBe("memory.originals_expired");
    expect(revert.body.error.details).toEqual({ expiredCount: 1, expired: [refs[0]] });
  });
});
