/**
 * The offline summarizer: deterministic, no network, the default on a fresh machine. It picks the
 * sentences that carry the most names, numbers, dates, decisions and open tasks (a budgeted
 * maximum-coverage greedy), keeps who said each one and on which day, and folds the prior summary
 * in. The algorithm and its measured retention are in docs/summarizers.md.
 */
import { charsForTokens, truncateToTokenBudget } from "../../domain/budget.js";
import { estimateTokens } from "../../domain/tokens.js";
import {
  buildVocab,
  DATE_RE,
  IDENT_RE,
  carrierText,
  carries,
  namesOf,
  norm,
  NOT_NAMES,
  NUMBER_RE,
  unitKey,
  type Vocab,
} from "../../domain/salient-units.js";
import { DEFAULT_SUMMARY_MAX_TOKENS } from "../../domain/summary-prompt.js";
import type {
  SummarizeInput,
  SummarizeOutcome,
  Summarizer,
  SummarySourceMessage,
} from "../../ports/summarizer.js";

export const OFFLINE_SUMMARIZER_MODEL = "offline-extractive-v1";
/** Nominal window: the offline summarizer has no model limit, but the service caps its input by it. */
export const OFFLINE_CONTEXT_WINDOW = 200_000;

export interface OfflineSummarizerOptions {
  /** Output budget of one summary, in tokens (chars/4). Default 400. */
  maxOutputTokens?: number;
  contextWindow?: number;
}

/**
 * @example
 * const summarizer = createOfflineSummarizer({ maxOutputTokens: 400 });
 * const outcome = await summarizer.summarize({ priorSummary: null, messages });
 */
