/**
 * Folds that take whole turns (docs/turns.md, "What a fold may keep"): the rule Gemini's models
 * get from `foldRulesFor`, applied by every step that picks what a fold takes (the selection, the
 * fold target, the one-call cut of a fold that must be ready in time).
 */
import { describe, expect, it } from "vitest";
import { planFold } from "../../core/domain/fold-plan.js";
import type { Message, Role, ToolCall } from "../../core/domain/model.js";
import { foldOldestUntil, selectForCompaction } from "../../core/domain/selector.js";
import { foldWithinCallCap } from "../../core/domain/summary-plan.js";
import { trimToFit } from "../../core/domain/trim.js";
import { selectRange } from "../../core/domain/range.js";
import { uncuttableRuns } from "../../core/domain/tool-groups.js";
import { DEFAULT_TUNABLES, mergeTunables } from "../../core/domain/tunables.js";

let seq = 0;
function msg(role: Role, extra: { content?: string; tags?: string[]; toolCalls?: ToolCall[]; toolCallId?: string; tokens?: number } = {}): Message {
  const n = seq++;
  return {
    id: `m${n}`,
    processId: "p",
    role,
    content: extra.content ?? `${role.toLowerCase()} ${n}: the build step reads the config and writes the bundle`,
    tags: extra.tags ?? [],
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    archivedInMemoryId: null,
    tokens: extra.tokens ?? 100,
    ...(extra.toolCalls ? { toolCalls: extra.toolCalls } : {}),
    ...(extra.toolCallId ? { toolCallId: extra.toolCallId } : {}),
  };
}

/** A turn: a USER message, `steps` tool calls with their results, and a closing answer. */
function turn(steps: number, o: { pinned?: boolean } = {}): Message[] {
  const out = [msg("USER", o.pinned ? { tags: ["STRENGTH:pinned"] } : {})];
  for (let s = 0; s < steps; s++) {
    const id = `c${seq}`;
    out.push(msg("ASSISTANT", { toolCalls: [{ id, name: "run", arguments: "{}" }] }), msg("TOOL", { toolCallId: id }));
  }
  out.push(msg("ASSISTANT"));
  return out;
}

/** Whether every turn of `history` is wholly in `fold` or wholly out of it. */
function wholeTurns(history: readonly Message[], fold: readonly Message[]): boolean {
  const folded = new Set(fold.map((m) => m.id));
  return uncuttableRuns(history, "turn").every((t) => t.every((m) => folded.has(m.id)) || t.every((m) => !folded.has(m.id)));
}

const ids = (ms: readonly Message[]) => ms.map((m) => m.id);

