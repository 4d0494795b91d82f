/**
 * The linear-time scanners find what the regular expressions they replace found (docs/reliability.md,
 * "Linear time on any input"): each is compared with the former expression on random short texts
 * made of the characters that matter to it, where the expression is still fast.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BULLET } from "../../core/adapters/llm/offline/format.js";
import { checkSummary } from "../../core/domain/quality-gate.js";
import { neutraliseReservedTags } from "../../core/domain/reserved-tags.js";
import { carrierText, cleanWord, lossReport, MAX_REPORT_UNITS, UNIT_SCAN_CHARS, unitKey, unitWindow } from "../../core/domain/salient-units.js";
import { parseStrengthAnswer } from "../../core/domain/strength-analyzer-prompt.js";
import { extractCitations, parseSummaryAnswer } from "../../core/domain/summary-answer.js";
import { hasOpeningTag, tagBlocks } from "../../core/domain/tag-blocks.js";
import { identifiers, trimEndOf, urls } from "../../core/domain/text-scan.js";

const RUNS = { numRuns: 3000, seed: 25 };
/** Texts of up to 40 pieces drawn from `pieces` (characters or short words). */
const textOf = (pieces: string[]) => fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => p.join(""));
const spans = (re: RegExp, text: string) => [...text.matchAll(re)].map((m) => ({ index: m.index, text: m[0] }));

// The former expressions.
const IDENT_RE = /\b[A-Za-z_][\w-]*[._/][\w./-]*[A-Za-z0-9]\b|\b[a-z]+[A-Z]\w*\b/g;
const URL_RE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`)\]]+/gi;
const TAGS = "summary|analysis|transcript|earlier_summary|guidance|think|thinking";
const RESERVED_TAG_RE = new RegExp(`<(\\s*\\/?\\s*(?:${TAGS})\\b[^<>]*)(>?)`, "gi");
const formerUnitKey = (text: string) =>
  text
    .toLowerCase()
    .replace(/(\d),(?=\d)/g, "$1")
    .replace(/,/g, " ")
    .replace(/\s+/g, " ")
    .replace(/^[\s"'“”`(]+|[\s"'“”`).:;!?]+$/g, "")
    .trim();
const formerCarrierText = (text: string) => ` ${formerUnitKey(text.replace(/[.,;:!?()"“”`]+(?=\s|$)/g, " "))} `;
const formerCleanWord = (token: string) => token.replace(/[’']s$/i, "").replace(/[-'’]+$/, "");
const FORMER_CITATION_RE = /\s*\[#\d+(?:\s*[,;]\s*#?\d+)*\]/g;
const FORMER_RATING_LINE = /^[-*\s]*#?\s*(\d+)\s*[:.)=-]?\s*\**\s*(strong|normal|weak)\s*\**\s*[.,]?$/i;

describe("identifiers", () => {
  it("are the matches of the former pattern", () => {
    const text = textOf([..."aAzZ_1-./ !B"]);
    fc.assert(fc.property(text, (t) => {
      expect(identifiers(t)).toEqual(spans(IDENT_RE, t));
    }), RUNS);
  });

  it("reads paths, file names, snake_case and camelCase", () => {
    const found = identifiers("see core/services/compaction.ts, INV-2041 and report-7.csv; tenant_id or fooBar.").map((s) => s.text);
    expect(found).toEqual(["core/services/compaction.ts", "report-7.csv", "tenant_id", "fooBar"]);
  });
});

describe("URLs", () => {
  it("are the matches of the former pattern", () => {
    const text = textOf(["://", "http", "a", "Z", "1", "+", ".", "-", "_", " ", "/", '"', ")", "]", "<", "x:"]);
    fc.assert(fc.property(text, (t) => {
      expect(urls(t)).toEqual(spans(URL_RE, t));
    }), RUNS);
  });
});

describe("unit keys and carrier text", () => {
  const text = textOf([..." \t\n.,;:!?()\"“”`'’-a1"]);

  it("unitKey and carrierText give what the former patterns gave", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(unitKey(t)).toBe(formerUnitKey(t));
        expect(carrierText(t)).toBe(formerCarrierText(t));
      }),
      RUNS,
    );
  });

  it("cleanWord and trimEndOf strip what the former patterns stripped", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(cleanWord(t)).toBe(formerCleanWord(t));
        expect(trimEndOf(t, /[.,;:!?]/)).toBe(t.replace(/[.,;:!?]+$/, ""));
      }),
      RUNS,
    );
  });
});

