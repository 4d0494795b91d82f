/**
 * The model analyzer's one batched call per fold (docs/compaction.md, "Strength analyzer"): the
 * prompt that asks the summarizer model to rate numbered messages, and the strict reading of its
 * answer. An answer that is not exactly a list of ratings is rejected whole, so a refusal, an
 * error text or a chatty reply changes no tag. Pure, no I/O.
 */
import type { AnalyzedMessage } from "./strength-analyzer.js";
import type { Strength } from "./strength.js";

/** Each message is shown up to this many characters: a rating needs its gist, not all of it. */
export const RATED_MESSAGE_CHARS = 600;

/** Answer tokens per rated message ("#12 strong" and a newline, with room to spare). */
const ANSWER_TOKENS_PER_MESSAGE = 8;

export interface StrengthPrompt {
  system: string;
  user: string;
  /** How many of the given messages the prompt holds (the first ones; the rest did not fit). */
  messages: number;
  /** Output budget of the answer, in tokens. */
  maxOutputTokens: number;
}

// Literals joined by `+`, not `[...].join()`: a constant, so bundles that never prompt (the plain
// routes, which reach this module only through the side channel) leave it out.
const SYSTEM =
  "You rate chat messages for a memory service that later folds older messages into a summary.\n" +
  "Rate each numbered message:\n" +
  "- strong: a decision, a constraint or rule, a commitment, or a fact that names someone or something together with a number, amount or date; later turns will need it word for word.\n" +
  "- weak: an acknowledgement, thanks, small talk without content, or narration of what the speaker is about to do.\n" +
  "- normal: everything else.\n" +
  "Answer with one line per message and nothing else, in the form `#<number> <strong|normal|weak>`.";

/**
 * The prompt for `messages`, oldest first, holding as many as fit `maxInputChars` (each clipped to
 * {@link RATED_MESSAGE_CHARS}). Message text is data: it is fenced per message and the model is
 * told to answer ratings only.
 */
export function buildStrengthPrompt(messages: readonly AnalyzedMessage[], maxInputChars: number): StrengthPrompt {
  const lines: string[] = [];
  let used = 0;
  for (const [i, m] of messages.entries()) {
    const text = m.content.length > RATED_MESSAGE_CHARS ? `${m.content.slice(0, RATED_MESSAGE_CHARS)} …` : m.content;
    const block = `#${i + 1} ${m.role}: ${text.replace(/\s+/g, " ").trim()}`;
    if (lines.length > 0 && used + block.length > maxInputChars) break;
    lines.push(block);
    used += block.length + 1;
  }
  return {
    system: SYSTEM,
    user: `Messages (${lines.length}):\n${lines.join("\n")}\n\nRatings, one line per message:`,
    messages: lines.length,
    maxOutputTokens: 16 + ANSWER_TOKENS_PER_MESSAGE * lines.length,
  };
}

export type StrengthAnswer = { ok: true; ratings: Map<number, Strength> } | { ok: false; error: string };

/**
 * One rating line. It is matched with every blank run collapsed to one blank: that changes no
 * match (each blank of the pattern is a `*` run), and it keeps the pattern's neighbouring `\s*`
 * from trying every split of a long run (cubic in it, docs/reliability.md, "Linear time on any
 * input").
 */
const RATING_LINE = /^[-*\s]*#?\s*(\d+)\s*[:.)=-]?\s*\**\s*(strong|normal|weak)\s*\**\s*[.,]?$/i;

/**
 * Reads the model's ratings: message numbers (1-based) to strengths. Rejected whole when any
 * non-blank line is not a rating (code fences aside), a number is outside 1..`count` or rated
 * twice differently, or nothing was rated. Messages the answer leaves out stay unrated.
 *
 * @example parseStrengthAnswer("#1 strong\n#2 weak", 2) // { ok: true, ratings: Map { 1 => "strong", 2 => "weak" } }
 */
export function parseStrengthAnswer(text: string | null | undefined, count: number): StrengthAnswer {
  if (!text || text.trim() === "") return { ok: false, error: "empty answer" };
  const ratings = new Map<number, Strength>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || /^```\w*$/.test(line)) continue;
    const m = RATING_LINE.exec(line.replace(/\s+/g, " "));
    if (!m) return { ok: false, error: `not a rating: '${line.slice(0, 80)}'` };
    const n = Number(m[1]);
    const strength = m[2]!.toLowerCase() as Strength;
    if (n < 1 || n > count) return { ok: false, error: `rating for message #${n}, but only ${count} were sent` };
    if (ratings.has(n) && ratings.get(n) !== strength) return { ok: false, error: `message #${n} rated twice` };
    ratings.set(n, strength);
  }
  if (ratings.size === 0) return { ok: false, error: "no ratings in the answer" };
  return { ok: true, ratings };
}
