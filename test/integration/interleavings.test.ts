/**
 * The interleaving checker (tools/interleavings/, tools/interleavings/README.md "The interleaving checker")
 * on small budgets: every scenario's first schedules (fewest preemptions first) keep the
 * invariants; the schedule that once re-archived restored messages into a reverted fold replays
 * clean; and the checker finds a lost update by itself and replays it, so it is not vacuous.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../../core/adapters/dynamodb/client.js";
import { createTable } from "../../core/adapters/dynamodb/create-table.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { exploreScenario, replaySchedule } from "../../tools/interleavings/checker.js";
import { scenario } from "../../tools/interleavings/scenario.js";
import { SCENARIOS, scenarioById } from "../../tools/interleavings/scenarios.js";
import { createProcess, TENANT, type World } from "../../tools/interleavings/setup.js";
import { largeResultSha } from "../../tools/interleavings/native-loop.js";
import { dynamoEndpoint } from "../support/dynamo.js";

let world: World;

beforeAll(async () => {
  const client = createDocumentClient({ endpoint: dynamoEndpoint() });
  world = { client, tableName: `il-${randomUUID().slice(0, 8)}` };
  await createTable(client, world.tableName);
});

/** Two actors that read a counter and write it back plus one, with no condition: a lost update. */
const lostUpdate = scenario({
  id: "lost-update",
  title: "two unconditional read-modify-writes of one counter",
  build: async (stage) => {
    await createProcess(stage);
    return {};
  },
  actors: (stage) => {
    const bump = (name: string) => ({
      name,
      async run(deps: ServiceDeps) {
        const stored = await deps.store.getSettings(TENANT, stage.key.processId);
        const n = Number(stored?.n ?? 0) + 1;
        await deps.store.putSettings(TENANT, stage.key.processId, { n }, new Date().toISOString());
        return n;
      },
    });
    return {
      actors: [bump("a"), bump("b")],
      check: ({ run }) => {
        const written = [...run.outcomes.values()].map((o) => (o.ok ? o.value : null));
        return written[0] === written[1] ? [`lost update: both actors wrote ${String(written[0])}`] : [];
      },
    };
  },
});

describe("the interleaving checker", () => {
  it.each(SCENARIOS.map((s) => [s.id, s] as const))("%s keeps every invariant on its first 10 schedules", async (_id, s) => {
    const report = await exploreScenario(world, s, { budget: 10, randomShare: 0, parallel: 2 });
    expect(report.firstFailure?.violations ?? [], `schedule '${report.firstFailure?.schedule}'`).toEqual([]);
    expect(report.systematic).toBeGreaterThan(1);
    expect(report.mismatches).toBe(0);
  }, 60_000);

  it("replays S1: a walker stalled after reading 'pending F' while F is reverted writes nothing once it resumes", async () => {
    // Found by the checker before the roll-forward writes were guarded: the walker re-archived
    // the reverted fold's restored tail into it (docs/reliability.md).
    const result = await replaySchedule(world, scenarioById("S1"), "walker*3,revert");
    const actors = result.run.steps.map((s) => s.actor);
    expect(actors.slice(0, 3)).toEqual(["walker", "walker", "walker"]);
    const revertDone = actors.lastIndexOf("revert");
    expect(actors.slice(3, revertDone + 1).every((a) => a === "revert")).toBe(true);
    expect(result.run.outcomes.get("revert")?.ok).toBe(true);
    expect(result.violations).toEqual([]);
    // The resumed walker's first write is refused: its marker and memory are no longer what it read.
    const resumed = result.run.steps.slice(revertDone + 1).filter((s) => s.call?.includes("Write") || s.call === "UpdateCommand");
    expect(resumed[0]?.refused).toBeDefined();
  }, 60_000);

  it("replays S20 serially: the crashed turn's blob is put, its message never written, and the next append and turn succeed", async () => {
    const result = await replaySchedule(world, scenarioById("S20"), "");
    const crashed = result.run.outcomes.get("crashed");
    expect(crashed?.ok && (crashed.value as { crashed: boolean; blobs: string[] }).blobs).toContain(largeResultSha("a"));
    expect(result.run.steps.some((s) => s.actor === "crashed" && s.call === "TransactWriteCommand")).toBe(false);
    expect(result.run.outcomes.get("append")?.ok).toBe(true);
    expect(result.run.outcomes.get("turn")?.ok).toBe(true);
    expect(result.violations).toEqual([]);
  }, 60_000);

  it("replays S21 with the retry first: the stalled turn's write, released after it, is refused and answers the retry's message", async () => {
    const result = await replaySchedule(world, scenarioById("S21"), "retry");
    const writes = result.run.steps.filter((s) => s.actor === "stalled" && s.call === "TransactWriteCommand");
    expect(writes[0]?.refused).toBeDefined();
    expect(result.violations).toEqual([]);
  }, 60_000);

  it("replays S9 serially: the clearing round, run before the PATCH, clears the target", async () => {
    // Without this the scenario could race a round that clears nothing and pass for that reason.
    const result = await replaySchedule(world, scenarioById("S9"), "");
    const cleared = result.run.steps.filter((s) => s.actor === "clear" && s.call === "UpdateCommand" && !s.refused);
    expect(cleared.length).toBeGreaterThan(0);
    expect(result.run.steps.findIndex((s) => s.actor === "pin")).toBeGreaterThan(result.run.steps.indexOf(cleared[0]!));
    expect(result.violations).toEqual([]);
  }, 60_000);

  it("finds a lost update by itself, reports the schedule, and the schedule replays it", async () => {
    const report = await exploreScenario(world, lostUpdate, { budget: 20, randomShare: 0 });
    expect(report.failures).toBeGreaterThan(0);
    const schedule = report.firstFailure!.schedule;
    expect(schedule).toMatch(/^[ab]/);
    const again = await replaySchedule(world, lostUpdate, schedule);
    expect(again.violations.join("\n")).toMatch(/lost update/);
    expect(again.schedule).toBe(schedule);
    const serial = await replaySchedule(world, lostUpdate, "");
    expect(serial.violations).toEqual([]);
  }, 60_000);
});
