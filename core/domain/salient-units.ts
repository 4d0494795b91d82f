/**
 * Salient units of chat text: names, numbers, amounts, dates, identifiers, file paths, URLs and
 * quoted strings. The offline summarizer scores sentences by them, and every fold reports which of
 * them its summary no longer carries (docs/compaction.md, "What a fold lost"). Pure, no I/O.
 */

/**
 * What the whole input says about capitalisation: a word seen capitalised mid-sentence is a name
 * ("Caroline"), a word also seen in lower case is an ordinary word that merely opened a sentence
 * ("Painting").
 */
export interface Vocab {
  capitalisedMidSentence: Set<string>;
  lowerCase: Set<string>;
}

export const MONTHS =
  "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec";
export const WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday";
export const DATE_RE = new RegExp(
  [
    "\\b\\d{4}-\\d{2}-\\d{2}\\b",
    `\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?(?:${MONTHS})\\b\\.?(?:,?\\s+\\d{4})?`,
    `\\b(?:${MONTHS})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?\\b(?:,?\\s+\\d{4})?`,
    `\\b(?:${MONTHS})\\s+\\d{4}\\b`,
    `\\b(?:last|next|this)\\s+(?:week|weekend|month|year|summer|winter|spring|fall|autumn|${WEEKDAYS})\\b`,
    `\\b(?:${WEEKDAYS})\\b`,
    "\\b(?:yesterday|today|tomorrow|tonight)\\b",
    "\\b\\d{1,2}(?::\\d{2})?\\s?(?:am|pm)\\b",
    "\\b(?:19|20)\\d{2}\\b",
  ].join("|"),
  "gi",
);
export const NUMBER_RE = /[$€£]?\b\d+(?:[.,:/]\d+)*(?:\s?(?:%|k|m|bn|ms|s|gb|mb|kb|usd|eur))?\b/gi;
/** Code-like identifiers (file.ts, snake_case, a/b paths, camelCase): names in technical chats. */
export const IDENT_RE = /\b[A-Za-z_][\w-]*[._/][\w./-]*[A-Za-z0-9]\b|\b[a-z]+[A-Z]\w*\b/g;
/** Words of a sentence, in order, for spotting capitalised names. */
export const TOKEN_RE = /[\p{L}][\p{L}'’+-]*|\d[\w.,:/-]*|[^\s\p{L}\d]+/gu;

/** Capitalised words that are usually sentence openers or pronouns, not names. */
export const NOT_NAMES = new Set(
  (
    "i i'm i've i'll i'd im ive the a an and but or so yes no yeah yep hey hi hello wow oh ah okay ok well " +
    "that that's thats this these those there there's it it's its my me we we're we've you you're you've your " +
    "he she they they're their his her our what what's when where why how who which thanks thank great cool " +
    "awesome nice sure also just let let's if in on at for to of with as not do does did can could would should " +
    "will have has had is are was were be been all any some one sounds love good glad haha lol definitely " +
    "totally really absolutely congrats congratulations btw plus anyway now then here maybe probably actually " +
    "even still sorry please hope take keep from after before by since until while though although because " +
    "yours mine he's she's i'd don't didn't can't isn't aren't wasn't won't it'd it'll that'll who's " +
    "same exactly true right wait look see check mine omg aww ooh hmm whoa yay anyways agreed done"
  ).split(" "),
);

const MONTH_OR_DAY = new Set([...MONTHS.split("|"), ...WEEKDAYS.split("|")]);

/** Names in `text`: runs of capitalised words judged proper nouns, each word and the whole run. */
export function namesOf(text: string, vocab: Vocab): string[] {
  return nameRuns(text, vocab).flatMap((run) => {
    const words = run.split(" ");
    return words.length > 1 ? [...words.map(norm), norm(run)] : [norm(run)];
  });
}

/**
 * Runs of capitalised words judged proper nouns, as written ("Caroline", "Golden Gate Bridge").
 * `strict`: a sentence opener counts only when the input also capitalises it mid-sentence, so
 * labels such as "Decision:" or "Step 3:" are not taken for names.
 */
export function nameRuns(text: string, vocab: Vocab, strict = false): string[] {
  const runs: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length > 0) runs.push(run.join(" "));
    run = [];
  };
  let initial = true;
  for (const m of text.matchAll(TOKEN_RE)) {
    const token = m[0];
    if (!/^\p{L}/u.test(token)) {
      flush();
      if (/[.!?:"“]/.test(token)) initial = true;
      continue;
    }
    const word = cleanWord(token);
    const name = isName(word, initial, vocab) && (!strict || !initial || vocab.capitalisedMidSentence.has(word.toLowerCase()) || /^[A-Z]{2,}/.test(word));
    if (name) run.push(word);
    else flush();
    initial = false;
  }
  flush();
  return runs;
}

function isName(word: string, initial: boolean, vocab: Vocab): boolean {
  const lower = word.toLowerCase();
  if (NOT_NAMES.has(lower) || MONTH_OR_DAY.has(lower) || word.length < 2) return false;
  if (/^[A-Z]{2,}\+?$/.test(word)) return true; // acronyms: LGBTQ, AWS, PDF
  if (!/^\p{Lu}/u.test(word)) return false;
  if (!initial) return true;
  // A sentence opener is a name only if the input also uses it as one, or never as a plain word.
  if (vocab.capitalisedMidSentence.has(lower)) return true;
  return !vocab.lowerCase.has(lower) && !/(?:ing|ed|ly|s)$/.test(lower);
}

export function buildVocab(texts: string[]): Vocab {
  const vocab: Vocab = { capitalisedMidSentence: new Set(), lowerCase: new Set() };
  for (const text of texts) {
    for (const line of text.split("\n")) {
      let initial = true;
      for (const m of line.matchAll(TOKEN_RE)) {
        const token = m[0];
        if (!/^\p{L}/u.test(token)) {
          if (/[.!?:"“]/.test(token)) initial = true;
          continue;
        }
        const word = cleanWord(token);
        const lower = word.toLowerCase();
        if (word === lower) vocab.lowerCase.add(lower);
        else if (!initial && /^\p{Lu}/u.test(word) && !/^[A-Z]{2,}/.test(word)) {
          vocab.capitalisedMidSentence.add(lower);
        }
        initial = false;
      }
    }
  }
  return vocab;
}

/** "Caroline's" -> "Caroline", "LGBTQ+" -> "LGBTQ+", trailing hyphens and quotes dropped. */
export function cleanWord(token: string): string {
  return token.replace(/[’']s$/i, "").replace(/[-'’]+$/, "");
}


export function norm(text: string): string {
  return text.toLowerCase().replace(/[.,]$/, "").replace(/\s+/g, " ").trim();
}

// ---------------------------------------------------------------------------------------------
// Units for the loss report and the quality gate.

export type UnitKind = "date" | "number" | "name" | "identifier" | "url" | "quote";

export interface SalientUnit {
  /** Normalised form used to compare: lower case, commas and outer punctuation dropped. */
  key: string;
  /** As first written. */
  text: string;
  kind: UnitKind;
}

const URL_RE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`)\]]+/gi;
/** Quoted phrases (with at least one space: single quoted words are names or identifiers). */
const QUOTE_RE = /"([^"\n]{3,80})"|“([^”\n]{3,80})”|`([^`\n]{3,80})`/g;
/** Worth more in a loss report: exact strings a model cannot reconstruct once they are gone. */
const KIND_WEIGHT: Record<UnitKind, number> = { url: 3, identifier: 3, quote: 3, number: 3, date: 3, name: 2 };

/** "8 May, 2023." -> "8 may 2023"; "$4,200" -> "$4200". */
export function unitKey(text: string): string {
  return text
    .toLowerCase()
    .replace(/(\d),(?=\d)/g, "$1")
    .replace(/,/g, " ")
    .replace(/\s+/g, " ")
    .replace(/^[\s"'“”`(]+|[\s"'“”`).:;!?]+$/g, "")
    .trim();
}

/**
 * The salient units of `text`, each once: URLs, quoted phrases, identifiers and file paths,
 * dates with a digit in them, multi-digit numbers and amounts, and names (runs of capitalised
 * words judged proper nouns over the whole input, see {@link buildVocab}).
 */
export function salientUnits(text: string, vocab: Vocab): SalientUnit[] {
  const out = new Map<string, SalientUnit>();
  const add = (raw: string, kind: UnitKind) => {
    const textForm = raw.trim().replace(/[.,;:!?]+$/, "");
    const key = unitKey(textForm);
    if (key.length >= 2 && !out.has(key)) out.set(key, { key, text: textForm, kind });
  };
  let rest = text;
  for (const m of text.matchAll(URL_RE)) {
    add(m[0], "url");
    rest = rest.replace(m[0], " ");
  }
  for (const m of rest.matchAll(QUOTE_RE)) {
    const inner = m[1] ?? m[2] ?? m[3] ?? "";
    if (/\s/.test(inner.trim())) add(inner, "quote");
  }
  for (const m of rest.matchAll(IDENT_RE)) add(m[0], "identifier");
  for (const m of rest.matchAll(DATE_RE)) {
    // Relative words ("today", "Friday") say nothing once the day they were said is gone.
    if (/\d/.test(m[0])) add(m[0], "date");
    rest = rest.replace(m[0], " ");
  }
  for (const m of rest.replace(IDENT_RE, " ").matchAll(NUMBER_RE)) {
    if (/^\d$/.test(m[0])) continue;
    add(m[0], "number");
  }
  for (const run of nameRuns(text, vocab, true)) add(run, "name");
  return [...out.values()];
}

/** Text prepared for {@link carries}: the same normalisation as unit keys, whole text. */
export function carrierText(text: string): string {
  return ` ${unitKey(text.replace(/[.,;:!?()"“”`]+(?=\s|$)/g, " "))} `;
}

/** Whether a prepared text ({@link carrierText}) holds the unit, not inside a longer word or number. */
export function carries(prepared: string, unit: Pick<SalientUnit, "key">): boolean {
  for (let i = prepared.indexOf(unit.key); i >= 0; i = prepared.indexOf(unit.key, i + 1)) {
    const before = prepared[i - 1];
    const after = prepared[i + unit.key.length];
    if (!isWordChar(before) && !isWordChar(after)) return true;
  }
  return false;
}

const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);

export interface UnitSource {
  id: string;
  content: string;
  /** Units of strong and pinned sources rank first and are the ones the quality gate requires. */
  important?: boolean;
}

export interface LossUnit {
  text: string;
  messageIds: string[];
}

export interface LossReport {
  units: number;
  kept: number;
  /** Every dropped unit, most salient first. */
  dropped: LossUnit[];
  /** Units of important sources that the summary does not carry (the quality gate's check). */
  missingImportant: LossUnit[];
}

/**
 * What `summary` no longer carries of the units of `sources`. Salience: the kind of unit (exact
 * strings over names), how many messages mention it, and whether a strong or pinned message did.
 */
export function lossReport(sources: readonly UnitSource[], summary: string): LossReport {
  const vocab = buildVocab(sources.map((s) => s.content));
  const found = new Map<string, { unit: SalientUnit; ids: string[]; important: boolean; order: number }>();
  for (const source of sources) {
    for (const unit of salientUnits(source.content, vocab)) {
      const entry = found.get(unit.key);
      if (entry) {
        if (!entry.ids.includes(source.id)) entry.ids.push(source.id);
        entry.important ||= source.important === true;
      } else {
        found.set(unit.key, { unit, ids: [source.id], important: source.important === true, order: found.size });
      }
    }
  }
  const prepared = carrierText(summary);
  const lost = [...found.values()].filter((e) => !carries(prepared, e.unit));
  const salience = (e: (typeof lost)[number]) =>
    KIND_WEIGHT[e.unit.kind] + Math.min(e.ids.length, 5) + (e.important ? 10 : 0);
  lost.sort((a, b) => salience(b) - salience(a) || a.order - b.order);
  const asLoss = (e: (typeof lost)[number]): LossUnit => ({ text: e.unit.text, messageIds: e.ids });
  return {
    units: found.size,
    kept: found.size - lost.length,
    dropped: lost.map(asLoss),
    missingImportant: lost.filter((e) => e.important).map(asLoss),
  };
}

/** The units of the important sources, most mentioned first (what a summary is asked to keep). */
export function importantUnits(sources: readonly UnitSource[], limit: number): string[] {
  const vocab = buildVocab(sources.map((s) => s.content));
  const counts = new Map<string, { text: string; n: number }>();
  for (const source of sources) {
    if (!source.important) continue;
    for (const unit of salientUnits(source.content, vocab)) {
      const entry = counts.get(unit.key);
      if (entry) entry.n++;
      else counts.set(unit.key, { text: unit.text, n: 1 });
    }
  }
  return [...counts.values()].sort((a, b) => b.n - a.n).slice(0, limit).map((e) => e.text);
}
