/**
 * Full-text ranking of a process's history (audit and history search): a MiniSearch index (BM25+)
 * over message content with an English stemmer, stop words, prefix and fuzzy matching, and tag
 * filters. Pure: the service feeds it messages and decides what to cache.
 */
import MiniSearch, { type SearchOptions } from "minisearch";

/** What the index needs of a message; tags are kept for filtering, never ranked. */
export interface IndexableMessage {
  id: string;
  content: string;
  tags: readonly string[];
  toolCalls?: ReadonlyArray<{ name: string; arguments: string }> | undefined;
  /** An archived original's expiry (core/domain/retention.ts): from then on it is never a hit. */
  expiresAt?: string | undefined;
}

export interface SearchHit {
  id: string;
  score: number;
}

export interface HistoryQuery {
  q: string;
  /** Exact tag, or a prefix when it ends with `*` (`RECOMPACTION:*`). */
  tag?: string | undefined;
  limit: number;
}

/**
 * Words that carry no topic. Dropping them keeps BM25 from rewarding a message for sharing "the"
 * and "did" with a question (they are most of a question's words).
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being " +
    "below between both but by can could did do does doing down during each few for from further " +
    "had has have having he her here hers herself him himself his how i if in into is it its itself " +
    "just me more most my myself no nor not now of off on once only or other our ours ourselves out " +
    "over own same she should so some such than that the their theirs them themselves then there " +
    "these they this those through to too under until up very was we were what when where which " +
    "while who whom why will with would you your yours yourself yourselves " +
    // Pieces the tokenizer leaves from contractions ("I'm", "don't", "she'll").
    "s t m d ll re ve"
  ).split(" "),
);

// --- Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980) -------------------
// Written out here rather than pulled in as a dependency: it is ~100 lines and fixed since 1980.

const isConsonant = (w: string, i: number): boolean => {
  const ch = w[i];
  if (ch === "a" || ch === "e" || ch === "i" || ch === "o" || ch === "u") return false;
  if (ch === "y") return i === 0 ? true : !isConsonant(w, i - 1);
  return true;
};

/** m in [C](VC)^m[V] of the stem w[0..end). */
function measure(w: string, end: number): number {
  let m = 0;
  let i = 0;
  while (i < end && isConsonant(w, i)) i++;
  while (i < end) {
    while (i < end && !isConsonant(w, i)) i++;
    if (i >= end) break;
    while (i < end && isConsonant(w, i)) i++;
    m++;
  }
  return m;
}

const hasVowel = (w: string, end: number) => {
  for (let i = 0; i < end; i++) if (!isConsonant(w, i)) return true;
  return false;
};

const endsDoubleConsonant = (w: string, end: number) =>
  end >= 2 && w[end - 1] === w[end - 2] && isConsonant(w, end - 1);

/** *o: the stem ends consonant-vowel-consonant, the last not w, x or y (hop, not snow). */
const endsCvc = (w: string, end: number) =>
  end >= 3 &&
  isConsonant(w, end - 3) &&
  !isConsonant(w, end - 2) &&
  isConsonant(w, end - 1) &&
  !"wxy".includes(w[end - 1]!);

/** Replaces `suffix` by `by` when the remaining stem has measure > `minMeasure`. */
function replaceIf(w: string, rules: ReadonlyArray<readonly [string, string]>, minMeasure: number): string {
  for (const [suffix, by] of rules) {
    if (w.endsWith(suffix)) {
      const stem = w.length - suffix.length;
      return measure(w, stem) > minMeasure ? w.slice(0, stem) + by : w;
    }
  }
  return w;
}

const STEP2: ReadonlyArray<readonly [string, string]> = [
  ["ational", "ate"], ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["izer", "ize"],
  ["bli", "ble"], ["alli", "al"], ["entli", "ent"], ["eli", "e"], ["ousli", "ous"],
  ["ization", "ize"], ["ation", "ate"], ["ator", "ate"], ["alism", "al"], ["iveness", "ive"],
  ["fulness", "ful"], ["ousness", "ous"], ["aliti", "al"], ["iviti", "ive"], ["biliti", "ble"],
  ["logi", "log"],
];
const STEP3: ReadonlyArray<readonly [string, string]> = [
  ["icate", "ic"], ["ative", ""], ["alize", "al"], ["iciti", "ic"], ["ical", "ic"], ["ful", ""], ["ness", ""],
];
// Longest first, so "ement" is tried before "ment" and "ent".
const STEP4 = [
  "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
  "ism", "ate", "iti", "ous", "ive", "ize",
].sort((a, b) => b.length - a.length);

/**
 * The Porter stem of a lower-case word: "running" -> "run", "memories" -> "memori",
 * "compaction" -> "compact". Words of one or two letters, and words with digits, are unchanged.
 */
