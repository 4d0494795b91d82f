/**
 * Output budgets of summaries: how much text fits a token budget, and cutting text to it at a
 * clean boundary. Tokens are the service's chars/4 estimate (tokens.ts), so a summary's budget
 * and its cost in later prompts are measured in the same unit.
 */
import { CHARS_PER_TOKEN } from "./tokens.js";

/** Characters that fit in `maxTokens` under the chars/4 estimate. */
export function charsForTokens(maxTokens: number): number {
  return Math.max(0, Math.floor(maxTokens) * CHARS_PER_TOKEN);
}

/**
 * Cuts `text` so that it fits `maxTokens`, preferring to end at a line break, then at a sentence
 * end, then at a word boundary (marked with an ellipsis). Text that already fits is returned
 * unchanged (trimmed). A cut never ends mid-word, so a stored summary reads as whole statements.
 *
 * @example truncateToTokenBudget("One. Two. Three.", 2) // "One."
 */
export function truncateToTokenBudget(text: string, maxTokens: number): string {
  const trimmed = text.trim();
  const limit = charsForTokens(maxTokens);
  if (trimmed.length <= limit) return trimmed;
  if (limit === 0) return "";

  const window = trimmed.slice(0, limit);
  // A boundary too early in the window would throw away most of the budget; accept line and
  // sentence ends only in its second half, and fall back to a word cut otherwise.
  const minKeep = Math.floor(limit / 2);

  const lineEnd = window.lastIndexOf("\n");
  if (lineEnd >= minKeep) return window.slice(0, lineEnd).trimEnd();

  const sentenceEnd = lastSentenceEnd(trimmed, limit);
  if (sentenceEnd >= minKeep) return window.slice(0, sentenceEnd).trimEnd();

  // Reserve one char for the ellipsis so the result still fits.
  const wordWindow = trimmed.slice(0, limit - 1);
  const space = wordWindow.search(/\s\S*$/);
  const cut = space > 0 ? wordWindow.slice(0, space) : wordWindow;
  return `${cut.trimEnd()}…`;
}

/**
 * Index just past the last sentence terminator within the first `limit` chars of `text`. The char
 * after the terminator is read from the full text, so "3." of "3.5" is not taken for an end.
 */
function lastSentenceEnd(text: string, limit: number): number {
  const scan = text.slice(0, limit + 1);
  let best = -1;
  const re = /[.!?…]["'”’)\]]?(?=\s|$)/g;
  for (let m = re.exec(scan); m !== null; m = re.exec(scan)) {
    const end = m.index + m[0].length;
    if (end <= limit) best = end;
  }
  return best;
}
