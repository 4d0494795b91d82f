/** Recall sizing: excerpts cut around the match, a token budget, and nothing the summary already shows. */
import { describe, expect, it } from "vitest";
import type { Message } from "../../core/domain/model.js";
import {
  excerptAround,
  queryTerms,
  RECALL_ITEM_MAX_CHARS,
  RECALL_LEAD,
  RECALL_MIN_CANDIDATES,
  recallCandidates,
  recallStamp,
  renderRecall,
  selectRecall,
} from "../../core/domain/recall.js";
import { recallBudget } from "../../core/services/context.js";

const msg = (id: string, content: string): Message => ({
  id,
  processId: "p",
  role: "USER",
  content,
  tags: [],
  createdAt: "2024-05-01T10:00:00.000Z",
  archivedInMemoryId: "mem_1",
  tokens: Math.ceil(content.length / 4),
});

describe("excerptAround", () => {
  it("keeps the passage that matches, not the start of a long message", () => {
    const text = `${"Unrelated setup talk about lunch. ".repeat(40)}The billing deploy window is Friday 14:00 UTC. ${"More chatter about plants. ".repeat(40)}`;
    const cut = excerptAround(text, queryTerms("when is the billing deploy window?"), 200);
    expect(cut).toContain("The billing deploy window is Friday 14:00 UTC.");
    expect(cut.length).toBeLessThanOrEqual(202);
    expect(cut.startsWith("…")).toBe(true);
    expect(cut.endsWith("…")).toBe(true);
  });

  it("returns short messages whole", () => {
    expect(excerptAround("Deploy on  Friday.", ["deploy"], 200)).toBe("Deploy on Friday.");
  });
});

describe("selectRecall", () => {
  const hits = Array.from({ length: 30 }, (_, i) => msg(`m${i}`, `Note ${i}: the deploy window moved to slot ${100 + i} after review ${i}.`));

  it("fills the token budget with the best hits in order, and no more", () => {
    const lines = selectRecall(hits, { query: "deploy window", budgetTokens: 150, summary: null });
    const used = lines.reduce((n, l) => n + l.tokens, 0);
    expect(lines.length).toBeGreaterThan(3); // a budget, not a fixed count of three
    expect(used + Math.ceil((RECALL_LEAD.length + 1) / 4)).toBeLessThanOrEqual(150);
    expect(lines.map((l) => l.message.id)).toEqual(hits.slice(0, lines.length).map((m) => m.id));
    expect(selectRecall(hits, { query: "deploy window", budgetTokens: 0, summary: null })).toEqual([]);
  });

  it("renders the lines as quoted material, the lead and the quote marks inside the budget", () => {
    for (const budgetTokens of [30, 60, 100, 250, 1000]) {
      const lines = selectRecall(hits, { query: "deploy window", budgetTokens, summary: null });
      if (lines.length === 0) continue;
      const content = renderRecall(lines);
      expect(content.split("\n")).toEqual([RECALL_LEAD, ...lines.map((l) => `> ${l.line}`)]);
      expect(Math.ceil(content.length / 4)).toBeLessThanOrEqual(budgetTokens);
    }
  });

  it("stamps each line with its message's time to the minute (UTC) and its role", () => {
    const [line] = selectRecall(hits.slice(0, 1), { query: "deploy window", budgetTokens: 500, summary: null });
    expect(line!.line).toBe("- [2024-05-01 10:00] USER: Note 0: the deploy window moved to slot 100 after review 0.");
    expect(recallStamp("not a timestamp")).toBe("not a timestamp");
  });

  it("skips a hit whose passage the replayed summary already holds", () => {
    const summary = "- User: Note 0: the deploy window moved to slot 100 after review 0.";
    const lines = selectRecall(hits.slice(0, 2), { query: "deploy window", budgetTokens: 500, summary });
    expect(lines.map((l) => l.message.id)).toEqual(["m1"]);
  });

  it("cuts each long hit to at most RECALL_ITEM_MAX_CHARS", () => {
    const long = msg("big", `${"filler words here. ".repeat(200)}deploy window details. ${"tail words. ".repeat(200)}`);
    const [line] = selectRecall([long], { query: "deploy window", budgetTokens: 5000, summary: null });
    expect(line!.line).toContain("deploy window details.");
    expect(line!.line.length).toBeLessThan(RECALL_ITEM_MAX_CHARS + 60);
  });
});

describe("recallBudget", () => {
  it("is recallMaxTokens, but never pushes the prompt past the hard threshold", () => {
    const t = { recallMaxTokens: 1000, hardThreshold: 0.85, emergencyThreshold: 0.95 };
    expect(recallBudget(t, 100_000, 10_000)).toBe(1000);
    expect(recallBudget(t, 4000, 3000)).toBe(400);
    expect(recallBudget(t, 4000, 3500)).toBe(0);
  });

  it("after a trim, fills the room the trim left below the emergency threshold", () => {
    const t = { recallMaxTokens: 1000, hardThreshold: 0.85, emergencyThreshold: 0.95 };
    // The trim's limit at 4,000 is 3,799 tokens.
    expect(recallBudget(t, 4000, 3500, true)).toBe(299);
    expect(recallBudget(t, 4000, 3799, true)).toBe(0);
    expect(recallBudget(t, 100_000, 80_000, true)).toBe(1000);
  });
});

describe("recallCandidates", () => {
  it("considers at least the minimum, and enough short hits to fill a large budget", () => {
    expect(recallCandidates(0)).toBe(RECALL_MIN_CANDIDATES);
    expect(recallCandidates(500)).toBe(RECALL_MIN_CANDIDATES);
    // 8,000 tokens = 32,000 chars: 400 excerpts of 80 chars.
    expect(recallCandidates(8_000)).toBe(400);
  });
});