export function stem(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word;
  let w = word;

  // Step 1a: plurals.
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = w.slice(0, -2);
  else if (!w.endsWith("ss") && w.endsWith("s")) w = w.slice(0, -1);

  // Step 1b: -eed, -ed, -ing.
  if (w.endsWith("eed")) {
    if (measure(w, w.length - 3) > 0) w = w.slice(0, -1);
  } else {
    const suffix = w.endsWith("ed") ? 2 : w.endsWith("ing") ? 3 : 0;
    if (suffix && hasVowel(w, w.length - suffix)) {
      w = w.slice(0, -suffix);
      if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
      else if (endsDoubleConsonant(w, w.length) && !"lsz".includes(w[w.length - 1]!)) w = w.slice(0, -1);
      else if (measure(w, w.length) === 1 && endsCvc(w, w.length)) w += "e";
    }
  }

  // Step 1c: y -> i after a vowel-bearing stem.
  if (w.endsWith("y") && hasVowel(w, w.length - 1)) w = w.slice(0, -1) + "i";

  w = replaceIf(w, STEP2, 0);
  w = replaceIf(w, STEP3, 0);

  // Step 4: drop a suffix when the stem has measure > 1 (-ion only after s or t).
  for (const suffix of STEP4) {
    if (!w.endsWith(suffix)) continue;
    const end = w.length - suffix.length;
    if (measure(w, end) > 1 && (suffix !== "ion" || w[end - 1] === "s" || w[end - 1] === "t")) w = w.slice(0, end);
    break;
  }

  // Step 5: a final -e, and -ll.
  if (w.endsWith("e")) {
    const m = measure(w, w.length - 1);
    if (m > 1 || (m === 1 && !endsCvc(w, w.length - 1))) w = w.slice(0, -1);
  }
  if (w.endsWith("ll") && measure(w, w.length) > 1) w = w.slice(0, -1);
  return w;
}

/** Lower-case, drop stop words and one-letter pieces, stem the rest (index and query alike). */
export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.length < 2 && !/\d/.test(t)) return null;
  if (STOP_WORDS.has(t)) return null;
  return stem(t);
}

// Query-side matching. Prefix matching on the last query word lets a half-typed word match
// ("compac" -> "compaction"); fuzzy matching (edit distance ~1 per 5 letters) only for words of 5+
// letters, where a typo is likelier than a different word. MiniSearch scores both below an
// exact match (weights below), so they add recall without displacing exact hits.
const SEARCH_OPTIONS: SearchOptions = {
  combineWith: "OR",
  prefix: (term, i, terms) => i === terms.length - 1 && term.length >= 3,
  fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
  maxFuzzy: 2,
  weights: { fuzzy: 0.3, prefix: 0.4 },
};

/** Tool call names and arguments are searchable too, a little below the prose. */
const toolText = (m: IndexableMessage) => (m.toolCalls ?? []).map((c) => `${c.name} ${c.arguments}`).join("\n");

export interface HistoryIndex {
  /** Messages indexed so far. */
  readonly size: number;
  has(id: string): boolean;
  /** Adds messages not yet indexed (messages are immutable apart from their archive pointer and expiry). */
  add(messages: Iterable<IndexableMessage>): number;
  /** Drops messages that are gone (expired under a retention): their text leaves the index. */
  remove(ids: Iterable<string>): void;
  /** Best first; ties keep history order (older first). With `now`, a message expired by then is no hit. */
  search(query: HistoryQuery, now?: Date): SearchHit[];
}

/** Whether a message's tags pass the filter: an exact tag, or a prefix ending in `*`. */
export function matchesTag(tags: readonly string[], tag: string | undefined): boolean {
  if (tag === undefined) return true;
  if (tag.endsWith("*")) {
    const prefix = tag.slice(0, -1);
    return tags.some((t) => t.startsWith(prefix));
  }
  return tags.includes(tag);
}

/**
 * Builds an index over `messages`.
 *
 * @example
 * const index = createHistoryIndex(messages);
 * index.search({ q: "database migration", tag: "MODE:plan", limit: 10 }); // [{ id, score }]
 */
export function createHistoryIndex(messages: Iterable<IndexableMessage> = []): HistoryIndex {
  const tagsById = new Map<string, readonly string[]>();
  const expiresAt = new Map<string, number>();
  const order = new Map<string, number>();
  const mini = new MiniSearch<{ id: string; content: string; tools: string }>({
    fields: ["content", "tools"],
    processTerm,
    searchOptions: { ...SEARCH_OPTIONS, boost: { content: 1, tools: 0.5 } },
  });

  const index: HistoryIndex = {
    get size() {
      return tagsById.size;
    },
    has: (id) => tagsById.has(id),
    add(batch) {
      const docs: Array<{ id: string; content: string; tools: string }> = [];
      for (const m of batch) {
        if (tagsById.has(m.id)) continue;
        tagsById.set(m.id, [...m.tags]);
        order.set(m.id, order.size);
        if (m.expiresAt !== undefined) expiresAt.set(m.id, Date.parse(m.expiresAt));
        docs.push({ id: m.id, content: m.content, tools: toolText(m) });
      }
      mini.addAll(docs);
      return docs.length;
    },
    remove(ids) {
      for (const id of ids) {
        if (!tagsById.has(id)) continue;
        mini.discard(id);
        tagsById.delete(id);
        expiresAt.delete(id);
      }
    },
    search({ q, tag, limit }, now) {
      const at = now?.getTime();
      const kept = (id: string) => at === undefined || !((expiresAt.get(id) ?? Infinity) <= at);
      const filter =
        tag === undefined && expiresAt.size === 0 ? undefined : (r: { id: string }) => kept(r.id) && matchesTag(tagsById.get(r.id) ?? [], tag);
      const results = mini.search(q, filter ? { filter } : {});
      return results
        .map((r) => ({ id: r.id as string, score: r.score }))
        .sort((a, b) => b.score - a.score || order.get(a.id)! - order.get(b.id)!)
        .slice(0, limit);
    },
  };
  index.add(messages);
  return index;
}