describe("folds that take whole turns", () => {
  it("never fold the current turn's tool exchanges, which HARD and EMERGENCY fold by tool groups", () => {
    // The current turn holds 12 tool steps: past every anchor.
    const history = [...turn(2), ...turn(12)];
    const current = history.slice(6);
    for (const mode of ["HARD", "EMERGENCY"] as const) {
      const byGroups = selectForCompaction(history, mode, DEFAULT_TUNABLES);
      expect(byGroups.fold.some((m) => current.includes(m))).toBe(true);
      const byTurns = selectForCompaction(history, mode, DEFAULT_TUNABLES, "turn");
      expect(ids(byTurns.fold)).toEqual(ids(history.slice(0, 6)));
    }
  });

  it("keep a whole turn when one of its messages must stay: a pinned one, or the anchor's start", () => {
    const first = turn(1);
    const pinned = turn(1, { pinned: true });
    const third = turn(1);
    const last = turn(0);
    const history = [...first, ...pinned, ...third, ...last];
    const { fold, keep } = selectForCompaction(history, "HARD", { ...DEFAULT_TUNABLES, hardAnchor: 3 }, "turn");
    // The anchor (last 3 messages) starts inside `third`: it stays whole, and so does the pinned turn.
    expect(ids(fold)).toEqual(ids(first));
    expect(ids(keep)).toEqual(ids([...pinned, ...third, ...last]));
  });

  it("keep two turns together when a result arrived after the next user message", () => {
    const call = msg("ASSISTANT", { toolCalls: [{ id: "late", name: "run", arguments: "{}" }] });
    const history = [msg("USER"), call, msg("USER"), msg("TOOL", { toolCallId: "late" }), msg("ASSISTANT"), msg("USER"), msg("ASSISTANT")];
    expect(uncuttableRuns(history, "turn").map((r) => r.length)).toEqual([5, 2]);
  });

  it("cut a fold target and a one-call fold only between turns", () => {
    const history = [...turn(3), ...turn(3), ...turn(3), ...turn(0)];
    // The fold target would stop inside the first turn by tool groups; by turns it takes it whole.
    expect(wholeTurns(history, foldOldestUntil(history.slice(0, 24), 150))).toBe(false);
    const taken = foldOldestUntil(history.slice(0, 24), 150, "turn");
    expect(ids(taken)).toEqual(ids(history.slice(0, 8)));
    // A fold larger than one summarizer call is cut back to the last whole turn that fits.
    const cap = foldWithinCallCap(history.slice(0, 24), 3_000, { ...DEFAULT_TUNABLES, maxSummarizerCalls: 2 }, "turn");
    expect(cap.cut).toBe(true);
    expect(cap.fold.length % 8).toBe(0);
    expect(wholeTurns(history, cap.fold)).toBe(true);
  });

  it("plan folds of whole turns in every mode, with a fold target and a small window", () => {
    const tunables = mergeTunables(DEFAULT_TUNABLES, { foldTarget: 0.3 });
    let planned = 0;
    for (let steps = 0; steps < 6; steps++) {
      const history = [...turn(steps), ...turn(4), ...turn(steps + 1), ...turn(9)];
      const own = history.reduce((n, m) => n + m.tokens, 0);
      for (const mode of ["SOFT", "HARD", "EMERGENCY"] as const) {
        const plan = planFold(history, mode, tunables, { contextWindow: own, own, tokensBefore: own, minSaving: false, unit: "turn" });
        if (!plan.ok) continue;
        planned++;
        expect(wholeTurns(history, plan.fold)).toBe(true);
        expect(plan.fold.some((m) => history.indexOf(m) >= history.length - 20)).toBe(false);
      }
    }
    expect(planned).toBeGreaterThanOrEqual(12);
  });
  it("trim an answer while a fold is queued by whole turns too, so it never starts inside one", () => {
    const history = [...turn(3), ...turn(3), ...turn(3), ...turn(1)];
    const own = history.reduce((n, m) => n + m.tokens, 0);
    // 250 tokens over: by tool groups the cut lands inside the first turn, leaving a call first.
    const byGroups = trimToFit(history, DEFAULT_TUNABLES, { tokens: own, limit: own - 250, scale: 1, own });
    expect(byGroups.kept[0]!.role).not.toBe("USER");
    const byTurns = trimToFit(history, DEFAULT_TUNABLES, { tokens: own, limit: own - 250, scale: 1, own, unit: "turn" });
    expect(byTurns.kept[0]!.role).toBe("USER");
    expect(wholeTurns(history, history.filter((m) => !byTurns.kept.includes(m)))).toBe(true);
    expect(byTurns.tokens).toBeLessThanOrEqual(own - 250);
  });
  it("fold a range by whole turns: a turn the window's end cuts stays whole", () => {
    const history = [...turn(2), ...turn(2), ...turn(1)];
    // The window ends at the second turn's first tool call: by tool groups its USER message folds alone.
    const range = { from: history[0]!.createdAt, to: history[7]!.createdAt, topicLabel: "build" };
    expect(ids(selectRange(history, range))).toEqual(ids(history.slice(0, 7)));
    const byTurns = selectRange(history, range, "turn");
    expect(ids(byTurns)).toEqual(ids(history.slice(0, 6)));
    expect(wholeTurns(history, byTurns)).toBe(true);
  });
});
