/**
 * The per-tenant request rate (docs/reliability.md, "Limits, budgets and rates"): a fixed-window
 * counter item per tenant in the table, taken by one conditional UpdateItem per request, against
 * the real DynamoDB Local engine, with an injected clock; and the HTTP answer when it is spent.
 */
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { createDynamoRateLimiter, rateLimitKey, takeParams } from "../../core/adapters/dynamodb/rate-limiter.js";
import { createHttpApp } from "../../core/adapters/http/app.js";
import { staticKeyResolver } from "../../core/adapters/http/auth.js";
import { allRouteGroups } from "../../core/adapters/http/groups.js";
import { silentLog } from "../../core/adapters/log.js";
import { freshTable } from "../support/dynamo.js";
import { testContainer } from "../support/container.js";

/** 250 ms into a one-second window: 750 ms of it are left. */
const T0 = Date.parse("2026-01-01T00:00:00.250Z");
const limits = (perSecond: number, perTenant: Record<string, number> = {}) => ({
  perSecond,
  perTenant: new Map(Object.entries(perTenant)),
});

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable("rate");
});

describe("the counter item (pure)", () => {
  it("is one item per tenant and one-second window, expiring a minute after its window", () => {
    expect(rateLimitKey("team-a", T0)).toEqual({ pk: "T#team-a#RATE#1767225600", sk: "RATE" });
    const params = takeParams("t", "team-a", 5, T0);
    expect(params).toMatchObject({
      TableName: "t",
      Key: { pk: "T#team-a#RATE#1767225600", sk: "RATE" },
      ConditionExpression: "attribute_not_exists(#n) OR #n < :limit",
      ExpressionAttributeValues: { ":one": 1, ":limit": 5, ":ttl": 1767225601 + 60 },
    });
  });
});

describe("the rate limiter on DynamoDB Local", () => {
  it("admits exactly the limit of concurrent requests in one window and refuses the rest with the time left", async () => {
    const limiter = createDynamoRateLimiter({ client: table.client, tableName: table.tableName, limits: limits(5), now: () => T0 });
    const decisions = await Promise.all(Array.from({ length: 12 }, () => limiter.take("flood")));
    expect(decisions.filter((d) => d.ok)).toHaveLength(5);
    expect(decisions.filter((d) => !d.ok)).toEqual(Array(7).fill({ ok: false, limit: 5, retryAfterSeconds: 1 }));
    const item = await table.client.send(new GetCommand({ TableName: table.tableName, Key: rateLimitKey("flood", T0) }));
    expect(item.Item).toMatchObject({ n: 5, expiresAtEpoch: 1767225661 });
  });

  it("holds across containers: two limiters over the table share one count", async () => {
    const make = () => createDynamoRateLimiter({ client: table.client, tableName: table.tableName, limits: limits(4), now: () => T0 });
    const [a, b] = [make(), make()];
    const decisions = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).take("shared")));
    expect(decisions.filter((d) => d.ok)).toHaveLength(4);
  });

  it("keeps tenants apart: one tenant over its limit leaves another's requests untouched", async () => {
    const limiter = createDynamoRateLimiter({ client: table.client, tableName: table.tableName, limits: limits(3), now: () => T0 });
    await Promise.all(Array.from({ length: 8 }, () => limiter.take("noisy")));
    expect((await limiter.take("noisy")).ok).toBe(false);
    const quiet = await Promise.all(Array.from({ length: 3 }, () => limiter.take("quiet")));
    expect(quiet.every((d) => d.ok)).toBe(true);
  });

  it("opens again in the next window", async () => {
    let now = T0;
    const limiter = createDynamoRateLimiter({ client: table.client, tableName: table.tableName, limits: limits(2), now: () => now });
    await limiter.take("windows");
    await limiter.take("windows");
    expect(await limiter.take("windows")).toEqual({ ok: false, limit: 2, retryAfterSeconds: 1 });
    now = T0 + 750;
    expect(await limiter.take("windows")).toEqual({ ok: true });
  });

  it("applies the operator's per-tenant limit over the stage default", async () => {
    const limiter = createDynamoRateLimiter({
      client: table.client,
      tableName: table.tableName,
      limits: limits(2, { big: 6 }),
      now: () => T0,
    });
    const big = await Promise.all(Array.from({ length: 8 }, () => limiter.take("big")));
    expect(big.filter((d) => d.ok)).toHaveLength(6);
    expect(big.find((d) => !d.ok)).toEqual({ ok: false, limit: 6, retryAfterSeconds: 1 });
  });

  it("lets a request through when the counter cannot be written (the limiter never takes the service down)", async () => {
    const broken = { send: async () => Promise.reject(new Error("throttled")) } as unknown as typeof table.client;
    const limiter = createDynamoRateLimiter({ client: broken, tableName: table.tableName, limits: limits(1), now: () => T0, log: silentLog });
    expect(await limiter.take("anyone")).toEqual({ ok: true });
  });
});

describe("over HTTP", () => {
  const appWith = (perSecond: number) => {
    const { deps, metrics } = testContainer({ store: table.store });
    const rateLimiter = createDynamoRateLimiter({ client: table.client, tableName: table.tableName, limits: limits(perSecond), now: () => T0 });
    const app = createHttpApp({
      deps,
      resolveTenant: staticKeyResolver(new Map([["key-a", "http-a"], ["key-b", "http-b"]])),
      groups: allRouteGroups,
      rateLimiter,
    });
    return { app, metrics };
  };
  const get = (app: ReturnType<typeof appWith>["app"], key: string) =>
    app.request("/v1/processes", { headers: { authorization: `Bearer ${key}` } });

  it("answers 429 rate.limited with Retry-After past the tenant's limit, while another tenant is served", async () => {
    const { app, metrics } = appWith(3);
    const answers = await Promise.all(Array.from({ length: 5 }, () => get(app, "key-a")));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429]);
    const refused = answers.find((r) => r.status === 429)!;
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toEqual({
      error: {
        code: "rate.limited",
        message: "more than 3 requests per second for this tenant; retry after 1 s",
        details: { limit: 3, retryAfterSeconds: 1 },
      },
    });
    expect(metrics.limited).toEqual(["http-a", "http-a"]);
    expect((await get(app, "key-b")).status).toBe(200);
  });

  it("refuses an unknown key before counting, and never limits /health", async () => {
    const { app } = appWith(1);
    for (let i = 0; i < 3; i++) expect((await get(app, "nobody")).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await app.request("/health")).status).toBe(200);
    expect(await table.client.send(new GetCommand({ TableName: table.tableName, Key: rateLimitKey("nobody", T0) }))).not.toHaveProperty("Item");
  });
});
