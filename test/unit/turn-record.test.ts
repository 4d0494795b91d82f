/**
 * What a turn's answer says happened since the previous turn (core/services/turn-record.ts) and
 * when the prompt is over its window (core/domain/over-window.ts): the bounds, at the edge. The
 * chain walk reads memories through the Store port; here a map stands in for it (the walk over
 * DynamoDB Local is in test/e2e/turn-answer.test.ts).
 */
import { describe, expect, it } from "vitest";
import type { LastTurn } from "../../core/domain/last-turn.js";
import type { Memory } from "../../core/domain/model.js";
import { overWindow } from "../../core/domain/over-window.js";
import type { ActiveView } from "../../core/ports/store.js";
import type { CoreDeps } from "../../core/services/deps.js";
import { MAX_FOLD_READS, sinceLastTurn } from "../../core/services/turn-record.js";
import { makeMemory } from "../support/fixtures.js";
import { createMemoryLog } from "../support/memory-log.js";

const key = { tenantId: "t", processId: "p" };

/** `n` summaries, each replacing the one before; the newest is the active one. */
function chain(n: number) {
  const memories: Memory[] = [];
  for (let i = 0; i < n; i++) {
    const prior = memories[i - 1];
    memories.push(makeMemory("p", { id: `mem_${String(i).padStart(2, "0")}`, metadata: { compactedMessages: 1, provider: "t", model: "t", ...(prior ? { supersededMemoryId: prior.id } : {}) } }));
  }
  const reads: string[] = [];
  const deps = {
    log: createMemoryLog(),
    store: { getMemory: async (_k: unknown, id: string) => (reads.push(id), memories.find((m) => m.id === id) ?? null) },
  } as unknown as CoreDeps;
  const view = { summaries: [memories[n - 1]!], folds: [], messages: [], state: {} } as unknown as ActiveView;
  return { memories, deps, view, reads };
}
const previous = (summaryId: string | null): LastTurn => ({ at: "2026-12-02T00:00:00.000Z", window: { tokens: 1000, source: "request" }, summaryId, version: 0 });

describe("sinceLastTurn", () => {
  it("lists the folds back to the previous turn's summary, reading one memory per fold past the newest", async () => {
    const { deps, view, reads } = chain(4);
    expect(await sinceLastTurn(deps, key, previous("mem_01"), view)).toEqual({ folds: ["mem_02", "mem_03"] });
    expect(reads).toEqual(["mem_02"]);
  });

  it(`reads at most ${MAX_FOLD_READS} memories, then says there were more`, async () => {
    const exact = chain(MAX_FOLD_READS + 2);
    // The newest is free and each read adds one: MAX_FOLD_READS + 1 folds are listed in full.
    expect(await sinceLastTurn(exact.deps, key, previous("mem_00"), exact.view)).toEqual({ folds: exact.memories.slice(1).map((m) => m.id) });
    expect(exact.reads).toHaveLength(MAX_FOLD_READS);
    const past = chain(MAX_FOLD_READS + 3);
    const answer = await sinceLastTurn(past.deps, key, previous("mem_00"), past.view);
    expect(answer).toEqual({ folds: past.memories.slice(2).map((m) => m.id), more: true });
    expect(past.reads).toHaveLength(MAX_FOLD_READS);
  });

  it("says the previous summary was undone when the chain does not reach it, and is absent on a first turn", async () => {
    const { deps, view } = chain(3);
    expect(await sinceLastTurn(deps, key, previous("mem_gone"), view)).toEqual({ folds: [], reverted: true });
    expect(await sinceLastTurn(deps, key, previous(null), view)).toEqual({ folds: ["mem_00", "mem_01", "mem_02"] });
    expect(await sinceLastTurn(deps, key, undefined, view)).toBeUndefined();
  });
});

describe("overWindow", () => {
  const messages = [
    { id: "m1", tokens: 400 },
    { id: "m2", tokens: 1000 },
  ];

  it("is absent for a prompt of exactly the window, present one token past it", () => {
    expect(overWindow(messages, 1000, 1000)).toBeUndefined();
    expect(overWindow(messages, 1001, 1000)).toEqual({ tokens: 1001, window: 1000, reason: "not_reduced" });
  });

  it("names a message one token larger than the window", () => {
    expect(overWindow([...messages, { id: "m3", tokens: 1001 }], 2401, 1000)).toEqual({ tokens: 2401, window: 1000, reason: "message_larger_than_window", messageIds: ["m3"] });
  });
});