export function createOfflineSummarizer(options: OfflineSummarizerOptions = {}): Summarizer {
  const maxOutputTokens = options.maxOutputTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  return {
    provider: "offline",
    model: OFFLINE_SUMMARIZER_MODEL,
    contextWindow: options.contextWindow ?? OFFLINE_CONTEXT_WINDOW,
    maxOutputTokens,
    async summarize(input: SummarizeInput): Promise<SummarizeOutcome> {
      if (input.messages.length === 0 && !input.priorSummary?.trim()) {
        return { ok: false, error: "nothing to summarize: no messages and no prior summary" };
      }
      try {
        const { text, citations } = extractiveSummaryWithSources(input, input.maxSummaryTokens ?? maxOutputTokens);
        // Lines carried over from the prior summary cite nothing here (the service inherits theirs).
        return { ok: true, summary: text, ...(citations.some((c) => c.length > 0) ? { citations } : {}) };
      } catch (err) {
        // Pure code should not throw; if it does, the caller must record a failure, not crash.
        return { ok: false, error: `offline summarizer failed: ${(err as Error).message}` };
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Units: the sentences (or tool calls, or prior-summary lines) the summary is assembled from.

interface Unit {
  /** Order of appearance: prior lines first, then messages, then sentences within a message. */
  order: number;
  /** "User", "Assistant", ... or "" for prior-summary lines of unknown speaker. */
  label: string;
  /** UTC day (YYYY-MM-DD) shown as a heading, or "" when unknown. */
  day: string;
  text: string;
  marker: "" | "decision" | "to do";
  /** Coverage keys with their weight: each key counts once across the whole summary. */
  keys: Map<string, number>;
  /** Gain that does not depend on coverage (cues, recency, topic words). */
  bonus: number;
  prior: boolean;
  /** Id of the message the unit came from (prior-summary lines have none). */
  source?: string;
}

interface Ctx {
  /** Words of the topic label and instructions: units that mention them are preferred. */
  focus: Set<string>;
  vocab: Vocab;
  /** Keys of units the summary must carry ({@link SummarizeInput.mustKeep}). */
  mustKeep: string[];
}

const WEIGHT = { day: 4, date: 3, number: 2.5, entity: 2, term: 0.5, focus: 3, mustKeep: 20 } as const;

/** Least a unit must add (besides its day heading): one name, number or date, or three new words. */
const MIN_GAIN = 1.25;
/** Share of the budget reserved for what the prior summary carried, so old facts fade slowly. */
const PRIOR_SHARE = 0.3;
/** Longest sentence kept whole; longer ones are cut at a clause boundary. */
const MAX_UNIT_CHARS = 220;
/** Added to a unit's cost when it opens a new day heading ("2023-05-08\n"). */
const DAY_HEADING_CHARS = 11;

const WORD_RE = /\b[a-z][a-z'’-]{4,}\b/g;

const DECISION_RE =
  /\b(?:decided|decide to|agreed|agree to|we(?:'ll| will) go with|let's go with|let's use|going with|chose|chosen|settled on|approved|confirmed|final answer|the plan is)\b/i;
const TASK_RE =
  /\b(?:todo|to-do|need to|needs to|have to|has to|must|remember to|remind|follow up|next step|deadline|due|by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next week|the end of)|i(?:'ll| will)|we(?:'ll| will)|going to|plan(?:ning)? to|can you|could you|please)\b/i;

const STOP_TERMS = new Set(
  (
    "about above after again against being below between both could doing during every other their theirs " +
    "there these those through under until where which while would should really thing things think thinking " +
    "something anything everything nothing going always never little pretty maybe great thanks thank " +
    "sounds amazing awesome totally actually definitely people lately today whole still yeah right " +
    "wanted wants doesn't didn't haven't wasn't can't won't isn't aren't that's there's what's you're they're " +
    "we're i've you've it's let's glad happy cool super nice lovely feels feeling looks looking makes making " +
    "getting gotten loved loves kinda sorta stuff"
  ).split(" "),
);

/**
 * The summary text for `input`, at most `maxTokens` (chars/4). Deterministic: the same input
 * always gives the same text.
 */
export function extractiveSummary(input: SummarizeInput, maxTokens: number): string {
  return extractiveSummaryWithSources(input, maxTokens).text;
}

/**
 * {@link extractiveSummary} with, per line of the text, the ids of the messages the line came
 * from (empty for the header, day headings and lines carried over from the prior summary).
 */
export function extractiveSummaryWithSources(
  input: SummarizeInput,
  maxTokens: number,
): { text: string; citations: string[][] } {
  const budget = charsForTokens(maxTokens);
  const ctx: Ctx = {
    focus: focusTerms(`${input.topicLabel ?? ""} ${input.instructions ?? ""}`),
    vocab: buildVocab([input.priorSummary ?? "", ...input.messages.map((m) => m.content)]),
    mustKeep: (input.mustKeep ?? []).map(unitKey).filter(Boolean),
  };

  const priorParsed = parsePrior(input.priorSummary, ctx);
  const units: Unit[] = [...priorParsed.units];
  const n = input.messages.length;
  input.messages.forEach((message, i) => {
    units.push(...messageUnits(message, i, n, units.length, ctx));
  });

  const days = [
    ...(priorParsed.firstDay ? [priorParsed.firstDay] : []),
    ...input.messages.map((m) => dayOf(m.createdAt)).filter(Boolean),
  ].sort();
  const header = headerLine(
    priorParsed.count + n,
    days[0] ?? "",
    days[days.length - 1] ?? "",
    input.topicLabel,
  );

  const selected = select(units, budget - header.length - 1);
  let rendered = render(header, selected);
  // The cost model is an estimate (shared headings); drop the weakest picks until it truly fits.
  while (estimateTokens(rendered.text) > maxTokens && selected.length > 0) {
    selected.splice(weakestIndex(selected), 1);
    rendered = render(header, selected);
  }
  const text = truncateToTokenBudget(rendered.text, maxTokens);
  return { text, citations: rendered.citations.slice(0, text.split("\n").length) };
}

function select(units: Unit[], budget: number): Unit[] {
  const covered = new Set<string>();
  const coveredDays = new Set<string>();
  const chosen: Unit[] = [];
  const pool = new Set(units);
  let used = 0;

  const run = (candidates: () => Iterable<Unit>, limit: number) => {
    for (;;) {
      let best: Unit | undefined;
      let bestRatio = 0;
      let bestCost = 0;
      for (const u of candidates()) {
        const cost = unitCost(u, coveredDays);
        if (used + cost > limit) continue;
        const gain = unitGain(u, covered);
        // A unit must add something besides its day heading: "Good choice." dated is still noise.
        if (gain - dayGain(u, covered) < MIN_GAIN) continue;
        const ratio = gain / cost;
        // Strict ">" keeps the earliest unit on ties, so the output is deterministic.
        if (ratio > bestRatio) {
          best = u;
          bestRatio = ratio;
          bestCost = cost;
        }
      }
      if (!best) return;
      chosen.push(best);
      pool.delete(best);
      used += bestCost;
      for (const key of best.keys.keys()) covered.add(key);
      if (best.day) coveredDays.add(best.day);
    }
  };

  const priorUnits = units.filter((u) => u.prior);
  if (priorUnits.length > 0) {
    run(() => priorUnits.filter((u) => pool.has(u)), Math.floor(budget * PRIOR_SHARE));
  }
  run(() => pool, budget);
  return chosen.sort((a, b) => a.order - b.order);
}

function unitGain(u: Unit, covered: Set<string>): number {
  let gain = u.bonus;
  for (const [key, weight] of u.keys) if (!covered.has(key)) gain += weight;
  return gain;
}

function dayGain(u: Unit, covered: Set<string>): number {
  const key = `day:${u.day}`;
  return u.day && !covered.has(key) ? (u.keys.get(key) ?? 0) : 0;
}

function unitCost(u: Unit, coveredDays: Set<string>): number {
  const line = lineFor(u).length + 1;
  return line + (u.day && !coveredDays.has(u.day) ? DAY_HEADING_CHARS : 0);
}

function weakestIndex(units: Unit[]): number {
  let index = 0;
  let lowest = Number.POSITIVE_INFINITY;
  units.forEach((u, i) => {
    let gain = u.bonus;
    for (const w of u.keys.values()) gain += w;
    const ratio = gain / (lineFor(u).length + 1);
    if (ratio < lowest) {
      lowest = ratio;
      index = i;
    }
  });
  return index;
}

function headerLine(count: number, first: string, last: string, topic: string | undefined): string {
  const span = first && last && first !== last ? ` (${first} to ${last})` : first ? ` (${first})` : "";
  const about = topic?.trim() ? `, topic: ${oneLine(topic.trim()).slice(0, 80)}` : "";
  return `Offline extract of ${count} messages${span}${about}:`;
}

function render(header: string, units: Unit[]): { text: string; citations: string[][] } {
  const lines = [header];
  const citations: string[][] = [[]];
  let day = "";
  for (const u of units) {
    if (u.day && u.day !== day) {
      lines.push(u.day);
      citations.push([]);
      day = u.day;
    }
    lines.push(lineFor(u));
    citations.push(u.source ? [u.source] : []);
  }
  if (units.length === 0) {
    lines.push("- (only acknowledgements and small talk)");
    citations.push([]);
  }
  return { text: lines.join("\n"), citations };
}

function lineFor(u: Unit): string {
  const who = u.label ? `${u.label}${u.marker ? ` (${u.marker})` : ""}: ` : u.marker ? `(${u.marker}) ` : "";
  return `- ${who}${u.text}`;
}

// ---------------------------------------------------------------------------------------------
// Building units from messages and from the prior summary.

function messageUnits(
  message: SummarySourceMessage,
  index: number,
  total: number,
  orderBase: number,
  ctx: Ctx,
): Unit[] {
  const label = labelFor(message);
  const day = dayOf(message.createdAt);
  // Later messages are likelier to hold the tasks still open when the fold happens.
  const recency = total > 1 ? index / (total - 1) : 1;
  const out: Unit[] = [];
  for (const sentence of splitSentences(message.content)) {
    const text = clipSentence(sentence);
    if (text) {
      const unit = makeUnit(orderBase + out.length, label, day, text, recency, ctx, false, message.role);
      unit.source = message.id;
      out.push(unit);
    }
  }
  for (const call of message.toolCalls ?? []) {
    const args = oneLine(call.arguments);
    const text = `called ${call.name}(${args.length > 100 ? `${args.slice(0, 100)}…` : args})`;
    const unit = makeUnit(orderBase + out.length, label, day, text, recency, ctx, false, message.role);
    unit.bonus += 1; // what was done matters even when the arguments carry no names
    unit.source = message.id;
    out.push(unit);
  }
  return out;
}

function makeUnit(
  order: number,
  label: string,
  day: string,
  text: string,
  recency: number,
  ctx: Ctx,
  prior: boolean,
  role?: string,
): Unit {
  const keys = keysOf(text, ctx.vocab);
  if (day) keys.set(`day:${day}`, WEIGHT.day);
  if (ctx.mustKeep.length > 0) {
    // A coverage key: the first line that carries a required unit earns it, later ones do not.
    const prepared = carrierText(text);
    for (const key of ctx.mustKeep) if (carries(prepared, { key })) keys.set(`must:${key}`, WEIGHT.mustKeep);
  }
  const decision = DECISION_RE.test(text);
  const task = !decision && TASK_RE.test(text) && (role !== "TOOL");
  let bonus = decision ? 2.5 : task ? 1.5 + 1.5 * recency : 0;
  if (role === "USER" && /\?\s*$/.test(text) && text.length > 25) bonus += 0.5 + recency;
  const onTopic = new Set(termsOf(text).filter((t) => ctx.focus.has(t))).size;
  bonus += WEIGHT.focus * Math.min(onTopic, 3);
  // Vocatives and fillers ("Caroline!", "Me too.") name things without saying anything.
  if (!substantive(text, keys)) bonus -= 100;
  return {
    order,
    label,
    day,
    text,
    marker: decision ? "decision" : task ? "to do" : "",
    keys,
    bonus,
    prior,
  };
}

function keysOf(text: string, vocab: Vocab): Map<string, number> {
  const keys = new Map<string, number>();
  let rest = text;
  for (const m of text.matchAll(DATE_RE)) {
    keys.set(`date:${norm(m[0])}`, WEIGHT.date);
    rest = rest.replace(m[0], " ");
  }
  for (const m of rest.matchAll(NUMBER_RE)) {
    if (/^\d$/.test(m[0])) continue; // single digits are mostly "1 of them", not facts
    keys.set(`num:${norm(m[0])}`, WEIGHT.number);
  }
  for (const name of namesOf(text, vocab)) keys.set(`ent:${name}`, WEIGHT.entity);
  for (const m of text.matchAll(IDENT_RE)) keys.set(`ent:${m[0].toLowerCase()}`, WEIGHT.entity);
  let terms = 0;
  for (const term of termsOf(text)) {
    if (terms >= 6) break;
    if (!keys.has(`ent:${term}`)) keys.set(`term:${term}`, WEIGHT.term);
    terms++;
  }
  return keys;
}

/** At least four words, or a number, a date or an identifier: enough to state something. */
function substantive(text: string, keys: Map<string, number>): boolean {
  const words = text.split(/\s+/).filter((w) => /\p{L}|\d/u.test(w)).length;
  if (words >= 4) return true;
  for (const key of keys.keys()) if (/^(?:num|date):/.test(key)) return true;
  return /^called /.test(text);
}


function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD_RE)) {
    const w = m[0].replace(/[’']s$/, "");
    if (!STOP_TERMS.has(w) && !NOT_NAMES.has(w)) out.push(w);
  }
  return out;
}

function focusTerms(text: string): Set<string> {
  return new Set(termsOf(text));
}

interface PriorParsed {
  units: Unit[];
  count: number;
  firstDay: string;
}

/**
 * Reads a prior summary back into units. Our own format is recognised (day headings, speaker
 * labels, markers, the message count); any other text, such as an LLM-written summary from before
 * a provider switch, is split into sentences of unknown speaker.
 */
function parsePrior(prior: string | null, ctx: Ctx): PriorParsed {
  const parsed: PriorParsed = { units: [], count: 0, firstDay: "" };
  if (!prior?.trim()) return parsed;
  // Topic words steer what the new messages contribute, not what the past kept.
  const pctx: Ctx = { ...ctx, focus: new Set() };
  let day = "";
  for (const raw of prior.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const head = /^Offline extract of (\d+) messages(?: \((\d{4}-\d{2}-\d{2}))?/.exec(line);
    if (head) {
      parsed.count = Number(head[1]);
      parsed.firstDay = head[2] ?? "";
      continue;
    }
    if (/^\d{4}-\d{2}-\d{2}$/.test(line)) {
      day = line;
      continue;
    }
    const item = /^-\s+(?:(User|Assistant|System|Tool result|Tool \S+)(?: \((decision|to do)\))?:\s+)?(.*)$/.exec(line);
    if (item) {
      if (item[3] === "(only acknowledgements and small talk)") continue;
      const unit = makeUnit(parsed.units.length, item[1] ?? "", day, clipSentence(item[3] ?? ""), 0, pctx, true);
      if (item[2]) unit.marker = item[2] as Unit["marker"];
      if (unit.text) parsed.units.push(unit);
      continue;
    }
    for (const sentence of splitSentences(line)) {
      const text = clipSentence(sentence);
      if (text) parsed.units.push(makeUnit(parsed.units.length, "", day, text, 0, pctx, true));
    }
  }
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// Text helpers.

function labelFor(message: SummarySourceMessage): string {
  switch (message.role) {
    case "USER":
      return "User";
    case "ASSISTANT":
      return "Assistant";
    case "SYSTEM":
      return "System";
    default:
      return "Tool result";
  }
}

function dayOf(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})/.exec(iso);
  return m?.[1] ?? "";
}

function splitSentences(text: string): string[] {
  return text
    .replace(/```[\s\S]*?```/g, (block) => block.split("\n").slice(0, 2).join(" ") + " …```")
    .split(/(?<=[.!?])\s+(?=["'“(\[]?[A-Z0-9])|\n+/)
    .map((s) => oneLine(s))
    .filter((s) => s.length > 0);
}

/** Strips openers that carry nothing ("Wow, ", "Haha! ") and cuts long sentences at a clause. */
function clipSentence(sentence: string): string {
  let s = sentence.trim();
  for (let i = 0; i < 3; i++) {
    const stripped = s.replace(
      /^(?:hey|hi|hello|wow|oh|ah|aw+|yeah|yes|yep|okay|ok|so|well|haha+|lol|omg|gosh|hmm+|um+|totally|absolutely|definitely|thanks|thank you)\b[\s,!.…-]*/i,
      "",
    );
    if (stripped === s || stripped.length < 3) break;
    s = stripped.charAt(0).toUpperCase() + stripped.slice(1);
  }
  if (s.length <= MAX_UNIT_CHARS) return s;
  const window = s.slice(0, MAX_UNIT_CHARS);
  const clause = Math.max(window.lastIndexOf(", "), window.lastIndexOf("; "), window.lastIndexOf(" - "));
  const cut = clause > MAX_UNIT_CHARS / 2 ? clause : window.lastIndexOf(" ");
  return `${window.slice(0, cut > 0 ? cut : MAX_UNIT_CHARS).trimEnd()}…`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

