/**
 * The HTTP routes' per-tenant rate limiter, from the environment (core/composition/env.ts,
 * `readRateLimits`): none when no limit is configured, else the counter in the service's table.
 */
import { createDocumentClient } from "../adapters/dynamodb/client.js";
import { createDynamoRateLimiter } from "../adapters/dynamodb/rate-limiter.js";
import type { Log } from "../ports/logger.js";
import type { RateLimiter } from "../ports/rate-limiter.js";
import type { Tracing } from "../ports/tracing.js";
import { readRateLimits, readTableEnv, type Env } from "./env.js";

export function createRateLimiterFromEnv(env: Env, log: Log, tracing?: Tracing): RateLimiter | undefined {
  const limits = readRateLimits(env);
  if (!limits) return undefined;
  const { tableName, dynamoEndpoint } = readTableEnv(env);
  return createDynamoRateLimiter({ client: createDocumentClient({ endpoint: dynamoEndpoint, capture: tracing?.capture }), tableName, limits, log });
}
