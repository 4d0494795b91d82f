/**
 * The limits of a tenant's or a project's settings (`PUT /v1/settings`) inside the deployment's own
 * ranges (docs/configuration.md, "Tunables"). Pure: checked on save, applied again on every read.
 */
import { invalid } from "./errors.js";
import { TUNABLES_ENV, type Tunables, type TunablesOverride } from "./tunables.js";

/**
 * Where a tenant's or a project's settings (`PUT /v1/settings`) stop short of the deployment's own
 * ranges: the settings that multiply one fold's summarizer calls or their burst against the
 * provider's rate limit, which every tenant of a deployment shares (docs/reliability.md,
 * "Limits, budgets and rates"). `min`: a floor below the deployment's; `operatorCeiling`: at most the value the
 * deployment runs with (defaults < environment). Every other setting is bounded per fold by
 * `maxSummarizerCalls` and per day by the tenant's budget.
 */
export const TENANT_LIMITS: Readonly<Partial<Record<keyof Tunables, { min?: number; operatorCeiling?: true }>>> = Object.freeze({
  // Smaller inputs mean more calls per fold. 8,000 chars still hold four partial summaries of the
  // default 400 tokens, so a merge round shrinks its input.
  maxSourceChars: { min: 8_000 },
  summarizerConcurrency: { operatorCeiling: true },
  maxSummarizerCalls: { operatorCeiling: true },
});

/** What a tenant's or project's `override` sets past {@link TENANT_LIMITS}, per field. */
function tenantLimitIssues(override: TunablesOverride, operator: Tunables): Array<{ field: string; message: string }> {
  const issues: Array<{ field: string; message: string }> = [];
  for (const [field, limit] of Object.entries(TENANT_LIMITS) as Array<[keyof Tunables, { min?: number; operatorCeiling?: true }]>) {
    const value = override[field];
    if (typeof value !== "number") continue;
    if (limit.min !== undefined && value < limit.min) {
      issues.push({ field, message: `must be >= ${limit.min} in tenant or project settings (${TUNABLES_ENV[field]} may go lower)` });
    }
    const ceiling = operator[field] as number;
    if (limit.operatorCeiling && value > ceiling) {
      issues.push({ field, message: `must be <= ${ceiling}, this deployment's ${TUNABLES_ENV[field]}` });
    }
  }
  return issues;
}

/**
 * Refuses a tenant's or project's override past {@link TENANT_LIMITS} (a `tunables.invalid` input
 * error naming the fields); `operator` is what the deployment runs with (defaults < environment).
 *
 * @example checkTenantLimits({ maxSourceChars: 1000 }, DEFAULT_TUNABLES) // throws: must be >= 8000
 */
export function checkTenantLimits(override: TunablesOverride, operator: Tunables): void {
  const issues = tenantLimitIssues(override, operator);
  if (issues.length > 0) {
    throw invalid("tunables.invalid", `Invalid compaction tunables: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`, {
      fields: [...new Set(issues.map((i) => i.field))],
      issues,
    });
  }
}

/**
 * A stored tenant or project layer pulled inside {@link TENANT_LIMITS}: a value saved before a
 * limit existed, or before the deployment lowered its ceiling, counts as the nearest allowed one.
 */
export function withinTenantLimits(layer: TunablesOverride, operator: Tunables): TunablesOverride {
  const result: Record<string, unknown> = { ...layer };
  for (const [field, limit] of Object.entries(TENANT_LIMITS) as Array<[keyof Tunables, { min?: number; operatorCeiling?: true }]>) {
    const value = layer[field];
    if (typeof value !== "number") continue;
    let bounded = value;
    if (limit.min !== undefined) bounded = Math.max(bounded, limit.min);
    if (limit.operatorCeiling) bounded = Math.min(bounded, operator[field] as number);
    result[field] = bounded;
  }
  return result as TunablesOverride;
}
