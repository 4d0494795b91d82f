/**
 * `npm run budget -- <set|clear|show>`: the operator's daily model budget of a tenant, and what it
 * used, in a stage's table (TABLE_NAME; DYNAMODB_ENDPOINT for DynamoDB Local). Tenants cannot set
 * their own budget: no API route writes it (docs/reliability.md, "Limits, budgets and rates").
 *
 * @example
 * TABLE_NAME=team-a-vancetope-memory-table npm run budget -- set --tenant team-a --daily-tokens 2000000
 * npm run budget -- set --tenant team-b --daily-tokens unlimited
 * npm run budget -- clear --tenant team-a          (back to TENANT_DAILY_TOKEN_BUDGET)
 * npm run budget -- show --tenant team-a [--day 2026-03-01] [--json]
 */
import { createDynamoStore } from "../core/adapters/dynamodb/store.js";
import type { TenantBudget, UsageStore } from "../core/ports/store.js";
import { utcDay } from "../core/services/compaction/model-budget.js";
import { runAsScript, runCommandLine, TABLE_ENVIRONMENT, tableFrom, type TableCliIo, tenantArg, UsageError } from "./cli.js";

export const USAGE = `usage:
  budget set --tenant <tenantId> --daily-tokens <tokens>|unlimited   the tenant's own budget (tokens per UTC day)
  budget clear --tenant <tenantId>                                    back to the deployment's TENANT_DAILY_TOKEN_BUDGET
  budget show --tenant <tenantId> [--day YYYY-MM-DD] [--json]         its budget and a day's usage (default: today, UTC)
${TABLE_ENVIRONMENT}`;

export interface BudgetCliIo extends TableCliIo {
  /** Injected by tests; built from env otherwise. */
  store?: Pick<UsageStore, "getTenantBudget" | "putTenantBudget" | "getUsage">;
  now?: () => Date;
}

function storeFrom(env: BudgetCliIo["env"]) {
  return createDynamoStore(tableFrom(env));
}

function budgetArg(value: string | undefined): TenantBudget {
  if (!value) throw new UsageError("--daily-tokens is required");
  if (value.trim().toLowerCase() === "unlimited") return "unlimited";
  const tokens = Number(value);
  if (!Number.isSafeInteger(tokens) || tokens < 1) throw new UsageError(`--daily-tokens must be 'unlimited' or a whole number from 1, got '${value}'`);
  return tokens;
}

function dayArg(value: string | undefined, now: Date): string {
  if (value === undefined) return utcDay(now);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) throw new UsageError(`--day must be YYYY-MM-DD, got '${value}'`);
  return value;
}

const describeBudget = (b: TenantBudget | null) =>
  b === null ? "the deployment's default (TENANT_DAILY_TOKEN_BUDGET)" : b === "unlimited" ? "unlimited" : `${b} tokens a day`;

/** Runs one command; resolves to the process exit code (0 ok, 2 usage). */
export async function runBudgetCli(argv: string[], io: BudgetCliIo): Promise<number> {
  const options = {
    tenant: { type: "string" },
    "daily-tokens": { type: "string" },
    day: { type: "string" },
    json: { type: "boolean", default: false },
  } as const;
  return runCommandLine(argv, USAGE, io, options, async (command, values) => {
    const now = (io.now ?? (() => new Date()))();

    if (command === "set" || command === "clear") {
      const tenantId = tenantArg(values.tenant);
      const budget = command === "set" ? budgetArg(values["daily-tokens"]) : null;
      const store = io.store ?? storeFrom(io.env);
      await store.putTenantBudget(tenantId, budget, now.toISOString());
      io.out(`tenant '${tenantId}': ${describeBudget(budget)} (containers pick it up within a minute)`);
      return 0;
    }

    if (command === "show") {
      const tenantId = tenantArg(values.tenant);
      const day = dayArg(values.day, now);
      const store = io.store ?? storeFrom(io.env);
      const [budget, usage] = await Promise.all([store.getTenantBudget(tenantId), store.getUsage(tenantId, day)]);
      if (values.json) io.out(JSON.stringify({ tenantId, budget, usage }));
      else {
        io.out(`tenant '${tenantId}': budget ${describeBudget(budget)}`);
        io.out(`${day} (UTC): ${usage.tokens} tokens counted, ${usage.calls} calls, ${usage.inputTokens} input / ${usage.outputTokens} output tokens`);
      }
      return 0;
    }

    throw new UsageError(`unknown command '${command}'`);
  });
}

await runAsScript(import.meta.url, runBudgetCli);
