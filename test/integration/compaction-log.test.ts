/**
 * The log line of a committed compaction (docs/operations.md, "What the service reports"), against DynamoDB
 * Local: `<engine>.turn id='<turn>' compaction (<when>) ok: <n> msgs -> <chars> chars` as the message
 * of the one INFO entry, its structured fields beside it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ProcessKey, Store } from "../../core/ports/store.js";
import { queueFold } from "../../core/services/compaction/transitions.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { upsertProcess } from "../../core/services/processes.js";
import { settledView } from "../../core/services/compaction/settle.js";
import { runTurn } from "../../core/services/turn.js";
import { freshTable } from "../support/dynamo.js";
import { createMemoryLog } from "../support/memory-log.js";
import { testContainer } from "../support/container.js";
import { appendWarehouseMove } from "../support/steps.js";

const TENANT = "log";
const WINDOW = 10_000;
let store: Store;
let seq = 0;

beforeAll(async () => {
  ({ store } = await freshTable("log"));
});

const harness = (env: Record<string, string> = {}) => testContainer({ store, env, worker: true });

async function seeded(deps: ServiceDeps, engine?: string): Promise<ProcessKey> {
  const key = { tenantId: TENANT, processId: `log-${++seq}` };
  await upsertProcess(deps, TENANT, key.processId, { projectId: "proj", ...(engine ? { engine } : {}) });
  await appendWarehouseMove(deps, key, 30);
  return key;
}

const turn = (tokens: number, content?: string) => ({
  ...(content ? { message: { role: "USER" as const, content } } : {}),
  model: { contextWindow: WINDOW },
  prompt: { tokens },
});

const compactionEntries = (log: ReturnType<typeof createMemoryLog>) =>
  log.entries.filter((e) => e.level === "INFO" && e.fields?.memoryId !== undefined && e.message.includes(" compaction ("));

describe("the compaction log line", () => {
  it("an inline fold in a turn names the engine, the turn's message, the mode, the messages and the summary's length", async () => {
    const { deps, log } = harness({ COMPACTION_EXECUTION: "inline" });
    const key = await seeded(deps, "vance");
    const out = await runTurn(deps, key, turn(8_700, "Which aisle first?"));
    expect(out.compaction).toMatchObject({ mode: "HARD", compacted: true });
    const memory = (await store.getMemory(key, out.compaction.memoryId!))!;
    const turnMessage = out.messages.at(-1)!;
    expect(turnMessage.content).toBe("Which aisle first?");
    expect(compactionEntries(log)).toEqual([
      {
        level: "INFO",
        message: `vance.turn id='${turnMessage.id}' compaction (inline HARD) ok: ${memory.sourceRefs.length} msgs -> ${memory.content.length} chars`,
        fields: expect.objectContaining({ processId: key.processId, memoryId: memory.id, mode: "hard", producedBy: "inline", messagesFolded: memory.sourceRefs.length }),
      },
    ]);
  });

  it("a fold the worker prepared, committed by a later EMERGENCY turn, is logged as prepared under that turn's message", async () => {
    const { deps, log, bus } = harness();
    const key = await seeded(deps, "vance");
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    await bus.drain();
    expect(compactionEntries(log)).toEqual([]);
    const out = await runTurn(deps, key, turn(9_600, "Go on."));
    expect(out.compaction).toMatchObject({ mode: "EMERGENCY", compacted: true });
    const memory = (await store.getMemory(key, out.compaction.memoryId!))!;
    expect(memory.metadata.producedBy).toBe("prepared");
    const turnMessage = out.messages.at(-1)!;
    expect(turnMessage.content).toBe("Go on.");
    expect(compactionEntries(log).map((e) => e.message)).toEqual([
      `vance.turn id='${turnMessage.id}' compaction (prepared EMERGENCY) ok: ${memory.sourceRefs.length} msgs -> ${memory.content.length} chars`,
    ]);
  });

  it("a prepared fold the worker commits when a HARD turn found it due is logged as the worker's, under the memory's id", async () => {
    const { deps, log, bus } = harness();
    const key = await seeded(deps, "vance");
    await runTurn(deps, key, turn(7_200, "Which aisle first?"));
    await bus.drain();
    const out = await runTurn(deps, key, turn(8_700, "Go on."));
    expect(out.compaction).toMatchObject({ mode: "HARD", compacted: false, reason: "compaction_queued" });
    await bus.drain();
    const memory = (await store.getMemory(key, out.compaction.memoryId!))!;
    expect(memory).toMatchObject({ status: "OK", metadata: { producedBy: "worker" } });
    expect(compactionEntries(log).map((e) => e.message)).toEqual([
      `vance.turn id='${memory.id}' compaction (worker HARD) ok: ${memory.sourceRefs.length} msgs -> ${memory.content.length} chars`,
    ]);
  });

  it("a manual compaction is tied to no turn: the memory's id, and 'memory' when the process names no engine", async () => {
    const { deps, log } = harness();
    const key = await seeded(deps);
    const out = await compactManually(deps, key, { model: { contextWindow: WINDOW }, force: "HARD" });
    expect(out.status).toBe(200);
    const memory = (await store.getMemory(key, out.result.memoryId!))!;
    expect(compactionEntries(log).map((e) => e.message)).toEqual([
      `memory.turn id='${memory.id}' compaction (manual HARD) ok: ${memory.sourceRefs.length} msgs -> ${memory.content.length} chars`,
    ]);
  });

  it("a manual compaction the worker commits (queued past the request's budget) is logged as the worker's, under the memory's id", async () => {
    const { deps, log, bus } = harness();
    const key = await seeded(deps, "vance");
    const view = await settledView(deps, key);
    const queued = await queueFold(deps, key, view, { mode: "HARD", job: "manual", contextWindow: WINDOW, tokensBefore: 0, forced: true });
    await bus.drain();
    const memory = (await store.getMemory(key, queued.id))!;
    expect(memory).toMatchObject({ status: "OK", metadata: { producedBy: "worker", mode: "HARD" } });
    expect(compactionEntries(log).map((e) => e.message)).toEqual([
      `vance.turn id='${memory.id}' compaction (worker HARD) ok: ${memory.sourceRefs.length} msgs -> ${memory.content.length} chars`,
    ]);
  });
});
