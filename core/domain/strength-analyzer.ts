/**
 * The strength analyzer (docs/compaction.md, "Strength analyzer"): it rates messages the caller
 * left without a `STRENGTH:` tag, so the selector sees a rating instead of its optimistic default.
 * The offline rules live here (pure, no I/O); the model analyzer's prompt and answer parsing are in
 * strength-analyzer-prompt.ts. A tag the analyzer writes carries a second tag naming the analyzer,
 * so the inspector can tell it from a caller's, a later PATCH replaces both, and the analyzer never
 * touches a tag the caller set.
 */
import type { Role } from "./model.js";
import { DATE_RE, NUMBER_RE, buildVocab, nameRuns, withoutIdentifiers } from "./salient-units.js";
import { identifiers } from "./text-scan.js";
import {
  ANALYZER_MARK_PREFIX,
  STRENGTH_TAG_PREFIX,
  isAnalyzerMark,
  isTrivial,
  strengthTag,
  strengthTagOf,
  type Strength,
} from "./strength.js";

export type AnalyzerName = "offline" | "model";

/** The mark the analyzer adds beside the strength tag it writes. */
export function analyzerMark(analyzer: AnalyzerName): string {
  return `${ANALYZER_MARK_PREFIX}${analyzer}-analyzer`;
}

/** Which analyzer wrote the message's strength tag, or null when the caller did (or nobody). */
export function analyzerOf(tags: readonly string[]): AnalyzerName | null {
  if (strengthTagOf(tags) === null) return null;
  if (tags.includes(analyzerMark("model"))) return "model";
  if (tags.includes(analyzerMark("offline"))) return "offline";
  return null;
}

/**
 * Whether `analyzer` may rate a message with these tags: one without any strength tag, and, for
 * the model analyzer, one the offline analyzer rated (its guess is the weaker one). A tag the
 * caller set, auto-pin included, is never the analyzer's to change.
 */
export function analyzable(tags: readonly string[], analyzer: AnalyzerName): boolean {
  const hasStrength = tags.some((t) => t.startsWith(STRENGTH_TAG_PREFIX));
  if (!hasStrength) return true;
  return analyzer === "model" && analyzerOf(tags) === "offline";
}

/**
 * `tags` with the analyzer's rating: any earlier rating of the analyzer and its mark replaced,
 * every other tag kept in order.
 *
 * @example analyzedTags(["MODE:plan"], "strong", "offline") // ["MODE:plan", "STRENGTH:strong", "STRENGTH_BY:offline-analyzer"]
 */
export function analyzedTags(tags: readonly string[], strength: Strength, analyzer: AnalyzerName): string[] {
  const rest = tags.filter((t) => !t.startsWith(STRENGTH_TAG_PREFIX) && !isAnalyzerMark(t));
  return [...rest, strengthTag(strength), analyzerMark(analyzer)];
}

/** What the analyzer reads of a message. */
export interface AnalyzedMessage {
  role: Role;
  content: string;
  toolCalls?: readonly unknown[] | undefined;
}

/**
 * Whether the analyzer rates this message at all. Tool results and tool calls are not rated: their
 * rating would always be normal, which is what the selector assumes for them without a tag.
 */
export function ratesMessage(message: AnalyzedMessage & { cleared?: unknown }): boolean {
  return message.role !== "TOOL" && !(message.toolCalls !== undefined && message.toolCalls.length > 0) && message.cleared === undefined;
}

/**
 * Longer messages are never rated strong: a strong message stays verbatim through every HARD
 * fold, so one long message rated strong would keep the prompt from shrinking. What such a
 * message decides is still carried by the summary.
 */
export const STRONG_MAX_CHARS = 1500;

// Decisions: something was settled.
const DECISION_RE =
  /\b(?:decision|decided|we agreed|agreed (?:on|to)|settled on|let'?s go with|we(?:'ll| will) go with|going forward|from now on|approved|final answer)\b/i;
// Constraints: rules the rest of the work must respect.
const CONSTRAINT_RE =
  /\b(?:must(?:n'?t| not)?|do not|don'?t ever|never (?:use|touch|change|delete|deploy|push|commit|send|share|store|log|run)|required|requirements?|deadline|no later than|at most|at least|no more than|budget|limit(?:ed)? to)\b/i;
// Commitments: a promise with a time or a number to hold it to.
const COMMITMENT_RE = /\b(?:i|we)(?:'ll| will| shall| promise to| am going to|'m going to| are going to|'re going to)\b|\bpromis(?:e|ed)\b|\bby (?:tomorrow|tonight|(?:next |this )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month)|end of)\b/i;

const has = (re: RegExp, text: string) => new RegExp(re.source, re.flags.replace("g", "")).test(text);

/** A date with a digit ("12 March 2025", "2024-05-01") or a multi-digit number or amount. */
function hasNumberOrDate(text: string): boolean {
  for (const m of text.matchAll(DATE_RE)) if (/\d/.test(m[0])) return true;
  for (const m of withoutIdentifiers(text).matchAll(NUMBER_RE)) if (!/^\d$/.test(m[0])) return true;
  return false;
}

/** A proper name or a code identifier (file, path, snake_case) in the message. */
function hasName(text: string): boolean {
  if (identifiers(text).length > 0) return true;
  return nameRuns(text, buildVocab([text])).length > 0;
}

/**
 * The offline rating (docs/compaction.md, "Strength analyzer"): decisions, constraints, commitments
 * with a date or number, and names with numbers or dates are strong; acknowledgements and
 * self-narration are weak; the rest, tool results and tool calls are normal.
 *
 * @example offlineStrength({ role: "ASSISTANT", content: "Decision: we ship v2 on 12 March." }) // "strong"
 * @example offlineStrength({ role: "USER", content: "ok thanks!" }) // "weak"
 */
export function offlineStrength(message: AnalyzedMessage): Strength {
  if (message.role === "TOOL") return "normal";
  if (isTrivial(message)) return "weak";
  if (message.toolCalls !== undefined && message.toolCalls.length > 0) return "normal";
  const text = message.content;
  if (text.trim().length === 0 || text.length > STRONG_MAX_CHARS) return "normal";
  if (has(DECISION_RE, text) || has(CONSTRAINT_RE, text)) return "strong";
  const numbered = hasNumberOrDate(text);
  if (numbered && has(COMMITMENT_RE, text)) return "strong";
  if (numbered && hasName(text)) return "strong";
  return "normal";
}

/**
 * The side channel: `tags` of a message being appended, with the offline rating added when the
 * message has no strength tag (auto-pin and the caller's own tag come first and stay).
 */
export function sideChannelTags(tags: string[], message: AnalyzedMessage): string[] {
  if (!ratesMessage(message) || !analyzable(tags, "offline")) return tags;
  return analyzedTags(tags, offlineStrength(message), "offline");
}
