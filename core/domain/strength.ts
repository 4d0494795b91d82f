/**
 * Strength tags (`STRENGTH:weak|normal|strong|pinned`) and the trivial-message patterns
 * (docs/compaction.md, "Trivial messages") that give untagged messages their optimistic default strength.
 */

export const STRENGTHS = ["weak", "normal", "strong", "pinned"] as const;
export type Strength = (typeof STRENGTHS)[number];

export const STRENGTH_TAG_PREFIX = "STRENGTH:";

/**
 * Prefix of the tag the strength analyzer adds beside a rating it wrote (`STRENGTH_BY:offline-analyzer`,
 * strength-analyzer.ts). Setting a strength by hand removes it with the old rating.
 */
export const ANALYZER_MARK_PREFIX = "STRENGTH_BY:";

/** True for the analyzer's mark tags, in any case (callers may not send them). */
export function isAnalyzerMark(tag: string): boolean {
  return tag.trim().toUpperCase().startsWith(ANALYZER_MARK_PREFIX);
}

const RANK: Record<Strength, number> = { weak: 0, normal: 1, strong: 2, pinned: 3 };

/** The canonical tag for a strength, e.g. `STRENGTH:pinned`. */
export function strengthTag(strength: Strength): string {
  return `${STRENGTH_TAG_PREFIX}${strength}`;
}

/**
 * Parses one tag as a caller wrote it. Case and surrounding blanks are tolerated
 * (`STRENGTH:PINNED`): the request boundary uses it to rewrite such a tag to its canonical form,
 * since silently ignoring a pin because of its spelling would let a compaction fold a message the
 * caller meant to protect.
 *
 * @example parseStrengthTag("STRENGTH:pinned") // "pinned"
 */
export function parseStrengthTag(tag: string): Strength | null {
  const t = tag.trim();
  if (t.slice(0, STRENGTH_TAG_PREFIX.length).toUpperCase() !== STRENGTH_TAG_PREFIX) return null;
  const value = t.slice(STRENGTH_TAG_PREFIX.length).trim().toLowerCase();
  return (STRENGTHS as readonly string[]).includes(value) ? (value as Strength) : null;
}

/** The strength of a stored tag: only the canonical spelling counts (the API stores no other). */
function storedStrength(tag: string): Strength | null {
  if (!tag.startsWith(STRENGTH_TAG_PREFIX)) return null;
  const value = tag.slice(STRENGTH_TAG_PREFIX.length);
  return (STRENGTHS as readonly string[]).includes(value) ? (value as Strength) : null;
}

/**
 * The explicit strength of a stored tag set, or null when it has none. Matches the canonical
 * `STRENGTH:<strength>` only: requests are normalised to it at the boundary (`Tag` in
 * fields.ts), so there is one spelling to match. With several strength tags the strongest
 * wins, so a stray `STRENGTH:weak` can never undo a pin.
 */
export function strengthTagOf(tags: readonly string[]): Strength | null {
  let best: Strength | null = null;
  for (const tag of tags) {
    const s = storedStrength(tag);
    if (s !== null && (best === null || RANK[s] > RANK[best])) best = s;
  }
  return best;
}

/** True when the tags carry a valid strength tag (the auto-pin "caller override wins" check). */
export function hasStrengthTag(tags: readonly string[]): boolean {
  return strengthTagOf(tags) !== null;
}

/**
 * `tags` with every strength tag (valid or not) replaced by the one for `strength`, or by none
 * when it is null; other tags keep their order. The analyzer's mark goes with the old rating: the
 * rating is now the caller's.
 *
 * @example withStrength(["MODE:plan", "STRENGTH:weak"], "pinned") // ["MODE:plan", "STRENGTH:pinned"]
 */
export function withStrength(tags: readonly string[], strength: Strength | null): string[] {
  const rest = tags.filter(
    (t) => t.trim().slice(0, STRENGTH_TAG_PREFIX.length).toUpperCase() !== STRENGTH_TAG_PREFIX && !isAnalyzerMark(t),
  );
  return strength === null ? rest : [...rest, strengthTag(strength)];
}

/** Tags that look like strength tags but name no strength (`STRENGTH:high`): reject at the boundary. */
export function malformedStrengthTags(tags: readonly string[]): string[] {
  return tags.filter(
    (tag) =>
      tag.trim().slice(0, STRENGTH_TAG_PREFIX.length).toUpperCase() === STRENGTH_TAG_PREFIX &&
      parseStrengthTag(tag) === null,
  );
}

