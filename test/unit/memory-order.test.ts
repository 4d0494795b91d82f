import { describe, expect, it } from "vitest";
import { newestCommitted, newestCommittedFirst } from "../../core/domain/memory-order.js";
import { newestSummary } from "../../core/domain/replay.js";
import { makeMemory } from "../support/fixtures.js";

describe("the order memories were committed in", () => {
  // A range job queued at 10:00 under mem_1 commits at 10:05, after mem_2 committed at 10:01.
  const job = makeMemory("p1", { id: "mem_1", createdAt: "2026-01-01T10:05:00.000Z" });
  const other = makeMemory("p1", { id: "mem_2", createdAt: "2026-01-01T10:01:00.000Z" });
  const tie = makeMemory("p1", { id: "mem_3", createdAt: "2026-01-01T10:01:00.000Z" });

  it("is the commit stamp's, not the id's", () => {
    expect(newestCommitted([other, job])?.id).toBe("mem_1");
    expect(newestSummary({ summaries: [other, job] })?.id).toBe("mem_1");
    expect([other, job, tie].sort(newestCommittedFirst).map((m) => m.id)).toEqual(["mem_1", "mem_3", "mem_2"]);
  });

  it("breaks a tie by id and has no newest of nothing", () => {
    expect(newestCommitted([other, tie])?.id).toBe("mem_3");
    expect(newestCommittedFirst(tie, tie)).toBe(0);
    expect(newestCommitted([])).toBeNull();
  });
});
