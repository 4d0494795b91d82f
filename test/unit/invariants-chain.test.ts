/**
 * The chain invariant of tools/invariants.ts on hand-built snapshots: an archived message is
 * covered by the replay only when the memory it is archived into leads, through supersededByMemoryId
 * and OK memories only, to the active summary META names (docs/reliability.md, "The invariants").
 */
import { describe, expect, it } from "vitest";
import { findViolations } from "../../tools/invariants.js";
import { at, memory, message, snapshot } from "../support/snapshots.js";

const CHAIN = /whose supersede chain does not lead to the active summary/;

describe("findViolations: archived messages are covered by the active summary's chain", () => {
  it("accepts messages archived into the active summary and into the summaries it superseded", () => {
    const a = memory("mem_a", ["msg_1"], { supersededAt: at, supersededByMemoryId: "mem_b" });
    const b = memory("mem_b", ["msg_2"], { prior: "mem_a" });
    const v = findViolations(snapshot([message("msg_1", "mem_a"), message("msg_2", "mem_b"), message("msg_3", null)], [a, b], "mem_b"));
    expect(v).toEqual([]);
  });

  it("flags a message whose memory's successor was reverted without making it active again", () => {
    const a = memory("mem_a", ["msg_1"], { supersededAt: at, supersededByMemoryId: "mem_b" });
    const b = memory("mem_b", ["msg_2"], { prior: "mem_a", status: "REVERTED" });
    const v = findViolations(snapshot([message("msg_1", "mem_a"), message("msg_2", null)], [a, b], null));
    expect(v.join("\n")).toMatch(CHAIN);
    expect(v.filter((x) => CHAIN.test(x))).toHaveLength(1);
  });

  it("flags a message archived into an OK summary that is not the one META names", () => {
    const a = memory("mem_a", ["msg_1"]);
    const v = findViolations(snapshot([message("msg_1", "mem_a")], [a], null));
    expect(v.join("\n")).toMatch(CHAIN);
  });

  it("accepts a head with an older id than the summary it superseded (a range job commits under its queued id)", () => {
    const newerId = memory("mem_b", ["msg_1"], { supersededAt: at, supersededByMemoryId: "mem_a" });
    const head = memory("mem_a", ["msg_2"], { prior: "mem_b" });
    expect(findViolations(snapshot([message("msg_1", "mem_b"), message("msg_2", "mem_a")], [newerId, head], "mem_a"))).toEqual([]);
  });

  it("flags META naming a superseded memory, and an OK memory the head's chain does not reach", () => {
    const a = memory("mem_a", ["msg_1"], { supersededAt: at, supersededByMemoryId: "mem_b" });
    const b = memory("mem_b", ["msg_2"], { prior: "mem_a" });
    const stray = memory("mem_c", ["msg_3"], { supersededAt: at, supersededByMemoryId: "mem_b" });
    const v = findViolations(snapshot([message("msg_1", "mem_a"), message("msg_2", "mem_b"), message("msg_3", "mem_c")], [a, b, stray], "mem_a"));
    expect(v.join("\n")).toContain("META.activeSummaryId is mem_a, the head of the chain is mem_b");
    expect(v.join("\n")).toContain("OK memories off the chain that ends in mem_b: mem_c");
  });
});

describe("findViolations: retention (docs/configuration.md, \"Retention\")", () => {
  const kept = memory("mem_r", ["msg_1", "msg_2"], { metadata: { compactedMessages: 2, provider: "test", model: "test", retentionDays: 2 } });
  // 2026-01-01T00:00:00Z plus two days.
  const expiry = "2026-01-03T00:00:00.000Z";

  it("accepts originals that carry exactly the expiry their fold's retention gives", () => {
    const v = findViolations(snapshot([{ ...message("msg_1", "mem_r"), expiresAt: expiry }, { ...message("msg_2", "mem_r"), expiresAt: expiry }, message("msg_3", null)], [kept], "mem_r"));
    expect(v).toEqual([]);
  });

  it("reports an active message with an expiry, an original without its expiry, and one under a fold without a retention", () => {
    const plain = memory("mem_p", ["msg_4"], { supersededAt: at, supersededByMemoryId: "mem_r" });
    const chained = { ...kept, metadata: { ...kept.metadata, supersededMemoryId: "mem_p" } };
    const v = findViolations(
      snapshot(
        [
          { ...message("msg_1", "mem_r"), expiresAt: expiry },
          message("msg_2", "mem_r"),
          { ...message("msg_3", null), expiresAt: expiry },
          { ...message("msg_4", "mem_p"), expiresAt: expiry },
        ],
        [plain, chained],
        "mem_r",
      ),
    );
    expect(v).toEqual([
      `t/p: message msg_2 archived into mem_r expires at never, its fold's retention says ${expiry}`,
      `t/p: active message msg_3 carries an expiry (${expiry})`,
      `t/p: message msg_4 archived into mem_p expires at ${expiry}, its fold's retention says never`,
    ]);
  });
});
