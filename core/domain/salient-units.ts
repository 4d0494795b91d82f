/**
 * Salient units of chat text: names, numbers, amounts, dates, identifiers, file paths, URLs and
 * quoted strings. The offline summarizer scores sentences by them, and every fold reports which of
 * them its summary no longer carries (docs/summarizers.md, "What a fold lost"). Pure, no I/O.
 */
import { identifiers, replaceSpans, trimEndOf, trimStartOf, urls } from "./text-scan.js";

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
  return trimEndOf(token.replace(/[’']s$/i, ""), /[-'’]/);
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

/** Quoted phrases (with at least one space: single quoted words are names or identifiers). */
const QUOTE_RE = /"([^"\n]{3,80})"|“([^”\n]{3,80})”|`([^`\n]{3,80})`/g;
/** Worth more in a loss report: exact strings a model cannot reconstruct once they are gone. */
const KIND_WEIGHT: Record<UnitKind, number> = { url: 3, identifier: 3, quote: 3, number: 3, date: 3, name: 2 };

/** "8 May, 2023." -> "8 may 2023"; "$4,200" -> "$4200". */
export function unitKey(text: string): string {
  const spaced = text
    .toLowerCase()
    .replace(/(\d),(?=\d)/g, "$1")
    .replace(/,/g, " ")
    .replace(/\s+/g, " ");
  return trimEndOf(trimStartOf(spaced, /[\s"'“”`(]/), /[\s"'“”`).:;!?]/).trim();
}

/**
 * The salient units of `text`, each once: URLs, quoted phrases, identifiers and file paths,
 * dates with a digit in them, multi-digit numbers and amounts, and names (runs of capitalised
 * words judged proper nouns over the whole input, see {@link buildVocab}).
 */
export function salientUnits(text: string, vocab: Vocab): SalientUnit[] {
  const out = new Map<string, SalientUnit>();
  const add = (raw: string, kind: UnitKind) => {
    const textForm = trimEndOf(raw.trim(), /[.,;:!?]/);
    const key = unitKey(textForm);
    if (key.length >= 2 && !out.has(key)) out.set(key, { key, text: textForm, kind });
  };
  // Each kind is looked for where no earlier kind matched: URLs, then dates, are blanked out.
  const links = urls(text);
  for (const m of links) add(m.text, "url");
  let rest = replaceSpans(text, links, " ");
  for (const m of rest.matchAll(QUOTE_RE)) {
    const inner = m[1] ?? m[2] ?? m[3] ?? "";
    if (/\s/.test(inner.trim())) add(inner, "quote");
  }
  for (const m of identifiers(rest)) add(m.text, "identifier");
  const dates = [...rest.matchAll(DATE_RE)].map((m) => ({ index: m.index, text: m[0] }));
  for (const m of dates) {
    // Relative words ("today", "Friday") say nothing once the day they were said is gone.
    if (/\d/.test(m.text)) add(m.text, "date");
  }
  rest = replaceSpans(rest, dates, " ");
  for (const m of withoutIdentifiers(rest).matchAll(NUMBER_RE)) {
    if (/^\d$/.test(m[0])) continue;
    add(m[0], "number");
  }
  for (const run of nameRuns(text, vocab, true)) add(run, "name");
  return [...out.values()];
}

/** `text` with each identifier replaced by a blank, so the numbers inside them are not counted. */
export function withoutIdentifiers(text: string): string {
  return replaceSpans(text, identifiers(text), " ");
}

/** Text prepared for {@link carries}: the same normalisation as unit keys, whole text. */
export function carrierText(text: string): string {
  // Punctuation that ends a word (followed by a blank or the end) becomes a blank; a run of it
  // is replaced whole or kept whole, as `/[…]+(?=\s|$)/g` would, without rescanning the run.
  const words = text.replace(/[.,;:!?()"“”`]+/g, (run: string, at: number) => {
    const next = text[at + run.length];
    return next === undefined || /\s/.test(next) ? " " : run;
  });
  return ` ${unitKey(words)} `;
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

/**
 * The units (as written, e.g. a must-keep list) that `text` carries, in their order; the text is
 * prepared once for all of them.
 *
 * @example carriedUnits("Deploy to eu-west-1 on 3 May.", ["eu-west-1", "us-east-1"]) // ["eu-west-1"]
 */
export function carriedUnits(text: string, units: readonly string[]): string[] {
  if (units.length === 0) return [];
  const prepared = carrierText(text);
  return units.filter((u) => carries(prepared, { key: unitKey(u) }));
}

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
 * The budget of the loss report and of the units a summary must keep (docs/reliability.md,
 * "Linear time on any input"): each message is read through a window of at most this many
 * characters, its start and its end, so a fold's cost follows the number of its messages rather
 * than the size of one tool output, and the report stays the same on every run (a time budget
 * would not).
 */
export const UNIT_SCAN_CHARS = 32 * 1024;
/** Of the window, the characters from the end of a longer message (conclusions tend to sit there). */
const UNIT_SCAN_TAIL_CHARS = 8 * 1024;
/** At most this many distinct units per report: each is then looked for in the summary. */
export const MAX_REPORT_UNITS = 5_000;

/**
 * What the unit extraction reads of a message: all of it up to {@link UNIT_SCAN_CHARS}, else its
 * start and its end, each cut at a blank near the limit so no word is cut in two.
 */
export function unitWindow(text: string): string {
  if (text.length <= UNIT_SCAN_CHARS) return text;
  const headEnd = cutAtBlank(text, UNIT_SCAN_CHARS - UNIT_SCAN_TAIL_CHARS, -1);
  const tailStart = cutAtBlank(text, text.length - UNIT_SCAN_TAIL_CHARS, 1);
  return `${text.slice(0, headEnd)}\n\n${text.slice(tailStart)}`;
}

/** The blank within 100 characters of `at` in `direction`, or `at` itself when there is none. */
function cutAtBlank(text: string, at: number, direction: 1 | -1): number {
  for (let i = at, steps = 0; steps < 100 && i > 0 && i < text.length; i += direction, steps++) {
    if (/\s/.test(text[i]!)) return i;
  }
  return at;
}

/**
 * What `summary` no longer carries of the units of `sources`. Salience: the kind of unit (exact
 * strings over names), how many messages mention it, and whether a strong or pinned message did.
 * Each source is read through {@link unitWindow}; after {@link MAX_REPORT_UNITS} distinct units,
 * later sources only add their ids to the units already found.
 */
export function lossReport(sources: readonly UnitSource[], summary: string): LossReport {
  const windows = sources.map((s) => unitWindow(s.content));
  const vocab = buildVocab(windows);
  const found = new Map<string, { unit: SalientUnit; ids: string[]; important: boolean; order: number }>();
  sources.forEach((source, i) => {
    for (const unit of salientUnits(windows[i]!, vocab)) {
      const entry = found.get(unit.key);
      if (entry) {
        // Sources come one after another: the id, if there, is the last one added.
        if (entry.ids[entry.ids.length - 1] !== source.id) entry.ids.push(source.id);
        entry.important ||= source.important === true;
      } else if (found.size < MAX_REPORT_UNITS) {
        found.set(unit.key, { unit, ids: [source.id], important: source.important === true, order: found.size });
      }
    }
  });
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

/**
 * The units of the important sources, most mentioned first (what a summary is asked to keep),
 * within the same budget as {@link lossReport}.
 */
export function importantUnits(sources: readonly UnitSource[], limit: number): string[] {
  const windows = sources.map((s) => unitWindow(s.content));
  const vocab = buildVocab(windows);
  const counts = new Map<string, { text: string; n: number }>();
  sources.forEach((source, i) => {
    if (!source.important) return;
    for (const unit of salientUnits(windows[i]!, vocab)) {
      const entry = counts.get(unit.key);
      if (entry) entry.n++;
      else if (counts.size < MAX_REPORT_UNITS) counts.set(unit.key, { text: unit.text, n: 1 });
    }
  });
  return [...counts.values()].sort((a, b) => b.n - a.n).slice(0, limit).map((e) => e.text);
}
