/**
 * Pure DynamoDB inputs of per-tenant model usage and budgets (docs/reliability.md,
 * "Limits, budgets and rates"): one item per tenant and UTC day, counted with atomic ADDs, and the operator's budget
 * item. Nothing here sends: tests assert the whole input.
 */
import type { GetCommandInput, PutCommandInput, UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { DailyUsage, TenantBudget } from "../../ports/store.js";
import { guarded, type Fragment } from "./conditions.js";
import { BUDGET_SK, TTL_ATTRIBUTE, usageDaySk, usagePk } from "./keys.js";

/** How long a day's usage item is kept (DynamoDB's TTL deletes it after that). */
const USAGE_RETENTION_DAYS = 90;

/** TTL of a day's item, in epoch seconds: the end of that day plus {@link USAGE_RETENTION_DAYS}. */
export const usageExpiry = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) + (USAGE_RETENTION_DAYS + 1) * 86_400;

export const getUsageParams = (tableName: string, tenantId: string, day: string): GetCommandInput => ({
  TableName: tableName,
  Key: { pk: usagePk(tenantId), sk: usageDaySk(day) },
  ConsistentRead: true,
});

/** The attributes of a day's item, and their placeholders, in one order. */
const COUNTERS = ["tokens", "calls", "inputTokens", "outputTokens"] as const satisfies ReadonlyArray<keyof DailyUsage>;

/** The update that ADDs to the day's counters (creating the item), and keeps its identity fields. */
function addUpdate(tenantId: string, day: string, add: Partial<Omit<DailyUsage, "day">>): Fragment {
  const counters = COUNTERS.filter((c) => add[c] !== undefined && add[c] !== 0);
  const values: Record<string, unknown> = { ":type": "USAGE", ":tenant": tenantId, ":day": day, ":ttl": usageExpiry(day) };
  const names: Record<string, string> = { "#ttl": TTL_ATTRIBUTE };
  for (const c of counters) {
    names[`#${c}`] = c;
    values[`:${c}`] = add[c];
  }
  const addClause = counters.length > 0 ? ` ADD ${counters.map((c) => `#${c} :${c}`).join(", ")}` : "";
  return {
    expression: `SET #type = :type, tenantId = :tenant, #day = :day, #ttl = :ttl${addClause}`,
    names: { ...names, "#type": "type", "#day": "day" },
    values,
  };
}

const usageDayKey = (tenantId: string, day: string) => ({ pk: usagePk(tenantId), sk: usageDaySk(day) });

/** One UpdateItem that ADDs to the day's counters. */
export const addUsageParams = (tableName: string, tenantId: string, day: string, add: Partial<Omit<DailyUsage, "day">>): UpdateCommandInput =>
  guarded({ TableName: tableName, Key: usageDayKey(tenantId, day) }, addUpdate(tenantId, day, add));

/** The day's token count is at most `room` before the ADD (no count yet: zero). */
const tokensAtMost = (room: number): Fragment => ({
  expression: "attribute_not_exists(#tokens) OR #tokens <= :room",
  names: { "#tokens": "tokens" },
  values: { ":room": room },
});

/**
 * ADD `tokens` only while the day's count stays at most `limit`: the condition compares the count
 * before the ADD with `limit - tokens` (DynamoDB conditions do no arithmetic on attributes).
 */
export function reserveTokensParams(tableName: string, tenantId: string, day: string, tokens: number, limit: number): UpdateCommandInput {
  return guarded({ TableName: tableName, Key: usageDayKey(tenantId, day) }, addUpdate(tenantId, day, { tokens }), tokensAtMost(limit - tokens));
}

export const getBudgetParams = (tableName: string, tenantId: string): GetCommandInput => ({
  TableName: tableName,
  Key: { pk: usagePk(tenantId), sk: BUDGET_SK },
  ConsistentRead: true,
});

/** Replaces the budget item; without a budget it keeps only the date (no DeleteItem: the roles have none). */
export const putBudgetParams = (tableName: string, tenantId: string, budget: TenantBudget | null, at: string): PutCommandInput => ({
  TableName: tableName,
  Item: { pk: usagePk(tenantId), sk: BUDGET_SK, type: "BUDGET", tenantId, ...(budget !== null ? { dailyTokens: budget } : {}), updatedAt: at },
});
