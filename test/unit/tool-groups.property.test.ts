/**
 * No orphan on any cut (docs/compaction.md, "Never an orphan"): over arbitrary interleavings of
 * tool groups, plain notes and parallel calls (several calls in one ASSISTANT message, or one
 * ASSISTANT message per call), with results in any order, calls still running and results whose
 * call was folded earlier, every path that cuts a message list leaves whole groups on both sides
 * of the cut: selection, fold sizing, trimming the answer, chunking a fold into summarizer calls
 * and range selection; clearing removes nothing and names each result's own call.
 *
 * The oracle pairs results with calls by their ids alone (ids are unique in these histories), so
 * it does not share the code under test.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UNKNOWN_TOOL, planClearing } from "../../core/domain/clearing.js";
import { sizeFold } from "../../core/domain/fold-size.js";
import type { CompactionModeName, Message, Role, ToolCall } from "../../core/domain/model.js";
import { selectRange } from "../../core/domain/range.js";
import { MIN_CHUNK_CHARS, chunkBySourceChars, foldOldestUntil, selectForCompaction } from "../../core/domain/selector.js";
import { toolGroups } from "../../core/domain/tool-groups.js";
import { trimToFit } from "../../core/domain/trim.js";
import { DEFAULT_TUNABLES, type Tunables } from "../../core/domain/tunables.js";

// ---- histories ----------------------------------------------------------------------------------

type Step =
  | { t: "note"; role: Exclude<Role, "TOOL">; tags: string[]; size: number }
  /** Parallel calls: all in one ASSISTANT message, or one ASSISTANT message per call. */
  | { t: "calls"; n: number; separate: boolean; tags: string[]; size: number }
  /** Answers one of the calls still waiting for a result, any of them. */
  | { t: "result"; pick: number; tags: string[]; size: number }
  /** A result whose call is not in the list (it was folded earlier). */
  | { t: "late"; tags: string[]; size: number };

const tagsArb = fc.constantFrom<string[]>([], [], [], ["STRENGTH:weak"], ["STRENGTH:strong"], ["STRENGTH:pinned"]);
const sizeArb = fc.integer({ min: 1, max: 120 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant("note" as const), role: fc.constantFrom<Exclude<Role, "TOOL">>("USER", "ASSISTANT", "SYSTEM"), tags: tagsArb, size: sizeArb }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("calls" as const), n: fc.integer({ min: 1, max: 3 }), separate: fc.boolean(), tags: tagsArb, size: sizeArb }) },
  { weight: 5, arbitrary: fc.record({ t: fc.constant("result" as const), pick: fc.nat({ max: 8 }), tags: tagsArb, size: sizeArb }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("late" as const), tags: tagsArb, size: sizeArb }) },
);

/** Stored messages from steps: `size` tokens and about four chars per token of content. */
function build(steps: Step[]): Message[] {
  const out: Message[] = [];
  const waiting: string[] = [];
  const push = (role: Role, s: { tags: string[]; size: number }, extra: Partial<Message> = {}) => {
    const i = out.length;
    out.push({
      id: `m${String(i).padStart(4, "0")}`,
      processId: "p",
      role,
      content: `${role.toLowerCase()} ${i} `.padEnd(s.size * 4, "x"),
      tags: s.tags,
      createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
      archivedInMemoryId: null,
      tokens: s.size,
      ...extra,
    });
  };
  const callsAt = (k: number, n: number): ToolCall[] =>
    Array.from({ length: n }, (_, j) => ({ id: `call_${out.length}_${k + j}`, name: `tool_${out.length}_${k + j}`, arguments: "{}" }));
  for (const s of steps) {
    if (s.t === "note") push(s.role, s);
    else if (s.t === "calls" && !s.separate) {
      const toolCalls = callsAt(0, s.n);
      waiting.push(...toolCalls.map((c) => c.id));
      push("ASSISTANT", s, { toolCalls });
    } else if (s.t === "calls") {
      for (let k = 0; k < s.n; k++) {
        const toolCalls = callsAt(k, 1);
        waiting.push(toolCalls[0]!.id);
        push("ASSISTANT", s, { toolCalls });
      }
    } else if (s.t === "result" && waiting.length > 0) {
      push("TOOL", s, { toolCallId: waiting.splice(s.pick % waiting.length, 1)[0]! });
    } else push("TOOL", s, { toolCallId: `folded_${out.length}` });
  }
  return out;
}

