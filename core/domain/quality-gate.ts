/**
 * The checks a summary must pass before it replaces the history (docs/summarizers.md,
 * "Quality gate"). Pure: the compaction service runs them, retries once, and records a failure.
 */
import { estimateTokens } from "./tokens.js";
import { carrierText, carries, unitKey } from "./salient-units.js";
import { trimStartOf } from "./text-scan.js";

export type QualityCheck = "empty" | "over_budget" | "forged_heading" | "refusal" | "error_text" | "missing_units";

export type QualityVerdict = { ok: true } | { ok: false; check: QualityCheck; detail: string; missing?: string[] };

/** Section names of the context block: a summary line claiming one would forge a section. */
const SECTION_NAMES = [
  "earlier conversation",
  "parent context",
  "parent conversation summary",
  "recalled from history",
  "evidence ledger",
];

/** A Markdown heading's start: up to three blanks, one to six `#`, a blank. */
const HEADING_START = /^\s{0,3}(#{1,6})\s/;

/** Level 1-2 headings start sections of the context block; deeper ones may name any other thing. */
function forgedHeading(text: string): string | null {
  for (const line of text.split("\n")) {
    const m = HEADING_START.exec(line);
    if (!m) continue;
    // What `/^\s{0,3}(#{1,6})\s+(.*)$/` reads as the heading's name: the rest after the blanks,
    // on one line (`.` stops at \r, U+2028, U+2029). Taken by hand: that pattern tries every split
    // of a long blank run between `\s+` and `.*` before it gives up on such a line.
    const rest = trimStartOf(line.slice(m[0].length), /\s/);
    if (/[\r\u2028\u2029]/.test(rest)) continue;
    const name = rest.toLowerCase();
    if ((m[1] ?? "").length <= 2 || SECTION_NAMES.some((s) => name.startsWith(s))) return line.trim().slice(0, 80);
  }
  return null;
}

/** The model declined or talked about itself instead of summarizing. Checked at the start only. */
const REFUSAL_RE =
  /^(?:i'?m sorry|i am sorry|sorry,? (?:but )?i\b|i apologi[sz]e|unfortunately,? i (?:can(?:no|')t|am unable)|i can(?:no|')t (?:help|assist|comply|do that|provide|summari[sz]e|fulfil)|i(?: am|'m) (?:unable|not able) to|i won'?t be able to|as an ai\b)/i;
const AI_DISCLAIMER_RE = /\bas an ai(?: language)? model\b/i;
/** A transport or provider error that ended up where the summary should be. */
const ERROR_TEXT_RE =
  /^(?:\{\s*"(?:error|message|detail|errors)"|<!doctype html|<html\b|<\?xml|http\/\d(?:\.\d)?\s+\d{3}\b|(?:error:?\s*)?(?:400|401|403|404|408|429|500|502|503|504)\s*[:-]?\s*(?:bad request|unauthorized|forbidden|not found|request timeout|too many requests|internal server error|bad gateway|service unavailable|gateway timeout)|internal server error|bad gateway|service unavailable|gateway timeout|upstream (?:connect )?error|rate limit (?:exceeded|reached)|error code:?\s*\d{3})/i;

/**
 * Checks one summary: not empty, within `maxTokens`, no forged section heading, not a refusal
 * or an error text, and it carries every unit of `required` (word for word, as the loss report
 * compares).
 */
export function checkSummary(text: string, options: { maxTokens: number; required: readonly string[] }): QualityVerdict {
  const trimmed = text.trim();
  if (!trimmed) return { ok: false, check: "empty", detail: "the summary is empty" };
  const tokens = estimateTokens(trimmed);
  if (tokens > options.maxTokens) {
    return { ok: false, check: "over_budget", detail: `${tokens} tokens, budget ${options.maxTokens}` };
  }
  const heading = forgedHeading(trimmed);
  if (heading) return { ok: false, check: "forged_heading", detail: heading };
  const head = trimmed.slice(0, 300).replace(/^[\s>*_-]+/, "").replace(/[’]/g, "'");
  if (ERROR_TEXT_RE.test(head)) return { ok: false, check: "error_text", detail: head.slice(0, 80) };
  if (REFUSAL_RE.test(head) || AI_DISCLAIMER_RE.test(trimmed)) {
    return { ok: false, check: "refusal", detail: head.slice(0, 80) };
  }
  const prepared = carrierText(trimmed);
  const missing = options.required.filter((u) => !carries(prepared, { key: unitKey(u) }));
  if (missing.length > 0) {
    return { ok: false, check: "missing_units", detail: missing.slice(0, 10).join(", "), missing };
  }
  return { ok: true };
}

/** The instructions of the one retry: what failed, and what the summary must contain. */
export function retryInstructions(verdict: Exclude<QualityVerdict, { ok: true }>, maxTokens: number): string {
  const why: Record<QualityCheck, string> = {
    empty: "it was empty",
    over_budget: `it was longer than ${maxTokens} tokens`,
    forged_heading: "it contained a markdown heading (# or ##); write plain lines or bullets without headings",
    refusal: "it was a refusal or a remark about yourself instead of a summary",
    error_text: "it was an error message instead of a summary",
    missing_units: "it left out facts from messages marked important",
  };
  const lines = [`A first attempt at this summary was rejected: ${why[verdict.check]}.`];
  if (verdict.missing?.length) {
    lines.push(`The summary must contain each of these exactly as written: ${verdict.missing.join("; ")}.`);
  }
  return lines.join(" ");
}
