/** The benchmark's prompt-cache stability measure (bench/support/cache-stable-share.ts). */
import { describe, expect, it } from "vitest";
import { cacheStableShare, isCacheStable } from "../../bench/support/cache-stable-share.js";

const answer = (staticBlock: string, ...messageIds: string[]) => ({ staticBlock, messageIds });

describe("isCacheStable", () => {
  it("holds when the static text is the same and the previous messages start this answer", () => {
    expect(isCacheStable(answer("S1", "a", "b"), answer("S1", "a", "b", "c", "d"))).toBe(true);
    expect(isCacheStable(answer("S1", "a", "b"), answer("S1", "a", "b"))).toBe(true);
  });

  it("breaks when the static text changes (a fold replaced the summary)", () => {
    expect(isCacheStable(answer("S1", "a", "b"), answer("S2", "a", "b", "c"))).toBe(false);
  });

  it("breaks when the start of the message list moves (a trim or a fold left messages out)", () => {
    expect(isCacheStable(answer("S1", "a", "b", "c"), answer("S1", "b", "c", "d"))).toBe(false);
    expect(isCacheStable(answer("S1", "a", "b", "c"), answer("S1", "a", "b"))).toBe(false);
  });

  it("breaks when a message inside the prefix is another one, even at the same length", () => {
    expect(isCacheStable(answer("S1", "a", "b"), answer("S1", "a", "x", "c"))).toBe(false);
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
