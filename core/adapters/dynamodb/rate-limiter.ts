/**
 * The per-tenant rate limit over the one table: a counter item per tenant and one-second window,
 * taken by ONE conditional UpdateItem per request (no read): the count goes up only while it is
 * below the tenant's limit, so concurrent requests from any number of containers never admit more
 * than the limit in a window. Why a fixed window and what it costs: docs/reliability.md, "Limits,
 * budgets and rates".
 *
 * @example
 * const limiter = createDynamoRateLimiter({ client, tableName, limits: { perSecond: 20, perTenant: new Map() } });
 * const decision = await limiter.take("team-a"); // { ok: true } or { ok: false, limit, retryAfterSeconds }
 */
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { UpdateCommand, type DynamoDBDocumentClient, type UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import { limitFor, rateWindow, retryAfterSeconds, type RateLimits } from "../../domain/rate-limit.js";
import type { Log } from "../../ports/logger.js";
import type { RateLimiter } from "../../ports/rate-limiter.js";
import { guarded, type Fragment } from "./conditions.js";
import { RATE_SK, rateWindowPk, TTL_ATTRIBUTE } from "./keys.js";

/** How long a spent window's item stays before TTL may remove it (it is never read again). */
const EXPIRY_GRACE_SECONDS = 60;

export const rateLimitKey = (tenantId: string, nowMs: number) => ({
  pk: rateWindowPk(tenantId, rateWindow(nowMs).startSeconds),
  sk: RATE_SK,
});

/** The window's count is still below `limit` (no count yet: the first request). */
const countBelow = (limit: number): Fragment => ({
  expression: "attribute_not_exists(#n) OR #n < :limit",
  names: { "#n": "n" },
  values: { ":limit": limit },
});

/** Counts one request of the window, refused by the condition once the count reached `limit`. */
export function takeParams(tableName: string, tenantId: string, limit: number, nowMs: number): UpdateCommandInput {
  return countParams(tableName, rateLimitKey(tenantId, nowMs), limit, rateWindow(nowMs).endMs);
}

/** One more in the counter item `key` of a window ending at `endMs`, refused once it holds `limit`. */
export function countParams(tableName: string, key: { pk: string; sk: string }, limit: number, endMs: number): UpdateCommandInput {
  return guarded(
    { TableName: tableName, Key: key },
    {
      expression: "ADD #n :one SET #ttl = :ttl",
      names: { "#n": "n", "#ttl": TTL_ATTRIBUTE },
      values: { ":one": 1, ":ttl": endMs / 1_000 + EXPIRY_GRACE_SECONDS },
    },
    countBelow(limit),
  );
}

export interface DynamoRateLimiterOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  limits: RateLimits;
  /** Epoch milliseconds; tests pin the window. */
  now?: () => number;
  log?: Log;
}

export function createDynamoRateLimiter(options: DynamoRateLimiterOptions): RateLimiter {
  const { client, tableName, limits, log } = options;
  const now = options.now ?? Date.now;
  return {
    async take(tenantId) {
      const at = now();
      const limit = limitFor(limits, tenantId);
      if (limit === 0) return { ok: true };
      try {
        await client.send(new UpdateCommand(takeParams(tableName, tenantId, limit, at)));
        return { ok: true };
      } catch (e) {
        if (e instanceof ConditionalCheckFailedException) return { ok: false, limit, retryAfterSeconds: retryAfterSeconds(at) };
        // The limit protects capacity; a counter that cannot be written (throttling, an outage
        // the request itself will meet anyway) must not refuse every tenant's requests.
        log?.warn("rate limit not counted", { tenantId, error: e instanceof Error ? e.message : String(e) });
        return { ok: true };
      }
    },
  };
}
