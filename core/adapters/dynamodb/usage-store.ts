/** The usage port over the per-tenant usage and budget items (inputs in usage-params.ts). */
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "../../domain/zod.js";
import type { UsageStore } from "../../ports/store.js";
import { isConditionFailure } from "./conditions.js";
import type { StoreContext } from "./context.js";
import { readItem } from "./items.js";
import { addUsageParams, getBudgetParams, getUsageParams, putBudgetParams, reserveTokensParams } from "./usage-params.js";

const counter = z.optional(z.number());

export const UsageItem = z.object({
  pk: z.string(),
  sk: z.string(),
  type: z.literal("USAGE"),
  tenantId: z.string(),
  day: z.string(),
  tokens: counter,
  calls: counter,
  inputTokens: counter,
  outputTokens: counter,
});

export const BudgetItem = z.object({
  pk: z.string(),
  sk: z.string(),
  type: z.literal("BUDGET"),
  tenantId: z.string(),
  dailyTokens: z.optional(z.union([z.number(), z.literal("unlimited")])),
  updatedAt: z.string(),
});

export function createUsageStore({ client, tableName }: StoreContext): UsageStore {
  return {
    async getTenantBudget(tenantId) {
      const out = await client.send(new GetCommand(getBudgetParams(tableName, tenantId)));
      return out.Item ? (readItem(BudgetItem, out.Item).dailyTokens ?? null) : null;
    },

    async putTenantBudget(tenantId, budget, at) {
      await client.send(new PutCommand(putBudgetParams(tableName, tenantId, budget, at)));
    },

    async getUsage(tenantId, day) {
      const out = await client.send(new GetCommand(getUsageParams(tableName, tenantId, day)));
      const item = out.Item ? readItem(UsageItem, out.Item) : undefined;
      return {
        day,
        tokens: item?.tokens ?? 0,
        calls: item?.calls ?? 0,
        inputTokens: item?.inputTokens ?? 0,
        outputTokens: item?.outputTokens ?? 0,
      };
    },

    async reserveTokens(tenantId, day, tokens, limit) {
      if (tokens > limit) return { ok: false, reason: "over_budget" };
      try {
        await client.send(new UpdateCommand(reserveTokensParams(tableName, tenantId, day, tokens, limit)));
        return { ok: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        return { ok: false, reason: "over_budget" };
      }
    },

    async addUsage(tenantId, day, add) {
      await client.send(new UpdateCommand(addUsageParams(tableName, tenantId, day, add)));
    },
  };
}
