/**
 * What the chaos harness lets a copy lack (tools/chaos/checks.ts, `expiredByRetention`): an
 * original of an OK memory whose retention had run out when the export read it (docs/configuration.md,
 * "Retention"), judged from the copy's own memories. The case of the copy whose export ran while the
 * source's TTL was still sweeping: the original was folded, the fold undone, folded again, and
 * expired from that second fold; both memories list it. An original missing before its retention
 * ran out, or from a fold without one, is still reported.
 */
import { describe, expect, it } from "vitest";
import type { Memory } from "../../core/domain/model.js";
import { expiredByRetention, memoryRuleViolations } from "../../tools/chaos/checks.js";
import { findViolations } from "../../tools/invariants.js";
import { at, memory, message, snapshot } from "../support/snapshots.js";

const DAY_MS = 86_400_000;
const after = (days: number) => new Date(Date.parse(at) + days * DAY_MS);

/** The copy: `msg_x` folded by `mem_undone` (reverted since) and by the head `mem_head`, under a retention of `days` (none: undefined). */
function copyLacking(days: number | undefined) {
  const undone: Memory = { ...memory("mem_undone", ["msg_x"]), status: "REVERTED" };
  const head = memory("mem_head", ["msg_x"]);
  if (days !== undefined) head.metadata.retentionDays = days;
  return snapshot([message("msg_a", null)], [undone, head], "mem_head");
}

const violations = (days: number | undefined, exportedAt: Date) => {
  const copy = copyLacking(days);
  const expired = expiredByRetention(copy, exportedAt);
  return [...findViolations(copy, { settled: true, expired }), ...memoryRuleViolations(copy, new Set(), expired)];
};

describe("a copy may lack an original only past its retention", () => {
  it("past the head's retention when the export ended: both memories may list it", () => {
    expect(expiredByRetention(copyLacking(30), after(30))).toEqual(new Map([["msg_x", "mem_head"]]));
    expect(violations(30, after(31))).toEqual([]);
  });

  it("before the retention ran out: the original is missing from both memories", () => {
    expect(expiredByRetention(copyLacking(30), new Date(after(30).getTime() - 1))).toEqual(new Map());
    const found = violations(30, after(29));
    expect(found).toContain("t/p: memory mem_head folded msg_x, which does not exist");
    expect(found).toContain("t/p: reverted memory mem_undone folded msg_x, which does not exist");
  });

  it("a fold without a retention keeps its originals forever", () => {
    expect(violations(undefined, after(3650))).toContain("t/p: memory mem_head folded msg_x, which does not exist");
  });

  it("an original only a reverted memory lists is never excused, however late", () => {
    const undone: Memory = { ...memory("mem_undone", ["msg_y"]), status: "REVERTED" };
    const head = memory("mem_head", []);
    head.metadata.retentionDays = 1;
    const copy = snapshot([message("msg_a", null)], [undone, head], "mem_head");
    const expired = expiredByRetention(copy, after(400));
    expect(expired.size).toBe(0);
    expect(findViolations(copy, { settled: true, expired })).toContain("t/p: reverted memory mem_undone folded msg_y, which does not exist");
  });
});
