/**
 * Reading an LLM summarizer's answer: the one summary worth storing (or a reason to store none),
 * and the citations it carries. The answer format is the one the prompt asks for
 * (summary-prompt.ts); docs/summarizers.md explains both.
 */
import { truncateToTokenBudget } from "./budget.js";
import { RESERVED_TAG_RE } from "./reserved-tags.js";
import { hasOpeningTag, tagBlocks, withoutBlocks } from "./tag-blocks.js";
import { estimateTokens } from "./tokens.js";

/** The scratch pass and the reasoning blocks some models emit: dropped before the summary is read. */
const SCRATCH_TAGS = ["think", "thinking", "analysis"];
const SUMMARY_TAG = ["summary"];

export type ParsedSummaryAnswer =
  | { ok: true; summary: string; truncated: boolean; citations?: number[][] }
  | { ok: false; error: string };

/**
 * Reads a model answer: drops the scratch pass (and any `<think>` block), takes the
 * `<summary>` block, and cuts it to `maxSummaryTokens` at a line or sentence boundary if the model
 * overshot. No block, an unclosed block or an empty one is an error, never a summary: the caller
 * records a failed compaction and the previous summary stays in force.
 */
export function parseSummaryAnswer(
  answer: string | null | undefined,
  maxSummaryTokens: number,
  /** When the prompt asked for citations: how many messages it numbered. */
  citedMessages?: number,
): ParsedSummaryAnswer {
  if (!answer?.trim()) return { ok: false, error: "the model returned an empty answer" };

  let text = withoutBlocks(answer, tagBlocks(answer, SCRATCH_TAGS));
  if (hasOpeningTag(text, SCRATCH_TAGS) && !hasOpeningTag(text, SUMMARY_TAG)) {
    return {
      ok: false,
      error: "the answer stops inside the <analysis> block, before any <summary> (output limit reached?)",
    };
  }

  const blocks = tagBlocks(text, SUMMARY_TAG).map((b) => text.slice(b.innerStart, b.innerEnd).trim());
  if (blocks.length === 0) {
    return hasOpeningTag(text, SUMMARY_TAG)
      ? { ok: false, error: "the <summary> block is not closed (output limit reached?)" }
      : { ok: false, error: "the answer has no <summary> block" };
  }
  // A model that drafts twice usually means the second one; an empty last block still counts
  // as empty rather than falling back to a draft.
  text = blocks[blocks.length - 1] ?? "";
  let cleaned = text
    .replace(RESERVED_TAG_RE, "")
    // Blanks before a line break go; a blank run elsewhere is kept whole (`/[ \t]+\n/g` would
    // retry it from each of its characters).
    .replace(/[ \t]+/g, (run: string, at: number, whole: string) => (whole[at + run.length] === "\n" ? "" : run))
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  let cited: number[][] | undefined;
  if (citedMessages !== undefined) {
    // Citations are stored beside the summary, so they neither count against nor eat its budget.
    const extracted = extractCitations(cleaned, citedMessages);
    cleaned = extracted.text.trim();
    cited = extracted.citations.slice(leadingBlankLines(extracted.text));
  }
  if (!cleaned) return { ok: false, error: "the <summary> block is empty" };

  const summary = truncateToTokenBudget(cleaned, maxSummaryTokens);
  if (!summary) return { ok: false, error: "the <summary> block is empty" };
  return {
    ok: true,
    summary,
    truncated: estimateTokens(cleaned) > maxSummaryTokens,
    ...(cited ? { citations: cited.slice(0, summary.split("\n").length) } : {}),
  };
}

/**
 * A citation as the prompt asks for it (`[#2]`, `[#2,#7]`), tolerant of `#`-less numbers after the
 * first. The blanks before it go with it; they are taken by hand, because a leading `\s*` would
 * rescan a long blank run from each of its characters.
 */
const CITATION_RE = /\[#\d+(?:\s*[,;]\s*#?\d+)*\]/g;

/**
 * Removes the citations from a summary and returns, per line, the message numbers it cited
 * (1-based, as in the transcript). Numbers outside `1..messageCount` are dropped: a model may
 * invent them, and a citation must name a message of this fold.
 *
 * @example extractCitations("- Dana chose Postgres [#1,#3]", 3) // { text: "- Dana chose Postgres", citations: [[1, 3]] }
 */
export function extractCitations(summary: string, messageCount: number): { text: string; citations: number[][] } {
  const citations: number[][] = [];
  const lines = summary.split("\n").map((line) => {
    const cited = new Set<number>();
    const kept: string[] = [];
    let at = 0;
    for (const m of line.matchAll(CITATION_RE)) {
      for (const n of m[0].match(/\d+/g) ?? []) {
        const i = Number(n);
        if (i >= 1 && i <= messageCount) cited.add(i);
      }
      let start = m.index;
      while (start > at && /\s/.test(line[start - 1]!)) start--;
      kept.push(line.slice(at, start));
      at = m.index + m[0].length;
    }
    kept.push(line.slice(at));
    citations.push([...cited].sort((a, b) => a - b));
    return kept.join("").trimEnd();
  });
  return { text: lines.join("\n"), citations };
}

const leadingBlankLines = (text: string) => (/^(?:[ \t]*\n)*/.exec(text)?.[0].split("\n").length ?? 1) - 1;
