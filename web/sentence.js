// @ts-check
// The sentence of a message a dropped unit came from (docs/inspector.md, "What it shows"): the
// unit alone ("42", "Tuesday") says little; the sentence around it says what was lost.

/** The longest excerpt shown, in characters: a sentence past it is cut around the unit. */
export const SENTENCE_MAX = 240;

/**
 * The sentence of `text` that holds `unit` (case aside), trimmed, at most {@link SENTENCE_MAX}
 * characters (cut around the unit, marked with …); null when `unit` is not in `text`. Linear in
 * the text's length.
 * @param {string} text
 * @param {string} unit
 * @returns {string | null}
 */
export function sentenceAround(text, unit) {
  if (!unit) return null;
  let at = text.indexOf(unit);
  if (at < 0) at = text.toLowerCase().indexOf(unit.toLowerCase());
  if (at < 0) return null;
  const end = at + unit.length;
  // A sentence ends at . ! ? followed by a space, or at a line break.
  const before = text.slice(0, at);
  let from = 0;
  for (const end of before.matchAll(/[.!?](?=\s)|\n/g)) from = end.index + 1;
  const after = /[.!?](?=\s|$)|\n/.exec(text.slice(end));
  let to = after ? end + after.index + (after[0] === "\n" ? 0 : 1) : text.length;
  let cutStart = false;
  let cutEnd = false;
  if (to - from > SENTENCE_MAX) {
    // SENTENCE_MAX characters around the unit, kept inside the sentence.
    const room = Math.max(0, SENTENCE_MAX - unit.length);
    const left = Math.max(from, Math.min(at - Math.floor(room / 2), to - SENTENCE_MAX));
    const right = Math.min(to, left + Math.max(SENTENCE_MAX, unit.length));
    cutStart = left > from;
    cutEnd = right < to;
    from = left;
    to = right;
  }
  const body = text.slice(from, to).replace(/\s+/g, " ").trim();
  return `${cutStart ? "…" : ""}${body}${cutEnd ? "…" : ""}`;
}
