/**
 * Reading an LLM summarizer's answer: the one summary worth storing (or a reason to store none),
 * and the citations it carries. The answer format is the one the prompt asks for
 * (summary-prompt.ts); docs/summarizers.md explains both.
 */
import { truncateToTokenBudget } from "./budget.js";
import { RESERVED_TAG_RE } from "./reserved-tags.js";
import { estimateTokens } from "./tokens.js";

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

  let text = answer.replace(/<(think|thinking|analysis)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, "");
  if (/<(think|thinking|analysis)\b[^>]*>/i.test(text) && !/<summary\b[^>]*>/i.test(text)) {
    return {
      ok: false,
      error: "the answer stops inside the <analysis> block, before any <summary> (output limit reached?)",
    };
  }

  const blocks = [...text.matchAll(/<summary\b[^>]*>([\s\S]*?)<\/summary\s*>/gi)].map((m) =>
    (m[1] ?? "").trim(),
  );
  if (blocks.length === 0) {
    return /<summary\b[^>]*>/i.test(text)
      ? { ok: false, error: "the <summary> block is not closed (output limit reached?)" }
      : { ok: false, error: "the answer has no <summary> block" };
  }
  // A model that drafts twice usually means the second one; an empty last block still counts
  // as empty rather than falling back to a draft.
  text = blocks[blocks.length - 1] ?? "";
  let cleaned = text
    .replace(RESERVED_TAG_RE, "")
    .replace(/[ \t]+\n/g, "\n")
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

/** A citation as the prompt asks for it (`[#2]`, `[#2,#7]`), tolerant of `#`-less numbers after the first. */
const CITATION_RE = /\s*\[#\d+(?:\s*[,;]\s*#?\d+)*\]/g;

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
    const text = line.replace(CITATION_RE, (m) => {
      for (const n of m.match(/\d+/g) ?? []) {
        const i = Number(n);
        if (i >= 1 && i <= messageCount) cited.add(i);
      }
      return "";
    });
    citations.push([...cited].sort((a, b) => a - b));
    return text.trimEnd();
  });
  return { text: lines.join("\n"), citations };
}

const leadingBlankLines = (text: string) => (/^(?:[ \t]*\n)*/.exec(text)?.[0].split("\n").length ?? 1) - 1;
