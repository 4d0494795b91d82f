/** How many summarizer calls a fold takes, and the part of a fold that fits the cap (core/domain/summary-plan.ts). */
import { describe, expect, it } from "vitest";
import type { Message, Role } from "../../core/domain/model.js";
import { sourceChars } from "../../core/domain/selector.js";
import {
  estimateFoldTokens,
  foldWithinCallCap,
  partChars,
  partsPerCall,
  plannedCalls,
  summaryStrategy,
} from "../../core/domain/summary-plan.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";

const m = (id: string, role: Role, content: string, extra: Partial<Message> = {}): Message => ({
  id,
  processId: "p",
  role,
  content,
  tags: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  archivedInMemoryId: null,
  tokens: 1,
  ...extra,
});
const text = (n: number) => "x".repeat(n);

describe("the plan of a fold's summary", () => {
  it("counts the partial summaries one merge call holds", () => {
    expect(partChars(400)).toBe(1600 + 40 + 64);
    expect(partsPerCall(60_000, 400)).toBe(35);
    expect(partsPerCall(60_000, 4000)).toBe(3);
    // Not even one partial summary of the grown budget fits 1,000 chars: such folds are chained.
    expect(partsPerCall(1000, 4000)).toBe(0);
  });

  it("merges in parallel only when a merge round can shrink its input", () => {
    expect(summaryStrategy(1, 16, 35)).toBe("single");
    expect(summaryStrategy(5, 16, 35)).toBe("parallel");
    expect(summaryStrategy(5, 1, 35)).toBe("chained");
    expect(summaryStrategy(5, 32, 1)).toBe("chained");
    expect(summaryStrategy(5, 32, 0)).toBe("chained");
  });

  it("plans one call per chunk, one per group of parts in each merge round, and the final merge", () => {
    expect(plannedCalls(1, "single", 35)).toBe(1);
    expect(plannedCalls(60, "chained", 0)).toBe(60);
    expect(plannedCalls(12, "parallel", 35)).toBe(13);
    expect(plannedCalls(54, "parallel", 35)).toBe(54 + 2 + 1);
    // 23 chunks at 3 parts a call: rounds of 8, 3, then the merge.
    expect(plannedCalls(23, "parallel", 3)).toBe(23 + 8 + 3 + 1);
    // Each round divides the parts by what a call holds: 1,000 chunks need one round of 29.
    expect(plannedCalls(1000, "parallel", 35)).toBe(1000 + 29 + 1);
  });

  it("estimates a fold's tokens from above: its input at 3 chars a token, every call (and the retry) with its reserve", () => {
    expect(estimateFoldTokens({ sourceChars: 30_000, calls: 1 }, 400)).toBe(10_000 + 2 * (1500 + 1200));
    expect(estimateFoldTokens({ sourceChars: 0, calls: 3 }, 4000)).toBe(4 * (1500 + 12_000));
  });
});

describe("foldWithinCallCap", () => {
  // Chained calls of 1,000 chars: each of these messages takes a call of its own.
  const t = { ...DEFAULT_TUNABLES, summaryMaxTokens: 400 };
  const plain = (n: number) => Array.from({ length: n }, (_, i) => m(`m${i}`, i % 2 ? "ASSISTANT" : "USER", text(600)));

  it("takes the whole fold when its calls fit", () => {
    const fold = plain(10);
    const sized = foldWithinCallCap(fold, 1000, { ...t, maxSummarizerCalls: 11 });
    expect(sized).toMatchObject({ cut: false, chunks: 10, strategy: "chained", calls: 10 });
    expect(sized.fold).toEqual(fold);
    expect(sized.sourceChars).toBe(fold.reduce((n, x) => n + sourceChars(x), 0));
  });

  it("cuts to the oldest part whose calls fit, one call kept for the quality gate's retry", () => {
    const fold = plain(60);
    const sized = foldWithinCallCap(fold, 1000, { ...t, maxSummarizerCalls: 32 });
    expect(sized).toMatchObject({ cut: true, chunks: 31, calls: 31 });
    expect(sized.fold).toEqual(fold.slice(0, 31));
    // A cap of 1 leaves one call for the summary itself.
    expect(foldWithinCallCap(fold, 1000, { ...t, maxSummarizerCalls: 1 }).fold).toEqual(fold.slice(0, 1));
  });

  it("counts merge rounds when the chunks run in parallel", () => {
    // 60,000-char calls of 12,000-char messages: 4 a call; 40 messages are 10 chunks, 11 calls.
    const fold = Array.from({ length: 40 }, (_, i) => m(`b${i}`, "USER", text(12_000)));
    const sized = foldWithinCallCap(fold, 60_000, { ...t, maxSummarizerCalls: 8 });
    // 6 chunks and the merge: 7 calls of the 8 (one kept for the retry).
    expect(sized).toMatchObject({ cut: true, chunks: 6, strategy: "parallel", calls: 7 });
    expect(sized.fold).toHaveLength(24);
  });

  it("never cuts inside a tool group: a group spread over several calls goes whole or not at all", () => {
    // Nine parallel calls and their nine large results: too large for one call even as stubs,
    // so it is spread over one chunk per message.
    const calls = Array.from({ length: 9 }, (_, k) => ({ id: `c${k}`, name: "grep", arguments: "{}" }));
    const group = [m("call", "ASSISTANT", "", { toolCalls: calls }), ...calls.map((c) => m(`r-${c.id}`, "TOOL", text(600), { toolCallId: c.id }))];
    const fold = [...plain(2), ...group, m("after", "USER", text(600))];
    const sized = foldWithinCallCap(fold, 1000, { ...t, maxSummarizerCalls: 4 });
    expect(sized.cut).toBe(true);
    expect(sized.fold.map((x) => x.id)).toEqual(["m0", "m1"]);
    // Led by the group, nothing fits: the fold cannot be cut and must fail as a whole.
    const led = foldWithinCallCap([...group, ...plain(2)], 1000, { ...t, maxSummarizerCalls: 4 });
    expect(led).toMatchObject({ cut: true, fold: [], chunks: 0, calls: 0 });
  });
});
