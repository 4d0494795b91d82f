/**
 * The offline summary's text format and its parser (core/adapters/llm/offline/format.ts): what
 * `render` prints, `parsePrior` reads back when the summary becomes the next fold's prior one.
 */
import { describe, expect, it } from "vitest";
import { headerLine, parsePrior, render } from "../../core/adapters/llm/offline/format.js";
import { makeUnit, type UnitContext } from "../../core/adapters/llm/offline/units.js";
import { buildVocab } from "../../core/domain/salient-units.js";

const ctx: UnitContext = { focus: new Set(), vocab: buildVocab([]), mustKeep: [] };
const unit = (order: number, label: string, day: string, text: string) =>
  makeUnit({ order, label, day, text, recency: 1, prior: false, role: "USER" }, ctx);
const shape = (u: { label: string; day: string; text: string; marker: string }) => ({
  label: u.label,
  day: u.day,
  text: u.text,
  marker: u.marker,
});

describe("the offline summary format", () => {
  it("reads back what it prints: count, first day, speakers, days, markers and text", () => {
    const units = [
      unit(0, "User", "2024-05-01", "We decided to ship the Lisbon release on 12 June."),
      unit(1, "Assistant", "2024-05-01", "I will draft the changelog for release 4.2 tomorrow."),
      unit(2, "Tool result", "2024-05-03", "Build 8812 passed on the staging cluster in Frankfurt."),
    ];
    expect(units.map((u) => u.marker)).toEqual(["decision", "to do", ""]);
    const header = headerLine(17, "2024-05-01", "2024-05-03", "release planning");
    const { text, citations } = render(header, units);
    expect(text.split("\n")).toEqual([
      "Offline extract of 17 messages (2024-05-01 to 2024-05-03), topic: release planning:",
      "2024-05-01",
      "- User (decision): We decided to ship the Lisbon release on 12 June.",
      "- Assistant (to do): I will draft the changelog for release 4.2 tomorrow.",
      "2024-05-03",
      "- Tool result: Build 8812 passed on the staging cluster in Frankfurt.",
    ]);
    expect(citations).toHaveLength(6);

    const parsed = parsePrior(text, ctx);
    expect(parsed.count).toBe(17);
    expect(parsed.firstDay).toBe("2024-05-01");
    expect(parsed.units.map(shape)).toEqual(units.map(shape));
    expect(parsed.units.every((u) => u.prior && u.source === undefined)).toBe(true);
  });

  it("prints a placeholder when nothing was kept, and reads it back as no unit", () => {
    const { text } = render(headerLine(3, "", "", undefined), []);
    expect(text).toBe("Offline extract of 3 messages:\n- (only acknowledgements and small talk)");
    expect(parsePrior(text, ctx)).toEqual({ units: [], count: 3, firstDay: "" });
  });

  it("reads any other text (an LLM-written prior summary) as sentences of unknown speaker", () => {
    const parsed = parsePrior("The user chose Postgres 16. You promised a migration plan by Friday.", ctx);
    expect(parsed.count).toBe(0);
    expect(parsed.units.map(shape)).toEqual([
      { label: "", day: "", text: "The user chose Postgres 16.", marker: "decision" },
      { label: "", day: "", text: "You promised a migration plan by Friday.", marker: "to do" },
    ]);
  });
});
