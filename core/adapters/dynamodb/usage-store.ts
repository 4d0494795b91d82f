/** The usage port over the per-tenant usage and budget items (inputs in usage-params.ts). */
import { GetCommand, PutCommand, type UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import * as z from "../../domain/zod.js";
import type { UsageStore } from "../../ports/store.js";
import { failedParts, itemIsNew, when, type Part } from "./conditions.js";
import { TENANT_ERASED_SK, usagePk } from "./keys.js";
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

/**
 * A usage write with the check that the tenant carries no erasure mark (erasure-params.ts), in one
 * transaction: a fold in flight when its tenant is erased writes nothing (`erased`).
 */
async function unlessErased({ tableName, sendTransaction }: StoreContext, tenantId: string, update: UpdateCommandInput): Promise<"done" | "erased" | "refused"> {
  const parts: Part<"erased" | "usage">[] = [
    ["erased", { ConditionCheck: { TableName: tableName, Key: { pk: usagePk(tenantId), sk: TENANT_ERASED_SK }, ...when(itemIsNew()) } }],
    ["usage", { Update: update }],
  ];
  try {
    await sendTransaction(parts);
    return "done";
  } catch (e) {
    const failed = failedParts(e, parts);
    if (!failed) throw e;
    return failed.erased ? "erased" : "refused";
  }
}

export function createUsageStore(ctx: StoreContext): UsageStore {
  const { client, tableName } = ctx;
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
      // An erased tenant has no budget left either.
      const out = await unlessErased(ctx, tenantId, reserveTokensParams(tableName, tenantId, day, tokens, limit));
      return out === "done" ? { ok: true } : { ok: false, reason: "over_budget" };
    },

    async addUsage(tenantId, day, add) {
      await unlessErased(ctx, tenantId, addUsageParams(tableName, tenantId, day, add));
    },
  };
}