// ---------------------------------------------------------------------------------------------
// Trivial patterns
// ---------------------------------------------------------------------------------------------

/**
 * A message longer than this (trimmed, in Unicode code points) is never trivial: the patterns are
 * meant for throwaway turns, and anything longer is likely to carry content worth summarizing.
 */
export const TRIVIAL_MAX_CHARS = 60;

/**
 * Acknowledgement phrases, matched as whole words on the normalized text (lowercase, punctuation
 * and emoji removed). A message is an ack when it is one or more of these, optionally joined by
 * {@link ACK_CONNECTORS}: "ok", "Thanks!", "ok, thanks 👍", "Got it, sounds good."
 */
export const ACK_PHRASES: readonly string[] = [
  "ok",
  "okay",
  "okey",
  "k",
  "kk",
  "alright",
  "all right",
  "thanks",
  "thank you",
  "thanks a lot",
  "thanks so much",
  "thank you so much",
  "thank you very much",
  "many thanks",
  "thx",
  "ty",
  "tysm",
  "cheers",
  "got it",
  "gotcha",
  "understood",
  "noted",
  "sounds good",
  "sounds great",
  "looks good",
  "great",
  "perfect",
  "cool",
  "nice",
  "awesome",
  "excellent",
  "sure",
  "yes",
  "yep",
  "yup",
  "yeah",
  "no problem",
  "np",
  "no worries",
  "will do",
  "makes sense",
];

/** Words allowed between ack phrases ("ok and thanks", "oh great", "thanks again"), never alone. */
const ACK_CONNECTORS: readonly string[] = ["and", "oh", "ah", "then", "again"];

/**
 * Words that may precede self-narration ("Hmm, let me think.", "Okay, one moment."), in addition
 * to any ack phrase.
 */
const SELF_NARRATION_FILLERS: readonly string[] = ["hmm", "hm", "well", "so", "right", "now"];

// Building blocks of the self-narration patterns. Objects are deliberately tiny (a pronoun, an
// adverb, or "the/your/my" plus at most two words), so "Let me check the logs" is narration while
// "Let me check the logs: the error is X at line 42" (normalized: "...logs the error is x...") is not.
const alternatives = (words: readonly string[]) => `(?:${words.join("|")})`;
const VERB = alternatives([
  "check", "double check", "look", "look into", "see", "think", "verify", "investigate", "dig in",
  "dig into", "take a look", "have a look", "find out", "review", "search", "confirm",
]);
const VERBING = alternatives([
  "checking", "double checking", "looking", "looking into", "thinking", "investigating",
  "digging in", "digging into", "verifying", "reviewing", "searching", "working on",
]);
const OBJECT = ` ${alternatives([
  "it", "that", "this", "them", "those", "these", "now", "again", "first", "quickly", "real quick",
  "for you", "into (?:it|that|this)", "on (?:it|that|this)", "at (?:it|that|this)",
  "(?:the|your|my) [^ ]+(?: [^ ]+)?",
])}`;
const WAIT_UNIT = "(?:moment|sec|second|minute|min|bit)";

/**
 * Self-narration, each matched against the WHOLE normalized message (after leading fillers and
 * acks are stripped): a message with real content after the opening words never matches.
 */
const SELF_NARRATION_PATTERNS: readonly RegExp[] = [
  // "Let me check.", "Let me take a look", "Let's see", "Let me look into that now"
  new RegExp(`^(?:let me|let's|lets) ${VERB}(?:${OBJECT}){0,2}$`, "u"),
  // "I'll look into it.", "I will check", "I'm going to take a look", "I'll get right on it"
  new RegExp(
    `^(?:i'll|i will|i'm going to|im going to|i am going to|going to|gonna) (?:${VERB}|get (?:on|right on) (?:it|that|this)|get back to you)(?:${OBJECT}){0,2}$`,
    "u",
  ),
  // "I'm on it", "I'm checking now", "I am looking into it"
  new RegExp(`^(?:i'm|im|i am) (?:${VERBING}|on (?:it|that|this))(?:${OBJECT}){0,2}$`, "u"),
  // "Working on it...", "Checking now.", "On it!", "Looking into it"
  new RegExp(`^(?:${VERBING}|on (?:it|that|this))(?:${OBJECT}){0,2}$`, "u"),
  // "One moment.", "Just a sec", "Give me a minute", "Bear with me", "Hold on", "Hang tight"
  new RegExp(
    `^(?:please )?(?:(?:just )?(?:one|a) ${WAIT_UNIT}|give me (?:a|one) ${WAIT_UNIT}|bear with me(?: (?:a|one) ${WAIT_UNIT})?|hold on|hang on|hang tight)(?: please)?$`,
    "u",
  ),
];