const historyArb = fc.array(stepArb, { maxLength: 40 }).map(build);
const modeArb = fc.constantFrom<CompactionModeName>("NONE", "SOFT", "HARD", "EMERGENCY");
const tunablesArb: fc.Arbitrary<Tunables> = fc
  .record({
    keepRecent: fc.nat({ max: 8 }),
    softAnchor: fc.nat({ max: 6 }),
    hardAnchor: fc.nat({ max: 6 }),
    emergencyAnchor: fc.nat({ max: 6 }),
    foldCurrentTurn: fc.constantFrom(0, 1),
    foldTarget: fc.double({ min: 0.01, max: 1, noNaN: true }),
    foldMinRoomTokens: fc.nat({ max: 500 }),
    summaryMaxTokens: fc.integer({ min: 50, max: 300 }),
    summaryWindowShare: fc.constantFrom(0, 0.2),
    keepToolResults: fc.nat({ max: 4 }),
    clearMinResultTokens: fc.nat({ max: 100 }),
    clearMinSaving: fc.constantFrom(0, 0.01),
  })
  .map((t) => ({ ...DEFAULT_TUNABLES, ...t }));
const runs = { numRuns: 400 };
const sum = (ms: readonly Message[]) => ms.reduce((n, m) => n + m.tokens, 0);

/** Budgets that end on every message of `ms` and just past it, and the edges (none, all, more). */
function budgetsOver(ms: readonly Message[]): number[] {
  const out = [-1, 0];
  let freed = 0;
  for (const m of ms) {
    freed += m.tokens;
    out.push(freed - 1, freed, freed + 1);
  }
  return out;
}

// ---- the oracle ---------------------------------------------------------------------------------

/**
 * What `part` (a subset of `all`) breaks: a TOOL result whose call is in `all` but not in `part`,
 * or a call message whose results in `all` are not all in `part`.
 */
function orphans(part: readonly Message[], all: readonly Message[]): string[] {
  const callMessage = new Map<string, Message>();
  for (const m of all) for (const c of m.toolCalls ?? []) callMessage.set(c.id, m);
  const inPart = new Set(part.map((m) => m.id));
  const problems: string[] = [];
  for (const m of all) {
    const call = m.role === "TOOL" && m.toolCallId !== undefined ? callMessage.get(m.toolCallId) : undefined;
    if (!call || inPart.has(m.id) === inPart.has(call.id)) continue;
    problems.push(inPart.has(m.id) ? `result ${m.id} without its call ${call.id}` : `call ${call.id} without its result ${m.id}`);
  }
  return problems;
}

/** Both sides of a cut of `all` into `taken` and the rest hold whole tool groups. */
function expectWholeGroups(taken: readonly Message[], all: readonly Message[], what: string) {
  const ids = new Set(taken.map((m) => m.id));
  const rest = all.filter((m) => !ids.has(m.id));
  expect(orphans(taken, all), `${what}: what it takes`).toEqual([]);
  expect(orphans(rest, all), `${what}: what it leaves`).toEqual([]);
}

// ---- every path that cuts -----------------------------------------------------------------------

