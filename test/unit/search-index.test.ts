/** The history search ranking: stemming, stop words, prefix/fuzzy matching, tag filters, order. */
import { describe, expect, it } from "vitest";
import { createHistoryIndex, matchesTag, processTerm, stem, type HistoryQuery } from "../../core/domain/search-index.js";

/** Ranks `messages` for one query on a fresh index. */
const rankMessages = (messages: Parameters<typeof createHistoryIndex>[0], query: HistoryQuery) => createHistoryIndex(messages).search(query);

const msg = (id: string, content: string, tags: string[] = []) => ({ id, content, tags });

describe("stem (Porter)", () => {
  it.each([
    ["caresses", "caress"],
    ["ponies", "poni"],
    ["cats", "cat"],
    ["agreed", "agre"],
    ["running", "run"],
    ["hopping", "hop"],
    ["filing", "file"],
    ["happy", "happi"],
    ["relational", "relat"],
    ["conditional", "condit"],
    ["generalization", "gener"],
    ["hopeful", "hope"],
    ["goodness", "good"],
    ["adjustment", "adjust"],
    ["adoption", "adopt"],
    ["controll", "control"],
    ["compaction", "compact"],
    ["memories", "memori"],
    ["memory", "memori"],
  ])("%s -> %s", (word, expected) => {
    expect(stem(word)).toBe(expected);
  });

  it("leaves short words and words with digits alone", () => {
    expect(stem("is")).toBe("is");
    expect(stem("gpt4")).toBe("gpt4");
  });
});

describe("processTerm", () => {
  it("drops stop words and contraction pieces, lower-cases and stems the rest", () => {
    expect(processTerm("The")).toBeNull();
    expect(processTerm("s")).toBeNull();
    expect(processTerm("Migrations")).toBe("migrat");
    expect(processTerm("7")).toBe("7");
  });
});

describe("ranking", () => {
  const history = [
    msg("m1", "Let's plan the database migration for the billing service", ["MODE:plan"]),
    msg("m2", "I migrated the users table yesterday", ["STRENGTH:strong"]),
    msg("m3", "The weather in Lisbon is lovely", ["STRENGTH:weak"]),
    msg("m4", "[compaction] Topic \"db\" was completed", ["RECOMPACTION:db", "STRENGTH:strong"]),
    msg("m5", "thanks"),
  ];

  it("matches inflected forms through the stemmer and ranks the closer message first", () => {
    const hits = rankMessages(history, { q: "migrating databases", limit: 10 });
    expect(hits.map((h) => h.id)).toEqual(["m1", "m2"]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it("finds a half-typed last word by prefix and a misspelt one by fuzzy matching", () => {
    expect(rankMessages(history, { q: "lisb", limit: 5 }).map((h) => h.id)).toEqual(["m3"]);
    expect(rankMessages(history, { q: "weathr Lisbom", limit: 5 }).map((h) => h.id)).toEqual(["m3"]);
  });

  it("returns nothing for a query of stop words only", () => {
    expect(rankMessages(history, { q: "the of and", limit: 5 })).toEqual([]);
  });

  it("filters by an exact tag or a tag prefix ending in *", () => {
    expect(rankMessages(history, { q: "migration", tag: "MODE:plan", limit: 5 }).map((h) => h.id)).toEqual(["m1"]);
    expect(rankMessages(history, { q: "completed topic", tag: "RECOMPACTION:*", limit: 5 }).map((h) => h.id)).toEqual(["m4"]);
    expect(rankMessages(history, { q: "lisbon", tag: "STRENGTH:strong", limit: 5 })).toEqual([]);
    expect(matchesTag(["STRENGTH:weak"], "STRENGTH:*")).toBe(true);
    expect(matchesTag(["STRENGTH:weak"], "STRENGTH")).toBe(false);
  });

  it("respects the limit and breaks score ties by history order", () => {
    const same = ["a", "b", "c", "d"].map((id) => msg(id, "identical deployment note"));
    expect(rankMessages(same, { q: "deployment", limit: 3 }).map((h) => h.id)).toEqual(["a", "b", "c"]);
  });

  it("searches tool call names and arguments", () => {
    const withTool = { ...msg("t1", "Let me look."), toolCalls: [{ name: "grep_repo", arguments: '{"pattern":"kubernetes"}' }] };
    expect(rankMessages([withTool, ...history], { q: "kubernetes", limit: 5 }).map((h) => h.id)).toEqual(["t1"]);
  });

  it("adds new messages to a built index once, ignoring ids it already has", () => {
    const index = createHistoryIndex(history);
    expect(index.add([history[0]!, msg("m6", "The migration finished on staging")])).toBe(1);
    expect(index.size).toBe(6);
    expect(index.search({ q: "staging", limit: 5 }).map((h) => h.id)).toEqual(["m6"]);
  });
});

describe("createHistoryIndex: retention (docs/configuration.md, \"Retention\")", () => {
  const at = "2026-01-01T00:00:00.000Z";
  const docs = [
    { ...msg("m1", "the walrus crate went to dock four"), expiresAt: at },
    msg("m2", "a walrus crate stays on the pier"),
    msg("m3", "nothing about it"),
  ];

  it("answers an original until its expiry and never from then on", () => {
    const index = createHistoryIndex(docs);
    const ids = (now?: Date) => index.search({ q: "walrus crate", limit: 10 }, now).map((h) => h.id).sort();
    expect(ids()).toEqual(["m1", "m2"]);
    expect(ids(new Date(Date.parse(at) - 1))).toEqual(["m1", "m2"]);
    expect(ids(new Date(at))).toEqual(["m2"]);
  });

  it("drops removed messages from the index, so they are never a hit again", () => {
    const index = createHistoryIndex(docs);
    index.remove(["m2", "unknown"]);
    expect(index.size).toBe(2);
    expect(index.has("m2")).toBe(false);
    expect(index.search({ q: "pier", limit: 10 })).toEqual([]);
    expect(index.search({ q: "walrus", limit: 10 }).map((h) => h.id)).toEqual(["m1"]);
  });
});
