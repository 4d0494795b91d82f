/**
 * The offline summary's text format, and its parser beside it: a header line with the message
 * count and days, day headings, and one "- Speaker (marker): sentence" line per unit. The next
 * fold reads its prior summary back with {@link parsePrior}, so what {@link render} prints and what
 * parsePrior reads must change together (docs/summarizers.md).
 */
import { makeUnit, clipSentence, oneLine, splitSentences, type Unit, type UnitContext } from "./units.js";

/** Printed when nothing in the fold said anything worth keeping. */
const NOTHING_KEPT = "(only acknowledgements and small talk)";

/** "Offline extract of 12 messages (2024-05-01 to 2024-05-03), topic: billing:" */
export function headerLine(count: number, first: string, last: string, topic: string | undefined): string {
  const span = first && last && first !== last ? ` (${first} to ${last})` : first ? ` (${first})` : "";
  const about = topic?.trim() ? `, topic: ${oneLine(topic.trim()).slice(0, 80)}` : "";
  return `Offline extract of ${count} messages${span}${about}:`;
}

/** The summary text and, per line, the ids of the messages the line came from. */
export function render(header: string, units: Unit[]): { text: string; citations: string[][] } {
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
    lines.push(`- ${NOTHING_KEPT}`);
    citations.push([]);
  }
  return { text: lines.join("\n"), citations };
}

/** One unit's line: "- User (to do): Send the invoice by Friday." */
export function lineFor(u: Unit): string {
  const who = u.label ? `${u.label}${u.marker ? ` (${u.marker})` : ""}: ` : u.marker ? `(${u.marker}) ` : "";
  return `- ${who}${u.text}`;
}

export interface PriorParsed {
  units: Unit[];
  /** Messages the prior summary covered, from its header (0 when it has none). */
  count: number;
  /** The first day the prior summary covered, from its header ("" when unknown). */
  firstDay: string;
}

/**
 * One line of the format: "- ", an optional "Speaker (marker): ", the text. The text starts with a
 * non-blank, so the blanks before it belong to the `\s+` alone: were the text `.*`, a blank run
 * followed by a `\r` inside the line would be split every way between the two before the match
 * gave up (quadratic, docs/reliability.md, "Linear time on any input").
 */
export const BULLET = /^-\s+(?:(User|Assistant|System|Tool result|Tool \S+)(?: \((decision|to do)\))?:\s+)?(\S.*)?$/;

/**
 * Reads a prior summary back into units. Our own format is recognised (day headings, speaker
 * labels, markers, the message count); any other text, such as an LLM-written summary from before
 * a provider switch, is split into sentences of unknown speaker.
 */
export function parsePrior(prior: string | null, ctx: UnitContext): PriorParsed {
  const parsed: PriorParsed = { units: [], count: 0, firstDay: "" };
  if (!prior?.trim()) return parsed;
  // Topic words steer what the new messages contribute, not what the past kept.
  const pctx: UnitContext = { ...ctx, focus: new Set() };
  const priorUnit = (label: string, day: string, text: string) =>
    makeUnit({ order: parsed.units.length, label, day, text, recency: 0, prior: true }, pctx);
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
    const item = BULLET.exec(line);
    if (item) {
      if (item[3] === NOTHING_KEPT) continue;
      const unit = priorUnit(item[1] ?? "", day, clipSentence(item[3] ?? ""));
      if (item[2]) unit.marker = item[2] as Unit["marker"];
      if (unit.text) parsed.units.push(unit);
      continue;
    }
    for (const sentence of splitSentences(line)) {
      const text = clipSentence(sentence);
      if (text) parsed.units.push(priorUnit("", day, text));
    }
  }
  return parsed;
}
