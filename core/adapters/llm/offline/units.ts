/**
 * Units: the sentences, tool calls and prior-summary lines an offline summary is assembled from,
 * each with the facts it covers (names, numbers, dates, topic words) and a bonus for what makes it
 * worth keeping (a decision, an open task, the topic). See docs/summarizers.md.
 */
import { carrierText, carries, DATE_RE, namesOf, norm, NUMBER_RE, type Vocab } from "../../../domain/salient-units.js";
import { identifiers, replaceSpans } from "../../../domain/text-scan.js";
import type { SummarySourceMessage } from "../../../ports/summarizer.js";
import { DECISION_RE, FILLER_OPENER_RE, TASK_RE, termsOf, WEIGHT } from "./lexicon.js";

export interface Unit {
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

/** What every unit of one summary is scored against. */
export interface UnitContext {
  /** Words of the topic label and instructions: units that mention them are preferred. */
  focus: Set<string>;
  vocab: Vocab;
  /** Keys of units the summary must carry (`SummarizeInput.mustKeep`). */
  mustKeep: string[];
}

/** One unit to score: where it sits, who said it, and how recent it is within the fold. */
export interface UnitSpec {
  order: number;
  label: string;
  day: string;
  text: string;
  /** 0 for the oldest message of the fold, 1 for the newest. */
  recency: number;
  /** Whether the unit is a line of the prior summary. */
  prior: boolean;
  role?: string;
}

/** Longest sentence kept whole; longer ones are cut at a clause boundary. */
const MAX_UNIT_CHARS = 220;

/**
 * Most sentences of one message that become units: its first ones and its last ones. A summary
 * holds a few hundred lines at most, and the selection weighs every unit in each of its rounds,
 * so a message of thousands of sentences (a 256 KiB tool output) is read through this window
 * (docs/summarizers.md, step 1).
 */
export const MAX_MESSAGE_SENTENCES = 160;
/** Of the window, the sentences from the end of a longer message. */
const TAIL_SENTENCES = 40;

/** The sentences of a message that become units (see {@link MAX_MESSAGE_SENTENCES}). */
export function sentenceWindow(sentences: string[]): string[] {
  if (sentences.length <= MAX_MESSAGE_SENTENCES) return sentences;
  return [...sentences.slice(0, MAX_MESSAGE_SENTENCES - TAIL_SENTENCES), ...sentences.slice(-TAIL_SENTENCES)];
}

/** The units of one message: its sentences, then its tool calls. */
export function messageUnits(
  message: SummarySourceMessage,
  index: number,
  total: number,
  orderBase: number,
  ctx: UnitContext,
): Unit[] {
  const label = labelFor(message);
  const day = dayOf(message.createdAt);
  // Later messages are likelier to hold the tasks still open when the fold happens.
  const recency = total > 1 ? index / (total - 1) : 1;
  const out: Unit[] = [];
  const spec = (text: string): UnitSpec => ({ order: orderBase + out.length, label, day, text, recency, prior: false, role: message.role });
  for (const sentence of sentenceWindow(splitSentences(message.content))) {
    const text = clipSentence(sentence);
    if (text) {
      const unit = makeUnit(spec(text), ctx);
      unit.source = message.id;
      out.push(unit);
    }
  }
  for (const call of message.toolCalls ?? []) {
    const args = oneLine(call.arguments);
    const text = `called ${call.name}(${args.length > 100 ? `${args.slice(0, 100)}…` : args})`;
    const unit = makeUnit(spec(text), ctx);
    unit.bonus += 1; // what was done matters even when the arguments carry no names
    unit.source = message.id;
    out.push(unit);
  }
  return out;
}

/** Scores one unit: its coverage keys, its marker and its bonus. */
export function makeUnit(spec: UnitSpec, ctx: UnitContext): Unit {
  const { order, label, day, text, recency, prior, role } = spec;
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
  const dates = [...text.matchAll(DATE_RE)].map((m) => ({ index: m.index, text: m[0] }));
  for (const m of dates) keys.set(`date:${norm(m.text)}`, WEIGHT.date);
  for (const m of replaceSpans(text, dates, " ").matchAll(NUMBER_RE)) {
    if (/^\d$/.test(m[0])) continue; // single digits are mostly "1 of them", not facts
    keys.set(`num:${norm(m[0])}`, WEIGHT.number);
  }
  for (const name of namesOf(text, vocab)) keys.set(`ent:${name}`, WEIGHT.entity);
  for (const m of identifiers(text)) keys.set(`ent:${m.text.toLowerCase()}`, WEIGHT.entity);
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

/** The UTC day of an ISO timestamp ("2024-05-01"), or "" when it is not one. */
export function dayOf(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})/.exec(iso);
  return m?.[1] ?? "";
}

export function splitSentences(text: string): string[] {
  return text
    .replace(/```[\s\S]*?```/g, (block) => block.split("\n").slice(0, 2).join(" ") + " …```")
    .split(/(?<=[.!?])\s+(?=["'“(\[]?[A-Z0-9])|\n+/)
    .map((s) => oneLine(s))
    .filter((s) => s.length > 0);
}

/** Strips openers that carry nothing ("Wow, ", "Haha! ") and cuts long sentences at a clause. */
export function clipSentence(sentence: string): string {
  let s = sentence.trim();
  for (let i = 0; i < 3; i++) {
    const stripped = s.replace(FILLER_OPENER_RE, "");
    if (stripped === s || stripped.length < 3) break;
    s = stripped.charAt(0).toUpperCase() + stripped.slice(1);
  }
  if (s.length <= MAX_UNIT_CHARS) return s;
  const window = s.slice(0, MAX_UNIT_CHARS);
  const clause = Math.max(window.lastIndexOf(", "), window.lastIndexOf("; "), window.lastIndexOf(" - "));
  const cut = clause > MAX_UNIT_CHARS / 2 ? clause : window.lastIndexOf(" ");
  return `${window.slice(0, cut > 0 ? cut : MAX_UNIT_CHARS).trimEnd()}…`;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
