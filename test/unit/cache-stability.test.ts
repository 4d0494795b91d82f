/** A turn is cache-stable when the static memory block and the previous messages stand unchanged before its appends. */
import { describe, expect, it } from "vitest";
import { answerCacheKey, cacheStableShare, isCacheStable } from "../../bench/support/cache-stability.js";

const key = (memoryStatic: string, ...messageIds: string[]) => ({ memoryStatic, messageIds });

describe("isCacheStable", () => {
  it("holds when only messages were appended, or nothing changed", () => {
    expect(isCacheStable(key("s", "a", "b"), key("s", "a", "b", "c", "d"))).toBe(true);
    expect(isCacheStable(key("s", "a", "b"), key("s", "a", "b"))).toBe(true);
    expect(isCacheStable(key("", ), key("", "a"))).toBe(true);
  });

  it("breaks when the static block changed (a commit), even with the same messages", () => {
    expect(isCacheStable(key("summary 1", "a", "b"), key("summary 2", "a", "b", "c"))).toBe(false);
  });

  it("breaks when the start moved (a trim cut further), a message left the middle, or the order changed", () => {
    expect(isCacheStable(key("s", "a", "b", "c"), key("s", "b", "c", "d"))).toBe(false);
    expect(isCacheStable(key("s", "a", "b", "c"), key("s", "a", "c", "d"))).toBe(false);
    expect(isCacheStable(key("s", "a", "b"), key("s", "b", "a", "c"))).toBe(false);
    expect(isCacheStable(key("s", "a", "b", "c"), key("s", "a", "b"))).toBe(false);
  });

  it("reads a turn's answer: the static block (recall excluded) and the message ids in order", () => {
    const answer = {
      context: { block: "## A\nx\n\n## Recalled From History\ny", staticBlock: "## A\nx" },
      messages: [{ id: "m1" }, { id: "m2" }],
    };
    expect(answerCacheKey(answer)).toEqual(key("## A\nx", "m1", "m2"));
    // Recall may change between two turns: it stands after the breakpoint.
    const next = { context: { block: "## A\nx\n\n## Recalled From History\nz", staticBlock: "## A\nx" }, messages: [{ id: "m1" }, { id: "m2" }, { id: "m3" }] };
    expect(isCacheStable(answerCacheKey(answer), answerCacheKey(next))).toBe(true);
  });
});

describe("cacheStableShare", () => {
  it("counts only the counted turns", () => {
    const samples = [
      { stable: true, counted: true },
      { stable: false, counted: true },
      { stable: false, counted: false },
      { stable: true, counted: true },
      { stable: true, counted: true },
    ];
    expect(cacheStableShare(samples)).toEqual({ stable: 3, counted: 4, share: 0.75 });
  });

  it("has no share when no turn counts", () => {
    expect(cacheStableShare([{ stable: false, counted: false }]).share).toBeNaN();
  });
});
