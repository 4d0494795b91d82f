/**
 * The offline summary prints a line once: an engine whose assistant answers "Noted (12)." on every
 * turn (a counter in it, or the same words each time) gets at most one such line, stating how many
 * times it was said, in one fold and across folds; the room goes to what the user said.
 */
import { describe, expect, it } from "vitest";
import { extractiveSummary } from "../../core/adapters/llm/offline-summarizer.js";
import { collapseRepeats } from "../../core/adapters/llm/offline/select.js";
import type { Unit } from "../../core/adapters/llm/offline/units.js";
import type { SummarySourceMessage } from "../../core/ports/summarizer.js";

const at = (i: number) => new Date(Date.UTC(2026, 11, 1, 10, 0, i)).toISOString();

/** 40 turns: a user message, then the assistant's acknowledgement with the turn's number in it. */
function session(offset = 0): SummarySourceMessage[] {
  return Array.from({ length: 40 }, (_, k) => {
    const i = offset + k;
    return [
      { id: `u${i}`, role: "USER" as const, content: i % 10 === 0 ? `Important: my passport number is X9-4411-QZ, turn ${i}.` : `Tell me more about step ${i} of the plan.`, createdAt: at(2 * i) },
      { id: `a${i}`, role: "ASSISTANT" as const, content: `Noted (${i}).`, createdAt: at(2 * i + 1) },
    ];
  }).flat();
}

const acknowledgements = (text: string) => text.split("\n").filter((l) => /^- Assistant: Noted \(\d+\)\./.test(l));

describe("the offline summary's lines", () => {
  it("hold an acknowledgement said on every turn at most once, and the user's facts", () => {
    const text = extractiveSummary({ priorSummary: null, messages: session() }, 800);
    expect(acknowledgements(text).length).toBeLessThanOrEqual(1);
    expect(text).toContain("- User: Important: my passport number is X9-4411-QZ");
    expect(text.split("\n").filter((l) => l.startsWith("- User: ")).length).toBeGreaterThan(10);
  });

  it("stay so across folds", () => {
    const first = extractiveSummary({ priorSummary: null, messages: session() }, 800);
    const second = extractiveSummary({ priorSummary: first, messages: session(40) }, 800);
    expect(acknowledgements(second).length).toBeLessThanOrEqual(1);
    expect(second.split("\n")[0]).toMatch(/^Offline extract of 160 messages/);
    const lines = second.split("\n").filter((l) => l.startsWith("- "));
    expect(new Set(lines).size).toBe(lines.length);
  });
});

describe("collapseRepeats", () => {
  const unit = (order: number, text: string, label = "Assistant", prior = false): Unit => ({ order, label, day: "", text, marker: "", keys: new Map(), bonus: 0, prior });

  it("keeps the first of each repeated line in its place and states the count once", () => {
    const out = collapseRepeats([unit(0, "Noted (1)."), unit(1, "Ship crate 1001 to Porto.", "User"), unit(2, "Noted (2)."), unit(3, "Noted (1)."), unit(4, "Ship crate 1002 to Porto.", "User")]);
    expect(out.map((u) => `${u.label}: ${u.text}`)).toEqual(["Assistant: Noted (1). (3 times)", "User: Ship crate 1001 to Porto.", "User: Ship crate 1002 to Porto."]);
  });

  it("tells speakers apart, and adds a prior summary's count to the new ones", () => {
    const out = collapseRepeats([unit(0, "Thanks. (4 times)", "User", true), unit(1, "Thanks.", "User"), unit(2, "Thanks.", "Assistant"), unit(3, "Thanks.", "User")]);
    expect(out.map((u) => `${u.label}: ${u.text}`)).toEqual(["User: Thanks. (6 times)", "Assistant: Thanks."]);
  });

  it("leaves lines that say different things alone", () => {
    const units = [unit(0, "Deploy staging on 3 May."), unit(1, "Deploy production on 4 May.")];
    expect(collapseRepeats(units).map((u) => u.text)).toEqual(["Deploy staging on 3 May.", "Deploy production on 4 May."]);
  });
});
