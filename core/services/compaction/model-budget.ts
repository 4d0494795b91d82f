/**
 * Each tenant's daily model budget (docs/reliability.md, "Limits, budgets and rates"): tokens per UTC day,
 * set per tenant by the operator (`npm run budget`) or for the deployment
 * (`TENANT_DAILY_TOKEN_BUDGET`, default unlimited). Model work reserves its upper estimate first
 * (one conditional ADD on the tenant's usage item of the day, so concurrent folds cannot together
 * pass the budget) and corrects the count to what its calls used afterwards. Work that needs the
 * model is refused while the reservation does not fit: a 429 `budget.exceeded` for the routes that
 * need it, a `budget_exceeded` reason for a turn, a discarded job for the worker.
 */
import { Lru } from "../lru.js";
import { AppError } from "../../domain/errors.js";
import type { ModelPurpose, ModelUse } from "../../ports/metrics.js";
import type { UsageStore } from "../../ports/store.js";
import type { BudgetPolicy, ServiceDeps } from "../deps.js";

/** The `reason` of a compaction result, and the start of a discarded job's reason, when the budget refused it. */
export { BUDGET_EXCEEDED, budgetDiscardReason, type BudgetRefusal } from "../../domain/fold/refusal.js";
import { BUDGET_EXCEEDED, type BudgetRefusal } from "../../domain/fold/refusal.js";

/** Budget items one container keeps cached. */
const BUDGET_CACHE_ENTRIES = 1_000;

/**
 * The tenant's own budget (its stored item), else `defaultDailyTokens` (null: unlimited). Read
 * once a minute per tenant and container, like the settings: an operator's change reaches every
 * container within a minute.
 */
export function createBudgetPolicy(o: {
  store: Pick<UsageStore, "getTenantBudget">;
  defaultDailyTokens: number | null;
  ttlMs?: number;
  now?: () => number;
}): BudgetPolicy {
  const ttl = o.ttlMs ?? 60_000;
  const now = o.now ?? Date.now;
  const cache = new Lru<string, { at: number; value: Promise<number | null> }>({ maxEntries: BUDGET_CACHE_ENTRIES });
  return {
    dailyTokens(tenantId) {
      const hit = cache.get(tenantId);
      if (hit && now() - hit.at < ttl) return hit.value;
      const value = o.store.getTenantBudget(tenantId).then((own) => (own === null ? o.defaultDailyTokens : own === "unlimited" ? null : own));
      cache.set(tenantId, { at: now(), value });
      value.catch(() => cache.delete(tenantId));
      return value;
    },
  };
}

/** A budget that never refuses (tests and tools that build their own dependencies). */
export const UNLIMITED_BUDGET: BudgetPolicy = { dailyTokens: async () => null };

/** `YYYY-MM-DD` of `at` in UTC: the day a budget counts. */
export const utcDay = (at: Date) => at.toISOString().slice(0, 10);


const nextUtcMidnight = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();

/** A reservation made for model work (nothing reserved when the tenant is unlimited). */
export type Admission = { ok: true; tenantId: string; day: string; reserved: number } | { ok: false; refusal: BudgetRefusal };

async function refuse(deps: ServiceDeps, tenantId: string, day: string, dailyTokens: number, neededTokens: number): Promise<BudgetRefusal> {
  const usedTokens = (await deps.store.getUsage(tenantId, day)).tokens;
  deps.metrics.budgetExceeded(tenantId);
  deps.log.warn("model work refused: daily budget", { tenantId, day, dailyTokens, usedTokens, neededTokens });
  return { dailyTokens, usedTokens, neededTokens, day, resetsAt: nextUtcMidnight(day) };
}

/**
 * Reserves `neededTokens` (an upper estimate of the work) against the tenant's budget of today.
 * Refused when the day's count plus the estimate would pass the budget; two containers reserving
 * at once are serialized by DynamoDB, so at most one of them takes what is left.
 */
export async function admitModelWork(deps: ServiceDeps, tenantId: string, neededTokens: number): Promise<Admission> {
  const dailyTokens = await deps.budget.dailyTokens(tenantId);
  const day = utcDay(deps.clock.now());
  if (dailyTokens === null) return { ok: true, tenantId, day, reserved: 0 };
  const reserved = Math.max(0, Math.ceil(neededTokens));
  const out = await deps.store.reserveTokens(tenantId, day, reserved, dailyTokens);
  if (out.ok) return { ok: true, tenantId, day, reserved };
  return { ok: false, refusal: await refuse(deps, tenantId, day, dailyTokens, reserved) };
}

/**
 * Whether model work of `neededTokens` would be refused now, without reserving anything: a turn
 * that would queue a fold, and the routes that need the model, ask before they start.
 */
export async function budgetRefusal(deps: ServiceDeps, tenantId: string, neededTokens = 1): Promise<BudgetRefusal | null> {
  const dailyTokens = await deps.budget.dailyTokens(tenantId);
  if (dailyTokens === null) return null;
  const day = utcDay(deps.clock.now());
  const used = (await deps.store.getUsage(tenantId, day)).tokens;
  return used + neededTokens > dailyTokens ? refuse(deps, tenantId, day, dailyTokens, neededTokens) : null;
}

/**
 * Records what admitted work used: the EMF metrics (per tenant and purpose) and the day's counters,
 * the reservation corrected to the tokens the calls used. A failed write is logged, never thrown:
 * the work is done and its result must not be lost over the count (the reservation then stays
 * counted, which errs on the side of the budget).
 */
export async function recordModelUse(deps: ServiceDeps, admission: Extract<Admission, { ok: true }>, purpose: ModelPurpose, use: ModelUse) {
  deps.metrics.modelUsage(admission.tenantId, purpose, use);
  const tokens = use.inputTokens + use.outputTokens;
  try {
    await deps.store.addUsage(admission.tenantId, admission.day, {
      tokens: tokens - admission.reserved,
      calls: use.calls,
      inputTokens: use.inputTokens,
      outputTokens: use.outputTokens,
    });
  } catch (e) {
    deps.log.warn("model usage not recorded", { tenantId: admission.tenantId, day: admission.day, ...use, error: String(e) });
  }
}

/** The 429 of a route whose work needs the model while the tenant's budget is used up. */
export function budgetExceededError(r: BudgetRefusal, now: Date): AppError {
  const retryAfterSeconds = Math.max(1, Math.ceil((Date.parse(r.resetsAt) - now.getTime()) / 1000));
  return new AppError(
    "too_many_requests",
    "budget.exceeded",
    `the tenant's daily model budget is used up: ${r.usedTokens} of ${r.dailyTokens} tokens used on ${r.day} (UTC), this work needs up to ${r.neededTokens}; it resets at ${r.resetsAt}`,
    { ...r, retryAfterSeconds },
  );
}

