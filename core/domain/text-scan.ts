/**
 * Hand-written scanners for the text patterns that a backtracking regular expression cannot match
 * in linear time: code identifiers, URLs and trailing punctuation. Each finds exactly what the
 * regular expression named in its comment finds, in one pass over the text (docs/reliability.md,
 * "Linear time on any input"). Pure, no I/O.
 */

/** A match: where it starts in the text, and its text. */
export interface Span {
  index: number;
  text: string;
}

// Character classes of the ASCII patterns below (`\w` without the `u` flag is ASCII).
const isWord = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isAlnum = (c: number) => isWord(c) && c !== 95;
const isLower = (c: number) => c >= 97 && c <= 122;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isLetter = (c: number) => isLower(c) || isUpper(c);
/** `[\w./-]`: what an identifier is made of. */
const isIdentifierChar = (c: number) => isWord(c) || c === 45 || c === 46 || c === 47;
/** `[._/]`: what separates the parts of an identifier. */
const isSeparator = (c: number) => c === 95 || c === 46 || c === 47;

/**
 * Code-like identifiers (file.ts, snake_case, a/b paths, camelCase): the matches, left to right, of
 * `/\b[A-Za-z_][\w-]*[._/][\w./-]*[A-Za-z0-9]\b|\b[a-z]+[A-Z]\w*\b/g`. That expression rescans
 * a run of `[\w-]` from every word in it ("a-a-a-…" is quadratic); here each maximal run of
 * `[\w./-]` (every match lies inside one) is read once.
 *
 * @example identifiers("see core/app.ts and fooBar").map((s) => s.text) // ["core/app.ts", "fooBar"]
 */
export function identifiers(text: string): Span[] {
  const out: Span[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isIdentifierChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i;
    while (end < n && isIdentifierChar(text.charCodeAt(end))) end++;
    identifiersInRun(text, i, end, out);
    i = end;
  }
  return out;
}

function identifiersInRun(text: string, start: number, end: number, out: Span[]): void {
  const at = (k: number) => text.charCodeAt(k);
  // The first alternative ends, whatever its start, at the run's last letter or digit that ends a
  // word (`[A-Za-z0-9]\b`): `[\w./-]*` reaches the end of the run and backtracks to it.
  let last = -1;
  for (let e = end - 1; e >= start; e--) {
    if (isAlnum(at(e)) && (e + 1 >= text.length || !isWord(at(e + 1)))) {
      last = e;
      break;
    }
  }
  let separator = start; // the first `[._/]` at or after the position last asked for
  let s = start;
  while (s < end) {
    // Both alternatives start with `\b` and a word character: a word's first character.
    if (!isWord(at(s)) || (s > 0 && isWord(at(s - 1)))) {
      s++;
      continue;
    }
    // `[A-Za-z_][\w-]*[._/]…[A-Za-z0-9]\b`: a separator after the first character and before `last`.
    if ((isLetter(at(s)) || at(s) === 95) && last > s) {
      if (separator < s + 1) separator = s + 1;
      while (separator < end && !isSeparator(at(separator))) separator++;
      if (separator < last) {
        out.push({ index: s, text: text.slice(s, last + 1) });
        s = last + 1;
        continue;
      }
    }
    // `[a-z]+[A-Z]\w*\b`: lower-case letters, a capital, then the rest of the word.
    if (isLower(at(s))) {
      let p = s + 1;
      while (p < end && isLower(at(p))) p++;
      if (p < end && isUpper(at(p))) {
        let w = p + 1;
        while (w < end && isWord(at(w))) w++;
        out.push({ index: s, text: text.slice(s, w) });
        s = w;
        continue;
      }
    }
    s++;
  }
}

const SCHEME_CHAR = /[a-z0-9+.-]/i;
const URL_BODY_CHAR = /[^\s<>"'`)\]]/;

/**
 * URLs: the matches, left to right, of `/\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`)\]]+/gi`. That
 * expression scans the scheme characters from every word boundary ("a.a.a.…" without `://` is
 * quadratic); here each `://` is found once and its scheme read backwards.
 *
 * @example urls("docs at https://example.com/a.").map((s) => s.text) // ["https://example.com/a."]
 */
export function urls(text: string): Span[] {
  const out: Span[] = [];
  let from = 0;
  for (let colon = text.indexOf("://"); colon >= 0; colon = text.indexOf("://", Math.max(colon + 1, from))) {
    // The scheme: the run of scheme characters right before `://`, from its first letter that starts a word.
    let begin = colon;
    while (begin > from && SCHEME_CHAR.test(text[begin - 1]!)) begin--;
    let s = begin;
    while (s < colon && !(isLetter(text.charCodeAt(s)) && (s === 0 || !isWord(text.charCodeAt(s - 1))))) s++;
    if (s === colon) continue;
    let e = colon + 3;
    while (e < text.length && URL_BODY_CHAR.test(text[e]!)) e++;
    if (e === colon + 3) continue;
    out.push({ index: s, text: text.slice(s, e) });
    from = e;
  }
  return out;
}

/** `text` with each span (in order, not overlapping) replaced by `by`. */
export function replaceSpans(text: string, spans: readonly Span[], by: string): string {
  if (spans.length === 0) return text;
  const parts: string[] = [];
  let at = 0;
  for (const span of spans) {
    parts.push(text.slice(at, span.index), by);
    at = span.index + span.text.length;
  }
  parts.push(text.slice(at));
  return parts.join("");
}

/**
 * `text` without its trailing characters of the one-character class `chars`: what
 * `text.replace(/[…]+$/, "")` does, without trying the class from every position of a long run
 * that does not reach the end.
 */
export function trimEndOf(text: string, chars: RegExp): string {
  let end = text.length;
  while (end > 0 && chars.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}

/** `text` without its leading characters of the one-character class `chars`. */
export function trimStartOf(text: string, chars: RegExp): string {
  let start = 0;
  while (start < text.length && chars.test(text[start]!)) start++;
  return text.slice(start);
}