const EMOJI = /[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\u200D\uFE0F\u20E3]/gu;

/** Lowercase words only: emoji, punctuation and symbols become blanks; apostrophes are unified. */
function normalize(content: string): string {
  return content
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\u2018\u2019\u02BC`\u00B4]/g, "'")
    .replace(EMOJI, " ")
    .replace(/[^\p{L}\p{N}'\s]/gu, " ")
    .replace(/(^|\s)'+|'+(?=\s|$)/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
}

function isShort(trimmed: string): boolean {
  return [...trimmed].length <= TRIVIAL_MAX_CHARS;
}

const ACK_WORDS = [...ACK_PHRASES]
  .map((p) => p.split(" "))
  .sort((a, b) => b.length - a.length); // longest first: "thank you so much" before "thank you"

function ackPhraseAt(words: readonly string[], i: number): number {
  for (const phrase of ACK_WORDS) {
    if (phrase.every((w, k) => words[i + k] === w)) return phrase.length;
  }
  return 0;
}

/**
 * How many leading words are ack phrases, connectors or `extra` fillers (`end`), and how many real
 * ack phrases were among them (`phrases`).
 */
function ackPrefix(words: readonly string[], extra: readonly string[] = []): { end: number; phrases: number } {
  let end = 0;
  let phrases = 0;
  while (end < words.length) {
    const n = ackPhraseAt(words, end);
    if (n > 0) {
      end += n;
      phrases += 1;
    } else if (ACK_CONNECTORS.includes(words[end]!) || extra.includes(words[end]!)) end += 1;
    else break;
  }
  return { end, phrases };
}

/**
 * A short acknowledgement: one or more {@link ACK_PHRASES} (with {@link ACK_CONNECTORS}),
 * punctuation, emoji and case ignored, or a reaction made only of emoji ("👍", "🙏🎉").
 *
 * @example isAck("Ok, thanks!") // true
 * @example isAck("ok, but the build still fails") // false
 */
export function isAck(content: string): boolean {
  const trimmed = content.trim();
  if (trimmed === "" || !isShort(trimmed)) return false;
  const normalized = normalize(trimmed);
  if (normalized === "") return /\p{Extended_Pictographic}/u.test(trimmed);
  const words = normalized.split(" ");
  const { end, phrases } = ackPrefix(words);
  // Every word must be an ack phrase or a connector, and connectors alone ("and") are no ack.
  return phrases > 0 && end === words.length;
}

/**
 * Short self-narration that announces work without carrying any ("Let me check.", "I'll look into
 * it.", "One moment.", "Working on it..."), optionally after a filler or ack ("Okay, let me see").
 *
 * @example isSelfNarration("Let me take a look") // true
 * @example isSelfNarration("Let me check the logs: the error is X at line 42") // false
 */
export function isSelfNarration(content: string): boolean {
  const trimmed = content.trim();
  if (trimmed === "" || !isShort(trimmed)) return false;
  const words = normalize(trimmed).split(" ");
  const { end } = ackPrefix(words, SELF_NARRATION_FILLERS);
  const rest = words.slice(end).join(" ");
  return rest !== "" && SELF_NARRATION_PATTERNS.some((p) => p.test(rest));
}

/** What strength resolution needs of a message. */
export interface StrengthSubject {
  tags: readonly string[];
  content: string;
  toolCalls?: readonly unknown[] | undefined;
}

/**
 * Trivial (docs/compaction.md, "Trivial messages"): the content is an ack or self-narration. A message that carries tool
 * calls is never trivial: the calls are its substance, whatever its prose says ("Let me check.").
 */
export function isTrivial(message: Omit<StrengthSubject, "tags">): boolean {
  if (message.toolCalls !== undefined && message.toolCalls.length > 0) return false;
  return isAck(message.content) || isSelfNarration(message.content);
}

/** Explicit tag wins; else trivial -> weak; else normal. */
export function effectiveStrength(message: StrengthSubject): Strength {
  return strengthTagOf(message.tags) ?? (isTrivial(message) ? "weak" : "normal");
}
