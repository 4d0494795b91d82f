/**
 * The per-tenant request rate (docs/reliability.md, "Limits, budgets and rates"): a fixed window
 * of one second per tenant, counted in the table so that it holds across Lambda containers. Pure
 * window arithmetic and the operator's limits; the counter itself is a store adapter.
 */

/** One window: counts reset on each whole second of the clock. */
const RATE_WINDOW_MS = 1_000;
/** The stage default when the operator sets none (stacks/stage.ts). */
export const DEFAULT_TENANT_RATE_LIMIT = 20;
/** Highest limit accepted, per second: above it one tenant's counter item would near a partition's write ceiling. */
export const MAX_TENANT_RATE_LIMIT = 500;

export interface RateLimits {
  /** Requests per second of any tenant without a limit of its own; 0: those tenants are not limited. */
  perSecond: number;
  /** The operator's limits for named tenants. */
  perTenant: ReadonlyMap<string, number>;
}

/** The tenant's requests per second; 0 means not limited. */
export const limitFor = (limits: RateLimits, tenantId: string): number => limits.perTenant.get(tenantId) ?? limits.perSecond;

/** The window of imports (docs/api.md, "Export and import"): a tenant's imports are counted per minute. */
export const IMPORT_WINDOW_MS = 60_000;
/** Imports a tenant may start per minute when the operator sets no other figure. */
export const DEFAULT_IMPORTS_PER_MINUTE = 10;

/** The window `nowMs` falls in: its start in epoch seconds, and its end in milliseconds. */
export function rateWindow(nowMs: number, windowMs = RATE_WINDOW_MS): { startSeconds: number; endMs: number } {
  const start = Math.floor(nowMs / windowMs) * windowMs;
  return { startSeconds: start / 1_000, endMs: start + windowMs };
}

/** Whole seconds until the window ends, at least 1 (the `Retry-After` header takes seconds). */
export const retryAfterSeconds = (nowMs: number, windowMs = RATE_WINDOW_MS): number =>
  Math.max(1, Math.ceil((rateWindow(nowMs, windowMs).endMs - nowMs) / 1_000));

export type RateDecision = { ok: true } | { ok: false; limit: number; retryAfterSeconds: number };
