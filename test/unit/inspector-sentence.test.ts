/** The inspector's sentence around a dropped unit (web/sentence.js; docs/inspector.md, "What it shows"). */
import { describe, expect, it } from "vitest";
// @ts-expect-error: web/ is plain JavaScript, type-checked on its own (tsconfig.checks.json)
import { SENTENCE_MAX, sentenceAround } from "../../web/sentence.js";

describe("sentenceAround", () => {
  it("answers the sentence that holds the unit", () => {
    const text = "We met on Monday. The invoice total was 4,180 EUR! Nothing else came up.";
    expect(sentenceAround(text, "4,180")).toBe("The invoice total was 4,180 EUR!");
    expect(sentenceAround(text, "Monday")).toBe("We met on Monday.");
    expect(sentenceAround("line one\nthe port is 5432\nline three", "5432")).toBe("the port is 5432");
  });

  it("finds the unit in another case, and answers null when the text does not hold it", () => {
    expect(sentenceAround("Deploy to Frankfurt first.", "frankfurt")).toBe("Deploy to Frankfurt first.");
    expect(sentenceAround("Deploy to Frankfurt first.", "Berlin")).toBeNull();
    expect(sentenceAround("anything", "")).toBeNull();
  });

  it("cuts a long sentence around the unit, at the limit and one character past it", () => {
    const fits = `${"a".repeat(SENTENCE_MAX - 5)} 1234`;
    expect(sentenceAround(fits, "1234")).toBe(fits);
    const past = `${"a".repeat(SENTENCE_MAX - 4)} 1234`;
    const cut: string = sentenceAround(past, "1234");
    expect(cut.startsWith("…")).toBe(true);
    expect(cut).toContain("1234");
    expect(cut.length).toBe(SENTENCE_MAX + 1);
  });

  it("reads a 1 MB message without a sentence end in linear time", () => {
    const text = `${"x".repeat(1_000_000)} unit-7 ${"y".repeat(1_000_000)}`;
    expect(sentenceAround(text, "unit-7")).toContain("unit-7");
  });
});
