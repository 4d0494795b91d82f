/**
 * The chaos harness deletes processes (tools/chaos/plan-deletes.ts, ops-delete.ts): the plan puts
 * the deletes late and in flight, a run with them ends with zero violations, and a store that
 * lets an item of a deleted process appear after the delete is caught (the deletion check is not
 * vacuous).
 */
import { PutCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { processPk } from "../../core/adapters/dynamodb/keys.js";
import type { Store } from "../../core/ports/store.js";
import { formatReport, runChaos } from "../../tools/chaos/harness.js";
import { planChaos } from "../../tools/chaos/plan.js";
import { dynamoEndpoint } from "../support/dynamo.js";

describe("the chaos harness deletes processes", () => {
  it("plans one delete per tenant, late, after a compaction whose commit is held past it", () => {
    const plan = planChaos({ seed: 20261201, turns: 400 });
    const deleting = plan.engines.filter((e) => e.ops.some((op) => op.spec.kind === "delete"));
    expect(deleting.map((e) => e.tenantId).sort()).toEqual(["chaos-a", "chaos-b"]);
    for (const e of deleting) {
      expect(plan.engines.some((other) => other.parentProcessId === e.processId)).toBe(false);
      const at = e.ops.findIndex((op) => op.spec.kind === "delete");
      expect(at / e.ops.length).toBeGreaterThan(0.6);
      const before = e.ops[at - 1]!;
      expect(before.spec.kind).toBe("compact");
      expect(before.stall).toMatchObject({ method: "commitCompaction", detach: true });
    }
  });

  it("a run with deletes in flight ends with every deleted process erased and zero violations", async () => {
    const report = await runChaos({ seed: 7, turns: 120, engines: 4, endpoint: dynamoEndpoint() });
    const lines = formatReport(report).join("\n");
    expect(report.violations, lines).toEqual([]);
    expect(report.deletes, lines).toMatchObject({ started: 2, completed: 2 });
    expect(report.deletes.inFlight, lines).toBeGreaterThan(0);
    expect(report.compactions.committed, lines).toBeGreaterThan(0);
  }, 240_000);

  it("reports an item that appears after the delete", async () => {
    // A store that, each time it finds a process deleted, leaves an item in its partition.
    let n = 0;
    const leaky = (store: Store, table: { client: DynamoDBDocumentClient; tableName: string }): Store => ({
      ...store,
      getProcess: async (key) => {
        const found = await store.getProcess(key);
        if (!found) await table.client.send(new PutCommand({ TableName: table.tableName, Item: { pk: processPk(key), sk: `MSG#leaked-${++n}` } }));
        return found;
      },
    });
    const report = await runChaos({ seed: 7, turns: 80, engines: 4, endpoint: dynamoEndpoint(), wrapStore: leaky });
    expect(n).toBeGreaterThan(0);
    expect(report.violations.join("\n")).toMatch(/deleted process chaos-\w\/p1, after a later call: item MSG#leaked-\d+ exists/);
  }, 120_000);
});
