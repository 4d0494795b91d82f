/**
 * The mode policy table and the fold planner (docs/compaction.md, "Modes and thresholds"): one
 * threshold ladder, one row per mode, and the plan every automatic fold makes from them.
 */
import { describe, expect, it } from "vitest";
import { commitsPrepared, foldDue, heldAfterUndo, planFold } from "../../core/domain/fold-plan.js";
import { wantedFold } from "../../core/domain/fold-size.js";
import { FoldMode, type Message } from "../../core/domain/model.js";
import { anchorFor, modeForRatio } from "../../core/domain/mode.js";
import { climb, FOLD_MODES, minFoldTokens, MODE_POLICY } from "../../core/domain/mode-policy.js";
import { foldsByStrength } from "../../core/domain/selector.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import { makeMessage } from "../support/fixtures.js";

const t = DEFAULT_TUNABLES;

describe("the mode policy table", () => {
  it("has one row per fold mode, mildest first, with rising thresholds", () => {
    expect(FOLD_MODES).toEqual(FoldMode.options);
    const thresholds = FOLD_MODES.map((m) => MODE_POLICY[m].threshold(t));
    expect(thresholds).toEqual([...thresholds].sort((a, b) => a - b));
  });

  it("is the one ladder: the mode a ratio picks and the fold a turn queues climb the same rungs", () => {
    for (const mode of FOLD_MODES) {
      expect(modeForRatio(MODE_POLICY[mode].threshold(t), t)).toBe(mode);
      expect(wantedFold(MODE_POLICY[mode].queuedFrom(t), t)).toBe(mode);
      expect(anchorFor(mode, t)).toBe(MODE_POLICY[mode].anchor(t));
    }
    expect(modeForRatio(Math.min(...FOLD_MODES.map((m) => MODE_POLICY[m].threshold(t))) - 0.01, t)).toBe("NONE");
    expect(climb(Number.NaN, (p) => p.threshold(t))).toBeNull();
    expect(climb(Number.POSITIVE_INFINITY, (p) => p.threshold(t))).toBe(FOLD_MODES.at(-1));
  });

  it("is what the selector folds by strength; pinned folds in no mode", () => {
    for (const mode of FOLD_MODES) {
      for (const strength of ["weak", "normal", "strong"] as const) {
        expect(foldsByStrength(strength, mode)).toBe(MODE_POLICY[mode].folds.includes(strength));
      }
      expect(foldsByStrength("pinned", mode)).toBe(false);
    }
  });

  it("gates only optional modes, by softMinFoldTokens, in the turn or queued alike", () => {
    for (const mode of FOLD_MODES) {
      expect(minFoldTokens(mode, t)).toBe(MODE_POLICY[mode].optional ? t.softMinFoldTokens : 0);
    }
  });
});

/** Alternating USER/ASSISTANT chatter of `n` messages of `tokens` each, then the triggering USER message. */
function conversation(n: number, tokens: number): Message[] {
  const messages = Array.from({ length: n }, (_, i) =>
    makeMessage("p", { id: `m${String(i).padStart(3, "0")}`, role: i % 2 === 0 ? "USER" : "ASSISTANT", content: `note ${i}`, tokens, tags: ["STRENGTH:weak"] }),
  );
  return [...messages, makeMessage("p", { id: "m999", role: "USER", content: "next?", tokens })];
}

describe("planFold", () => {
  const messages = conversation(30, 10);
  const o = { contextWindow: 10_000, own: 310, tokensBefore: 310 };

  it("refuses an optional fold below its minimum saving, unless forced", () => {
    expect(planFold(messages, "SOFT", t, { ...o, minSaving: true })).toEqual({ ok: false, reason: "below_min_saving" });
    const forced = planFold(messages, "SOFT", t, { ...o, minSaving: true, forced: true });
    expect(forced.ok && forced.fold.length).toBeGreaterThan(0);
    const ungated = planFold(messages, "SOFT", t, { ...o, minSaving: false });
    expect(ungated.ok && ungated.fold.length).toBeGreaterThan(0);
  });

  it("checks the revert hold only for a mode that honours it, and never for a forced fold", () => {
    for (const mode of ["HARD", "EMERGENCY"] as const) {
      const plan = planFold(messages, mode, t, { ...o, minSaving: true });
      expect(plan).toMatchObject({ ok: true });
      expect(plan.ok && plan.holdCheckTokens).toBe(MODE_POLICY[mode].honoursRevertHold ? o.own : undefined);
      const forced = planFold(messages, mode, t, { ...o, minSaving: true, forced: true });
      expect(forced.ok && forced.holdCheckTokens).toBeUndefined();
    }
  });

  it("cuts to the fold target only in a mode that uses it", () => {
    const long = conversation(30, 1_000);
    const targeted = { ...t, foldTarget: 0.3, foldMinRoomTokens: 0 };
    const big = { contextWindow: 100_000, own: 31_000, tokensBefore: 90_000, minSaving: false, forced: true };
    const hard = planFold(long, "HARD", targeted, big);
    const whole = planFold(long, "HARD", t, big);
    expect(hard.ok && whole.ok && hard.fold.length < whole.fold.length).toBe(true);
    const soft = planFold(long, "SOFT", targeted, big);
    const softWhole = planFold(long, "SOFT", t, big);
    expect(soft.ok && softWhole.ok && soft.fold.length === softWhole.fold.length).toBe(true);
  });

  it("answers the selector's reason when nothing may fold", () => {
    expect(planFold(messages.slice(0, 3), "HARD", t, { ...o, minSaving: true })).toEqual({ ok: false, reason: "keep_recent" });
  });
});

describe("the background turn's rules", () => {
  it("holds a mode after an undo only while the replay is below the hold, and only if the mode honours it", () => {
    for (const mode of FOLD_MODES) {
      expect(heldAfterUndo(mode, 100, 200)).toBe(MODE_POLICY[mode].honoursRevertHold);
      expect(heldAfterUndo(mode, 300, 200)).toBe(false);
      expect(heldAfterUndo(mode, 100, undefined)).toBe(false);
    }
  });

  it("commits a prepared fold in an optional mode only when prepared for it; it is due at once, a required one from the first required threshold", () => {
    expect(commitsPrepared("SOFT", "HARD")).toBe(false);
    expect(commitsPrepared("SOFT", "SOFT")).toBe(true);
    expect(commitsPrepared("HARD", "SOFT")).toBe(true);
    expect(foldDue(0, "SOFT", t)).toBe(true);
    const firstRequired = Math.min(...FOLD_MODES.filter((m) => !MODE_POLICY[m].optional).map((m) => MODE_POLICY[m].threshold(t)));
    expect(foldDue(firstRequired - 0.01, "HARD", t)).toBe(false);
    expect(foldDue(firstRequired, "HARD", t)).toBe(true);
  });
});
