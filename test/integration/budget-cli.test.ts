/** `npm run budget`: the operator sets, clears and reads a tenant's daily model budget in the table (DynamoDB Local). */
import { describe, expect, it } from "vitest";
import { runBudgetCli } from "../../scripts/budgets.js";
import { freshTable } from "../support/dynamo.js";

async function cli(env: Record<string, string>, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const now = () => new Date("2026-03-01T12:00:00.000Z");
  const code = await runBudgetCli(argv, { env, out: (l) => out.push(l), err: (l) => err.push(l), now });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("npm run budget", () => {
  it("sets a tenant's budget, shows it with the day's usage, and clears it back to the deployment's default", async () => {
    const table = await freshTable("budget-cli");
    const env = { TABLE_NAME: table.tableName, DYNAMODB_ENDPOINT: table.endpoint };

    expect((await cli(env, "set", "--tenant", "team-a", "--daily-tokens", "2000000")).code).toBe(0);
    expect(await table.store.getTenantBudget("team-a")).toBe(2_000_000);
    await table.store.addUsage("team-a", "2026-03-01", { tokens: 1500, calls: 2, inputTokens: 1200, outputTokens: 300 });

    const shown = await cli(env, "show", "--tenant", "team-a");
    expect(shown.out).toBe("tenant 'team-a': budget 2000000 tokens a day\n2026-03-01 (UTC): 1500 tokens counted, 2 calls, 1200 input / 300 output tokens");
    const json = JSON.parse((await cli(env, "show", "--tenant", "team-a", "--day", "2026-02-28", "--json")).out);
    expect(json).toEqual({ tenantId: "team-a", budget: 2_000_000, usage: { day: "2026-02-28", tokens: 0, calls: 0, inputTokens: 0, outputTokens: 0 } });

    expect((await cli(env, "set", "--tenant", "team-a", "--daily-tokens", "Unlimited")).code).toBe(0);
    expect(await table.store.getTenantBudget("team-a")).toBe("unlimited");
    const cleared = await cli(env, "clear", "--tenant", "team-a");
    expect(cleared.out).toContain("the deployment's default (TENANT_DAILY_TOKEN_BUDGET)");
    expect(await table.store.getTenantBudget("team-a")).toBeNull();
  });

  it("refuses bad usage with exit code 2 and the usage text", async () => {
    const env = { TABLE_NAME: "unused" };
    for (const argv of [
      [],
      ["set", "--tenant", "team-a"],
      ["set", "--tenant", "team-a", "--daily-tokens", "0"],
      ["set", "--tenant", "team-a", "--daily-tokens", "1.5"],
      ["set", "--tenant", "bad#tenant", "--daily-tokens", "10"],
      ["show", "--tenant", "team-a", "--day", "March 1"],
      ["raise", "--tenant", "team-a"],
      ["show", "--tenant", "team-a", "--bogus"],
    ]) {
      const res = await cli(env, ...argv);
      expect(res.code, argv.join(" ")).toBe(2);
    }
    expect((await cli({}, "show", "--tenant", "team-a")).err).toContain("TABLE_NAME is not set");
  });
});
