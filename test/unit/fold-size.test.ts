/** Fold sizing (core/domain/fold-size.ts) and replay accounting (core/domain/replay.ts). */
import { describe, expect, it } from "vitest";
import { foldTargetTokens, sizeFold, tokensAfterFold, tokensToReachTarget, wantedFold } from "../../core/domain/fold-size.js";
import type { Message } from "../../core/domain/model.js";
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

describe("foldTargetTokens (foldMinRoomTokens)", () => {
  const t = { foldTarget: 0.75, hardThreshold: 0.85, foldMinRoomTokens: 2_000 };
  it("is the foldTarget share on a window with room to spare", () => {
    // 0.85 x 100k - 2,000 = 83,000 is above 75,000: the share holds.
    expect(foldTargetTokens(t, 100_000)).toBe(75_000);
  });
  it("leaves foldMinRoomTokens below the hard threshold on a small window", () => {
    // 0.75 x 8,000 = 6,000 would leave 800 tokens of room; 2,000 are kept: 6,800 - 2,000.
    expect(foldTargetTokens(t, 8_000)).toBe(4_800);
    expect(foldTargetTokens({ ...t, foldMinRoomTokens: 0 }, 8_000)).toBe(6_000);
  });
  it("is 0 (fold all the selector allows) when the window has no such room", () => {
    expect(foldTargetTokens(t, 2_000)).toBe(0);
    // tokensToReachTarget then asks for more than the whole replay.
    expect(tokensToReachTarget({ ...t, summaryMaxTokens: 100 }, 2_000, 1_700, 1_700)).toBe(1_800);
  });
});

describe("sizeFold", () => {
  // foldTarget 0.4 of a 1,000 window with a 50-token summary: a 400-token prompt frees 50 tokens.
  const t = { ...DEFAULT_TUNABLES, foldTarget: 0.4, summaryMaxTokens: 50, summaryWindowShare: 0, foldMinRoomTokens: 0 };
  const size = { contextWindow: 1_000, own: 400, tokensBefore: 400 };
  const m = (id: string, extra: Partial<Message> = {}) => makeMessage("p1", { id, role: "ASSISTANT", tokens: 100, ...extra });
  const call = (id: string, callId: string) => m(id, { toolCalls: [{ id: callId, name: "grep", arguments: "{}" }] });
  const result = (id: string, callId: string) => m(id, { role: "TOOL", toolCallId: callId });
  const ids = (ms: readonly Message[]) => ms.map((x) => x.id);

  it("takes the oldest messages that reach the target in HARD and EMERGENCY, the whole selection otherwise", () => {
    const selection = [m("a"), m("b"), m("c"), m("d")];
    expect(ids(sizeFold(selection, "HARD", t, size))).toEqual(["a"]);
    expect(ids(sizeFold(selection, "EMERGENCY", { ...t, foldTarget: 0.2 }, size))).toEqual(["a", "b", "c"]);
    expect(ids(sizeFold(selection, "SOFT", t, size))).toEqual(["a", "b", "c", "d"]);
    expect(ids(sizeFold(selection, "HARD", { ...t, foldTarget: 0 }, size))).toEqual(["a", "b", "c", "d"]);
    expect(ids(sizeFold(selection, "HARD", t, { ...size, contextWindow: undefined }))).toEqual(["a", "b", "c", "d"]);
  });

  it("takes a call's result even when another message sits between them", () => {
    const selection = [call("call", "c1"), m("note", { role: "SYSTEM" }), result("result", "c1"), m("d")];
    expect(ids(sizeFold(selection, "HARD", t, size))).toEqual(["call", "note", "result"]);
  });

  it("takes every result of parallel calls made in separate ASSISTANT messages", () => {
    const selection = [call("a1", "c1"), call("a2", "c2"), result("t2", "c2"), result("t1", "c1"), m("e")];
    // 500 tokens at 0.3 of the window: 500 - 300 + 50 = 250 to free, three messages' worth.
    expect(ids(sizeFold(selection, "HARD", { ...t, foldTarget: 0.3 }, { ...size, own: 500, tokensBefore: 500 }))).toEqual(["a1", "a2", "t2", "t1"]);
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
