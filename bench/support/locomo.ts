/**
 * The LoCoMo conversations, read at run time from ../shared/data/locomo (never copied into the
 * repository): turns in order with a timestamp each, and the QA answers, with the word-for-word
 * test used by the token-savings benchmark.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./context.js";

/** `LOCOMO_DIR` overrides the location (resolved against the repository root). */
export const locomoDir = () => path.resolve(repoRoot, process.env.LOCOMO_DIR ?? "../shared/data/locomo");

export interface LocomoTurn {
  speaker: string;
  diaId: string;
  text: string;
  session: number;
  at: Date;
}

export interface LocomoQa {
  question: string;
  answer: string;
  category: number;
}

export interface LocomoConversation {
  id: string;
  speakerA: string;
  speakerB: string;
  turns: LocomoTurn[];
  qa: LocomoQa[];
}

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/** "1:56 pm on 8 May, 2023" -> Date (UTC). */
export function parseSessionTime(text: string): Date {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  if (!m) throw new Error(`unrecognised LoCoMo session time '${text}'`);
  const [, h, min, ampm, day, month, year] = m;
  const monthIndex = MONTHS.indexOf(month!.toLowerCase());
  if (monthIndex < 0) throw new Error(`unrecognised month in '${text}'`);
  const hour = (Number(h) % 12) + (ampm!.toLowerCase() === "pm" ? 12 : 0);
  return new Date(Date.UTC(Number(year), monthIndex, Number(day), hour, Number(min)));
}

/** Seconds between two turns of one session (LoCoMo records only the session's start). */
const TURN_SECONDS = 30;

export function loadConversation(file: string): LocomoConversation {
  const raw = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const sessions = Object.keys(raw)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(raw[m[0]]))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const turns: LocomoTurn[] = [];
  for (const session of sessions) {
    const start = parseSessionTime(String(raw[`session_${session}_date_time`]));
    (raw[`session_${session}`] as Array<{ speaker: string; dia_id: string; text: string }>).forEach((t, i) => {
      turns.push({ speaker: t.speaker, diaId: t.dia_id, text: t.text, session, at: new Date(start.getTime() + i * TURN_SECONDS * 1000) });
    });
  }
  const qa = ((raw.qa as Array<{ question: string; answer?: unknown; category: number }>) ?? [])
    .filter((q) => q.answer !== undefined && q.answer !== null && String(q.answer).trim() !== "")
    .map((q) => ({ question: q.question, answer: String(q.answer), category: q.category }));
  return { id: path.basename(file, ".json"), speakerA: String(raw.speaker_a), speakerB: String(raw.speaker_b), turns, qa };
}

/** Every conversation file in the data folder, or [] when the folder is missing. */
export function loadConversations(): LocomoConversation[] {
  const dir = locomoDir();
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^conv-.*\.json$/.test(f))
    .sort()
    .map((f) => loadConversation(path.join(dir, f)));
}

const normalise = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();
const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/**
 * Text prepared for word-for-word lookups: lower case, whitespace runs collapsed. An answer is
 * found when it occurs with no letter or digit directly before or after it ("2" does not match
 * "2023"; "7 May 2023" matches "... on 7 May 2023.").
 */
export function createVerbatimIndex(text: string) {
  const haystack = normalise(text);
  return (answer: string): boolean => {
    const needle = normalise(answer).replace(/[.!?]+$/, "");
    if (!needle) return false;
    for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) {
      if (!isWordChar(haystack[i - 1]) && !isWordChar(haystack[i + needle.length])) return true;
    }
    return false;
  };
}
