/** Fold sizing (core/domain/fold-size.ts) and replay accounting (core/domain/replay.ts). */
import { describe, expect, it } from "vitest";
import { tokensAfterFold, tokensToReachTarget, wantedFold } from "../../core/domain/fold-size.js";
import { newestSummary, replayTokens } from "../../core/domain/replay.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import { makeMemory, makeMessage } from "../support/fixtures.js";

describe("wantedFold", () => {
  const t = { ...DEFAULT_TUNABLES, softThreshold: 0.4, prepareThreshold: 0.7, hardThreshold: 0.85, emergencyThreshold: 0.95 };
  it("asks for SOFT below prepareThreshold, HARD from it, EMERGENCY from the emergency threshold", () => {
    expect([0.39, 0.4, 0.69, 0.7, 0.85, 0.949, 0.95].map((r) => wantedFold(r, t))).toEqual([null, "SOFT", "SOFT", "HARD", "HARD", "HARD", "EMERGENCY"]);
  });
  it("prepares nothing ahead when prepareThreshold is at or above hardThreshold", () => {
    expect(wantedFold(0.8, { ...t, prepareThreshold: 0.9 })).toBe("SOFT");
    expect(wantedFold(0.86, { ...t, prepareThreshold: 0.9 })).toBe("HARD");
  });
});

describe("tokensToReachTarget", () => {
  it("folds what brings the prompt to foldTarget, counting the summary that replaces it", () => {
    // 1,000 of ours = 1,000 of the caller's: land at 0.5 of a 1,000 window, plus a 100-token summary.
    expect(tokensToReachTarget({ foldTarget: 0.5, summaryMaxTokens: 100 }, 1_000, 1_000, 1_000)).toBe(600);
  });
  it("converts the caller's count to ours first", () => {
    // The caller counts twice what we do: the target of 500 of theirs is 250 of ours.
    expect(tokensToReachTarget({ foldTarget: 0.5, summaryMaxTokens: 0 }, 1_000, 500, 1_000)).toBe(250);
  });
});

describe("replay accounting", () => {
  const older = makeMemory("p1", { id: "mem_1", tokens: 40 });
  const newer = makeMemory("p1", { id: "mem_2", tokens: 30 });
  const failed = makeMemory("p1", { id: "mem_3", status: "FAILED", tokens: 99 });
  const messages = [makeMessage("p1", { tokens: 10 }), makeMessage("p1", { tokens: 15 })];

  it("replays the newest OK summary (two only briefly, after a race) and every active message", () => {
    expect(newestSummary({ summaries: [newer, older, failed] })?.id).toBe("mem_2");
    expect(newestSummary({ summaries: [failed] })).toBeNull();
    expect(replayTokens({ summaries: [older, newer], messages })).toBe(55);
    expect(replayTokens({ summaries: [], messages })).toBe(25);
  });

  it("scales the prompt after a fold by how much the replay shrank, in the caller's units", () => {
    const view = { summaries: [older], messages };
    // Ours: 65 before; fold the 10-token message into a 20-token summary: 15 + 20 = 35 after.
    expect(tokensAfterFold(view, { fold: [messages[0]!], tokensBefore: 650 }, 20)).toBe(350);
    expect(tokensAfterFold(view, { fold: [messages[0]!], marker: { tokens: 5 }, tokensBefore: 65 }, 20)).toBe(40);
  });
});
