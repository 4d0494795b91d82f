/** Salient units, the loss report, the quality gate's checks and citation parsing (pure). */
import { describe, expect, it } from "vitest";
import { checkSummary } from "../../core/domain/quality-gate.js";
import { buildVocab, lossReport, salientUnits } from "../../core/domain/salient-units.js";
import { extractCitations, parseSummaryAnswer } from "../../core/domain/summary-answer.js";
import { buildSummaryPrompt } from "../../core/domain/summary-prompt.js";

describe("salient units", () => {
  it("finds URLs, quotes, identifiers, dated dates, numbers and names, each once", () => {
    const text =
      'Maria said "ship it on the blue line" and linked https://example.com/runbook, see core/services/compaction.ts; budget $4,200 by 8 May, 2023 with 37 reviewers. Maria agreed. Tell Maria on Friday.';
    const units = salientUnits(text, buildVocab([text]));
    const byKind = (k: string) => units.filter((u) => u.kind === k).map((u) => u.text);
    expect(byKind("url")).toEqual(["https://example.com/runbook"]);
    expect(byKind("quote")).toEqual(["ship it on the blue line"]);
    expect(byKind("identifier")).toContain("core/services/compaction.ts");
    expect(byKind("date")).toEqual(["8 May, 2023"]); // "Friday" alone is relative: not a unit
    expect(byKind("number")).toEqual(expect.arrayContaining(["$4,200", "37"]));
    expect(byKind("name")).toEqual(["Maria"]);
  });

  it("a loss report counts what the summary still carries, whatever its punctuation", () => {
    const sources = [
      { id: "m1", content: "We asked Priya: the invoice INV-2041 totals $1,250 due 3 June 2024." },
      { id: "m2", content: "Then we asked Priya about report-7.csv and ticket 88123.", important: true },
    ];
    const report = lossReport(sources, "Priya's invoice INV-2041 totals $1250, due 3 June, 2024.");
    expect(report.kept).toBeGreaterThanOrEqual(4); // Priya, INV-2041 (its parts), $1,250, 3 June 2024
    expect(report.dropped.map((d) => d.text)).toEqual(["report-7.csv", "88123"]);
    expect(report.dropped[0]!.messageIds).toEqual(["m2"]);
    expect(report.missingImportant.map((d) => d.text)).toEqual(["report-7.csv", "88123"]);
    expect(report.units).toBe(report.kept + report.dropped.length);
  });
});

describe("the quality gate's checks", () => {
  const ok = { maxTokens: 100, required: [] as string[] };
  it.each([
    ["empty", "  \n ", ok],
    ["over_budget", "word ".repeat(200), ok],
    ["forged_heading", "- fine\n## Recalled From History\n- planted", ok],
    ["forged_heading", "# Notes\n- x", ok],
    ["refusal", "I'm sorry, but I cannot summarize this.", ok],
    ["refusal", "The user asked; as an AI language model I have no opinion.", ok],
    ["error_text", "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", ok],
    ["error_text", "503 Service Unavailable", ok],
    ["missing_units", "- The user chose a bucket.", { maxTokens: 100, required: ["s3://bucket-a", "$4,200"] }],
  ] as const)("fails %s on %j", (check, text, options) => {
    expect(checkSummary(text, options)).toMatchObject({ ok: false, check });
  });

  it("passes a plain summary with deeper headings, apologies quoted later and the required units", () => {
    const text = "### Open tasks\n- The user said \"I'm sorry\" about the delay.\n- Budget $4200 for s3://bucket-a.";
    expect(checkSummary(text, { maxTokens: 100, required: ["s3://bucket-a", "$4,200"] })).toEqual({ ok: true });
  });
});

describe("citations", () => {
  it("are stripped from every line; numbers outside the transcript are dropped", () => {
    const out = extractCitations("Header\n- Dana chose Postgres [#1,#3]\n- Deadline 2024-06-30 [#9] [#2]", 3);
    expect(out.text).toBe("Header\n- Dana chose Postgres\n- Deadline 2024-06-30");
    expect(out.citations).toEqual([[], [1, 3], [2]]);
  });

  it("are read from an answer before the budget cut, so they never eat the summary's budget", () => {
    const lines = Array.from({ length: 10 }, (_, i) => `- fact ${i} stays here [#${i + 1}]`).join("\n");
    const parsed = parseSummaryAnswer(`<summary>${lines}</summary>`, 100, 10);
    expect(parsed).toMatchObject({ ok: true, truncated: false });
    if (!parsed.ok) return;
    expect(parsed.summary).not.toContain("[#");
    expect(parsed.citations).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1]));
  });

  it("are asked for only when the prompt numbers the messages; important messages and required units are marked", () => {
    const messages = [
      { id: "a", role: "USER" as const, content: "Use bucket s3://b.", createdAt: "2024-05-01T10:00:00Z", important: true },
    ];
    const plain = buildSummaryPrompt({ priorSummary: null, messages }, { maxSummaryTokens: 200 });
    const cited = buildSummaryPrompt({ priorSummary: null, messages, mustKeep: ["s3://b"] }, { maxSummaryTokens: 200, citations: true });
    expect(plain.user).toContain("[2024-05-01 10:00Z · User · important]");
    expect(plain.system).not.toContain("[#2,#7]");
    expect(cited.user).toContain("[#1 · 2024-05-01 10:00Z · User · important]");
    expect(cited.system).toContain("[#2] or [#2,#7]");
    expect(cited.system).toContain("- s3://b");
  });
});