describe("reserved tags", () => {
  it("are defused exactly as the former pattern defused them", () => {
    const text = textOf(["<", "/", " ", "\t", "summary", "think", "thinking", "transcript", ">", "x", "-"]);
    const former = (t: string) => t.replace(RESERVED_TAG_RE, (_m, inner: string, close: string) => `‹${inner}${close ? "›" : ""}`);
    fc.assert(fc.property(text, (t) => {
      expect(neutraliseReservedTags(t)).toBe(former(t));
    }), RUNS);
  });
});

describe("tag blocks of a model answer", () => {
  const text = textOf(["<think>", "<THINK x>", "</think>", "</ think>", "</think >", "<thinking>", "</thinking>", "<analysis>", "</analysis>", "<summary>", "</summary>", "<summary", "</Summary>", ">", "<", "a", " "]);

  it("are the matches of the former pattern", () => {
    fc.assert(
      fc.property(text, (t) => {
        for (const names of [["think", "thinking", "analysis"], ["summary"]]) {
          const re = new RegExp(`<(${names.join("|")})\\b[^>]*>([\\s\\S]*?)<\\/\\1\\s*>`, "gi");
          const former = [...t.matchAll(re)].map((m) => ({ start: m.index, end: m.index + m[0].length, inner: m[2] }));
          expect(tagBlocks(t, names).map((b) => ({ start: b.start, end: b.end, inner: t.slice(b.innerStart, b.innerEnd) }))).toEqual(former);
          expect(hasOpeningTag(t, names)).toBe(new RegExp(`<(${names.join("|")})\\b[^>]*>`, "i").test(t));
        }
      }),
      RUNS,
    );
  });

  it("the summary read from an answer is the one the former patterns read", () => {
    const answer = textOf(["<analysis>", "</analysis>", "<summary>", "</summary>", "<think>", "</think>", " ", "\t", "\n", "a", "[#1]", " [#2,#3]"]);
    const former = (a: string) => {
      const text = a.replace(/<(think|thinking|analysis)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, "");
      const blocks = [...text.matchAll(/<summary\b[^>]*>([\s\S]*?)<\/summary\s*>/gi)].map((m) => (m[1] ?? "").trim());
      const last = blocks[blocks.length - 1];
      return last === undefined ? null : last.replace(RESERVED_TAG_RE, "").replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
    };
    fc.assert(
      fc.property(answer, (a) => {
        const parsed = parseSummaryAnswer(a, 4000);
        const expected = former(a);
        expect(parsed.ok ? parsed.summary : null).toBe(expected ? expected : null);
      }),
      RUNS,
    );
  });
});

describe("citations", () => {
  it("are taken out with the blanks before them, as the former pattern took them", () => {
    const text = textOf(["[#1]", "[#2", ",", ";", "#", "3", "]", " ", "\t", "a", "["]);
    const former = (t: string) => t.split("\n").map((line) => line.replace(FORMER_CITATION_RE, "").trimEnd()).join("\n");
    fc.assert(fc.property(text, (t) => {
      expect(extractCitations(t, 5).text).toBe(former(t));
    }), RUNS);
  });
});