describe("no tool result without its call, no call without its results, on any cut", () => {
  it("the oracle sees an orphan", () => {
    const [call, note, result] = build([
      { t: "calls", n: 1, separate: false, tags: [], size: 1 },
      { t: "note", role: "SYSTEM", tags: [], size: 1 },
      { t: "result", pick: 0, tags: [], size: 1 },
    ]);
    expect(orphans([call!], [call!, note!, result!])).toHaveLength(1);
    expect(orphans([note!, result!], [call!, note!, result!])).toHaveLength(1);
    expect(orphans([call!, result!], [call!, note!, result!])).toEqual([]);
  });

  it("the cut points: a list may be cut exactly where no group has members on both sides", () => {
    fc.assert(
      fc.property(historyArb, (messages) => {
        const boundaries = new Set(toolGroups(messages).runs.map(([, end]) => end));
        for (let p = 1; p < messages.length; p++) {
          expect(boundaries.has(p), `cut before message ${p}`).toBe(orphans(messages.slice(0, p), messages).length === 0);
        }
        expect(boundaries.has(messages.length) || messages.length === 0).toBe(true);
      }),
      runs,
    );
  });

  it("selection: what a fold takes and what stays", () => {
    fc.assert(
      fc.property(historyArb, modeArb, tunablesArb, (messages, mode, t) => {
        const { fold, keep } = selectForCompaction(messages, mode, t);
        expectWholeGroups(fold, messages, "selectForCompaction");
        expect(orphans(keep, messages)).toEqual([]);
      }),
      runs,
    );
  });

  it("fold sizing: the oldest part of a selection, for every budget, and with any fold target", () => {
    fc.assert(
      fc.property(
        historyArb,
        modeArb,
        tunablesArb,
        fc.integer({ min: 500, max: 20_000 }),
        fc.double({ min: 0.5, max: 3, noNaN: true }),
        (messages, mode, t, contextWindow, callerRate) => {
          const selection = selectForCompaction(messages, mode, t).fold;
          for (const budget of budgetsOver(selection)) expectWholeGroups(foldOldestUntil(selection, budget), messages, `foldOldestUntil(${budget})`);
          const own = sum(messages);
          const sized = sizeFold(selection, mode, t, { contextWindow, own, tokensBefore: Math.round(own * callerRate) });
          expectWholeGroups(sized, messages, "sizeFold");
        },
      ),
      runs,
    );
  });

  it("trimming the answer: what it leaves out and what it answers with, for every limit", () => {
    fc.assert(
      fc.property(historyArb, tunablesArb, fc.nat({ max: 200 }), fc.constantFrom(0.5, 1, 1.5, 3), (messages, t, summary, scale) => {
        const own = sum(messages) + summary;
        const tokens = Math.round(own * scale);
        const perOwn = Math.max(scale, 1);
        for (const budget of budgetsOver(messages)) {
          const limit = Math.max(0, Math.ceil(own * perOwn) - Math.round(budget * perOwn));
          const kept = new Set(trimToFit(messages, t, { tokens, limit, scale, own }).kept.map((m) => m.id));
          expectWholeGroups(
            messages.filter((m) => !kept.has(m.id)),
            messages,
            `trimToFit(limit ${limit})`,
          );
        }
      }),
      runs,
    );
  });

  it("trimming the answer in blocks: below the limit whenever a trim can get there, never less than needed, whole groups", () => {
    fc.assert(
      fc.property(
        historyArb,
        tunablesArb,
        fc.double({ min: 0.5, max: 3, noNaN: true }),
        fc.integer({ min: 1, max: 400 }),
        (messages, t, scale, block) => {
          const own = sum(messages);
          const tokens = Math.round(own * scale);
          const perOwn = Math.max(scale, 1);
          for (const budget of budgetsOver(messages)) {
            const limit = Math.max(0, Math.ceil(own * perOwn) - Math.round(budget * perOwn));
            const exact = trimToFit(messages, t, { tokens, limit, scale, own });
            const blocked = trimToFit(messages, t, { tokens, limit, scale, own, block });
            // A block only ever adds to what is left out: whenever the exact trim gets below the
            // limit (the candidates hold enough), the block does too.
            expect(blocked.trimmed.tokens).toBeGreaterThanOrEqual(exact.trimmed.tokens);
            if (exact.tokens <= limit) expect(blocked.tokens, `limit ${limit}, block ${block}`).toBeLessThanOrEqual(limit);
            const kept = new Set(blocked.kept.map((m) => m.id));
            const left = messages.filter((m) => !kept.has(m.id));
            expectWholeGroups(left, messages, `trimToFit(limit ${limit}, block ${block})`);
            // Never a pinned message, never the triggering USER message.
            for (const m of left) expect(m.tags).not.toContain("STRENGTH:pinned");
            const trigger = [...messages].reverse().find((m) => m.role === "USER");
            if (trigger) expect(kept.has(trigger.id)).toBe(true);
            expect(blocked.trimmed).toMatchObject(left.length > 0 ? { messages: left.length, fromMessageId: left[0]!.id, toMessageId: left.at(-1)!.id } : { messages: 0 });
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("chunking a fold into summarizer calls: each call holds whole groups", () => {
    fc.assert(
      fc.property(historyArb, modeArb, tunablesArb, fc.integer({ min: MIN_CHUNK_CHARS, max: 6_000 }), (messages, mode, t, cap) => {
        const fold = selectForCompaction(messages, mode, t).fold;
        // With room for every message of the fold in one call, no group has to be spread over calls
        // (the last resort for a group too large for one call, docs/summarizers.md "Summarizing").
        const chunks = chunkBySourceChars(fold, Math.max(cap, MIN_CHUNK_CHARS * fold.length));
        expect(chunks.flatMap((c) => c.messages)).toEqual(fold);
        for (const chunk of chunks) expect(orphans(chunk.messages, fold)).toEqual([]);
      }),
      runs,
    );
  });

  it("range selection: what a range fold takes and what stays", () => {
    fc.assert(
      fc.property(historyArb, fc.nat({ max: 45 }), fc.nat({ max: 45 }), (messages, a, b) => {
        const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
        const fold = selectRange(messages, { from: at(Math.min(a, b)), to: at(Math.max(a, b)), topicLabel: "t" });
        expectWholeGroups(fold, messages, "selectRange");
      }),
      runs,
    );
  });

  it("clearing: removes no message and names each cleared result's own call", () => {
    fc.assert(
      fc.property(historyArb, tunablesArb, (messages, t) => {
        const plan = planClearing(messages, t, { contextWindow: 10_000, ratio: 0.96, at: "2025-01-02T00:00:00.000Z", epoch: 1 });
        const calls = new Map(messages.flatMap((m) => (m.toolCalls ?? []).map((c) => [c.id, c.name] as const)));
        for (const { message, cleared } of plan.clear) {
          expect(messages).toContain(message);
          expect(message.role).toBe("TOOL");
          expect(cleared.toolName).toBe(calls.get(message.toolCallId!) ?? UNKNOWN_TOOL);
        }
      }),
      runs,
    );
  });
});
