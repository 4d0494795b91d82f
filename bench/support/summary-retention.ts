/**
 * What an offline summary keeps of the turns it folds, against "keep the first N characters" of the
 * same turns: names, numbers, dates and the answers to the conversation's questions. The measures
 * are deliberately simpler than, and independent of, the summarizer's own extraction. Used by the
 * offline-summary benchmark (on LoCoMo) and by test/unit/offline-summarizer.test.ts (on the
 * built-in conversations); docs/summarizers.md reports the figures.
 */
import { extractiveSummary } from "../../core/adapters/llm/offline-summarizer.js";
import type { SummarySourceMessage } from "../../core/ports/summarizer.js";
import { answered, type LocomoConversation } from "./locomo.js";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** The turns as summarizer input: the first speaker plays the user, the second the assistant. */
export function toSourceMessages(c: LocomoConversation): SummarySourceMessage[] {
  return c.turns.map((t) => ({
    id: t.diaId,
    role: t.speaker === c.speakerA ? "USER" : "ASSISTANT",
    content: t.text,
    createdAt: t.at.toISOString(),
  }));
}

export interface Chunk {
  conversation: LocomoConversation;
  label: string;
  messages: SummarySourceMessage[];
}

/** Chunks of 60 and 120 turns starting at turns 0, 100, 200 and 300 of every conversation. */
export function chunksOf(conversations: LocomoConversation[]): Chunk[] {
  return conversations.flatMap((c) => {
    const messages = toSourceMessages(c);
    return [60, 120].flatMap((size) =>
      [0, 100, 200, 300].map((start) => ({ conversation: c, label: `${c.id}[${start}..${start + size})`, messages: messages.slice(start, start + size) })),
    );
  });
}

/** Capitalised words not opening a sentence (names, places), plus multi-digit numbers. */
export function entitiesOf(text: string): string[] {
  const out: string[] = [];
  for (const sentence of text.split(/(?<=[.!?])\s+|\n/)) {
    sentence.split(/\s+/).forEach((word, i) => {
      const w = word.replace(/^[^\p{L}\d]+|[^\p{L}\d]+$/gu, "").replace(/['’]s$/, "");
      if (!w) return;
      if (/^\d{2,}$/.test(w)) out.push(w);
      else if (i > 0 && /^\p{Lu}/u.test(w) && !/^I(['’]|$)/.test(w) && !MONTHS.includes(w)) out.push(w.toLowerCase());
    });
  }
  return out;
}

const DATE_WORDS = new RegExp(
  `\\b(?:${MONTHS.join("|")}|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|yesterday|today|tomorrow|(?:19|20)\\d{2}|(?:last|next) (?:week|weekend|month|year|summer))\\b`,
  "gi",
);

/** The days the turns happened on, plus the date words they contain. */
export function datesOf(messages: SummarySourceMessage[]): Set<string> {
  const dates = new Set(messages.map((m) => m.createdAt.slice(0, 10)));
  for (const m of messages) for (const d of m.content.matchAll(DATE_WORDS)) dates.add(d[0].toLowerCase());
  return dates;
}

export function mentions(text: string, needle: string): boolean {
  const escaped = needle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\p{L}\\d])${escaped}(?![\\p{L}\\d])`, "iu").test(text);
}

function share(items: Set<string>, text: string): number {
  if (items.size === 0) return 1;
  return [...items].filter((e) => mentions(text, e)).length / items.size;
}

/** The baseline: the same turns rendered the same way, cut after the first N characters. */
export function firstChars(messages: SummarySourceMessage[], chars: number): string {
  let out = "";
  let day = "";
  for (const m of messages) {
    const d = m.createdAt.slice(0, 10);
    if (d !== day) {
      out += `${d}\n`;
      day = d;
    }
    out += `- ${m.role === "USER" ? "User" : "Assistant"}: ${m.content}\n`;
  }
  return out.slice(0, chars);
}

export interface RetentionRow {
  label: string;
  turns: number;
  entities: number;
  dates: number;
  answers: number;
  /** [offline summary, first N characters] */
  entityShare: [number, number];
  dateShare: [number, number];
  answersKept: [number, number];
}

export interface Retention {
  budget: number;
  rows: RetentionRow[];
  meanEntity: [number, number];
  meanDate: [number, number];
  answers: number;
  answersKept: [number, number];
}

/** Summarizes every chunk at `budget` tokens and measures both sides at the same length. */
export function measureRetention(chunks: Chunk[], budget: number): Retention {
  const rows = chunks.map((chunk): RetentionRow => {
    const summary = extractiveSummary({ priorSummary: null, messages: chunk.messages }, budget);
    const prefix = firstChars(chunk.messages, summary.length);
    const entities = new Set(chunk.messages.flatMap((m) => entitiesOf(m.content)));
    const dates = datesOf(chunk.messages);
    // Answers to the conversation's questions whose evidence lies in the chunk and that appear
    // word for word in it.
    const ids = new Set(chunk.messages.map((m) => m.id));
    const text = chunk.messages.map((m) => m.content).join("\n");
    const answers = answered(chunk.conversation)
      .filter((q) => q.evidence.length > 0 && q.evidence.every((e) => ids.has(e)))
      .map((q) => q.answer)
      .filter((a) => mentions(text, a));
    return {
      label: chunk.label,
      turns: chunk.messages.length,
      entities: entities.size,
      dates: dates.size,
      answers: answers.length,
      entityShare: [share(entities, summary), share(entities, prefix)],
      dateShare: [share(dates, summary), share(dates, prefix)],
      answersKept: [answers.filter((x) => mentions(summary, x)).length, answers.filter((x) => mentions(prefix, x)).length],
    };
  });
  const mean = (pick: (r: RetentionRow) => [number, number]): [number, number] => [
    rows.reduce((n, r) => n + pick(r)[0], 0) / rows.length,
    rows.reduce((n, r) => n + pick(r)[1], 0) / rows.length,
  ];
  const total = (pick: (r: RetentionRow) => [number, number]): [number, number] => [
    rows.reduce((n, r) => n + pick(r)[0], 0),
    rows.reduce((n, r) => n + pick(r)[1], 0),
  ];
  return {
    budget,
    rows,
    meanEntity: mean((r) => r.entityShare),
    meanDate: mean((r) => r.dateShare),
    answers: rows.reduce((n, r) => n + r.answers, 0),
    answersKept: total((r) => r.answersKept),
  };
}