describe("headings the quality gate refuses", () => {
  it("are the lines the former pattern refused", () => {
    const line = textOf(["#", " ", "\t", "\r", "\u2028", "x", "parent context", "recalled from history"]);
    const former = (t: string) => {
      const m = /^\s{0,3}(#{1,6})\s+(.*)$/.exec(t);
      if (!m) return false;
      const name = (m[2] ?? "").toLowerCase();
      return (m[1] ?? "").length <= 2 || ["earlier conversation", "parent context", "parent conversation summary", "recalled from history"].some((s) => name.startsWith(s));
    };
    fc.assert(
      fc.property(line, (t) => {
        const verdict = checkSummary(`ok\n${t}`, { maxTokens: 1000, required: [] });
        expect(!verdict.ok && verdict.check === "forged_heading").toBe(former(t.trimEnd()));
      }),
      RUNS,
    );
  });
});

describe("rating lines of the strength analyzer", () => {
  it("are read as the former pattern read them", () => {
    const line = textOf(["-", "*", " ", "\t", "#", "1", "2", ":", ".", ")", "strong", "weak", "x", ","]);
    fc.assert(
      fc.property(line, (t) => {
        const trimmed = t.trim();
        fc.pre(trimmed !== "" && !/^```\w*$/.test(trimmed));
        const m = FORMER_RATING_LINE.exec(trimmed);
        const n = Number(m?.[1]);
        const parsed = parseStrengthAnswer(t, 99);
        if (m && n >= 1 && n <= 99) expect(parsed).toEqual({ ok: true, ratings: new Map([[n, m[2]!.toLowerCase()]]) });
        else expect(parsed.ok).toBe(false);
      }),
      RUNS,
    );
  });
});

describe("bullet lines of a prior offline summary", () => {
  it("are read as the former pattern read them", () => {
    const former = /^-\s+(?:(User|Assistant|System|Tool result|Tool \S+)(?: \((decision|to do)\))?:\s+)?(.*)$/;
    const line = textOf(["-", " ", "\t", "\r", "\u2028", "User", "Tool", "result", ":", " (decision)", " (to do)", "a", "x"]);
    fc.assert(
      fc.property(line, (raw) => {
        const t = raw.trim();
        const m = former.exec(t);
        const n = BULLET.exec(t);
        expect(n === null ? null : [n[1], n[2], n[3] ?? ""]).toEqual(m === null ? null : [m[1], m[2], m[3]]);
      }),
      RUNS,
    );
  });
});

describe("the loss report's budget", () => {
  it("reads a long message through its start and its end, cut at blanks", () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `w${i}`).join(" ");
    const window = unitWindow(words);
    expect(window.length).toBeLessThanOrEqual(UNIT_SCAN_CHARS + 2);
    expect(window.startsWith("w0 w1 ")).toBe(true);
    expect(window.endsWith(" w19999")).toBe(true);
    expect(window.split(/\s+/).every((w) => /^w\d+$/.test(w))).toBe(true);
    expect(unitWindow("short text")).toBe("short text");
  });

  it("reports the units of a long message's start and end, not of its middle", () => {
    const middle = "filler words here. ".repeat(5_000);
    const report = lossReport([{ id: "m1", content: `Opened report-1001.csv first. ${middle} Lost report-2002.csv here. ${middle} Closed report-3003.csv last.` }], "nothing");
    expect(report.dropped.map((d) => d.text)).toEqual(["report-1001.csv", "report-3003.csv"]);
  });

  it("counts at most MAX_REPORT_UNITS distinct units; later sources still add their ids", () => {
    const sources = Array.from({ length: 60 }, (_, i) => ({ id: `m${i}`, content: Array.from({ length: 100 }, (_, k) => `ticket ${10_000 + i * 100 + k}`).join(", ") }));
    sources.push({ id: "last", content: "ticket 10000 again" });
    const report = lossReport(sources, "nothing");
    expect(report.units).toBe(MAX_REPORT_UNITS);
    expect(report.dropped.find((d) => d.text === "10000")?.messageIds).toEqual(["m0", "last"]);
  });
});
