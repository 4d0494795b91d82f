/**
 * The one reader of LoCoMo-shaped conversations (docs/development.md, "LoCoMo data"): the benchmarks, the demo
 * and the offline summarizer's tests all parse through here. The real data set is never in the
 * repository: `npm run data:locomo` downloads it into the git-ignored data/locomo/ (or LOCOMO_DIR
 * points elsewhere); without it, callers fall back to the built-in generated conversations
 * (bench/support/generated-conversation.ts), which have the same shape.
 *
 * One file per conversation: `speaker_a`, `speaker_b`, `session_N` (turns `{ speaker, dia_id,
 * text, blip_caption? }`), `session_N_date_time` ("1:56 pm on 8 May, 2023") and `qa` (questions
 * with `answer`, `evidence` = dia_ids, `category`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./context.js";

/** Where `npm run data:locomo` puts the files (git-ignored). */
export const DEFAULT_LOCOMO_DIR = "data/locomo";

/** `LOCOMO_DIR` overrides the location (resolved against the repository root). */
export const locomoDir = () => path.resolve(repoRoot, process.env.LOCOMO_DIR?.trim() || DEFAULT_LOCOMO_DIR);

export interface LocomoTurn {
  speaker: string;
  diaId: string;
  text: string;
  /** The caption of a photo shared with the turn, when there is one. */
  caption?: string;
  session: number;
  at: Date;
}

export interface LocomoQa {
  question: string;
  /** Absent for the adversarial questions (category 5), which have no answer. */
  answer?: string;
  /** dia_ids of the turns that hold the answer. */
  evidence: string[];
  category: number;
}

export interface LocomoConversation {
  id: string;
  speakerA: string;
  speakerB: string;
  turns: LocomoTurn[];
  qa: LocomoQa[];
}

/**
 * The conversations back to back as one long session (for windows the single ones never fill): the
 * first speaker of each is speaker A, each starts a day after the previous one ends, and the ids
 * of turns and evidence carry their conversation's id so they stay unique.
 */
export function joinConversations(conversations: readonly LocomoConversation[]): LocomoConversation {
  const turns: LocomoTurn[] = [];
  const qa: LocomoQa[] = [];
  for (const c of conversations) {
    const offset = turns.length === 0 ? 0 : turns.at(-1)!.at.getTime() + 86_400_000 - c.turns[0]!.at.getTime();
    for (const t of c.turns) {
      turns.push({ ...t, speaker: t.speaker === c.speakerA ? "A" : "B", diaId: `${c.id}:${t.diaId}`, at: new Date(t.at.getTime() + offset) });
    }
    for (const q of c.qa) qa.push({ ...q, evidence: q.evidence.map((e) => `${c.id}:${e}`) });
  }
  return { id: conversations.map((c) => c.id).join("+"), speakerA: "A", speakerB: "B", turns, qa };
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

/** Evidence ids are sometimes written together ("D8:6; D9:17"). */
const evidenceIds = (evidence: unknown) =>
  (Array.isArray(evidence) ? evidence : []).flatMap((e) => String(e).split(/[;,\s]+/)).filter((e) => /^D\d+:\d+$/.test(e));

/** One conversation from its parsed JSON (a file's content, or one sample's fields flattened). */
export function parseConversation(id: string, raw: Record<string, unknown>): LocomoConversation {
  const sessions = Object.keys(raw)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(raw[m[0]]))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const turns: LocomoTurn[] = [];
  for (const session of sessions) {
    const start = parseSessionTime(String(raw[`session_${session}_date_time`]));
    (raw[`session_${session}`] as Array<{ speaker: string; dia_id: string; text: string; blip_caption?: string }>).forEach((t, i) => {
      turns.push({
        speaker: t.speaker,
        diaId: t.dia_id,
        text: t.text,
        ...(t.blip_caption ? { caption: t.blip_caption } : {}),
        session,
        at: new Date(start.getTime() + i * TURN_SECONDS * 1000),
      });
    });
  }
  const qa = ((raw.qa as Array<{ question: string; answer?: unknown; evidence?: unknown; category: number }>) ?? []).map((q) => {
    const answer = q.answer === undefined || q.answer === null || String(q.answer).trim() === "" ? undefined : String(q.answer);
    return { question: q.question, ...(answer !== undefined ? { answer } : {}), evidence: evidenceIds(q.evidence), category: q.category };
  });
  return { id, speakerA: String(raw.speaker_a), speakerB: String(raw.speaker_b), turns, qa };
}

export function loadConversation(file: string): LocomoConversation {
  return parseConversation(path.basename(file, ".json"), JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>);
}

/** Every conversation file in `dir` (default: locomoDir()), or [] when there is none. */
export function loadConversations(dir = locomoDir()): LocomoConversation[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^conv-.*\.json$/.test(f))
    .sort()
    .map((f) => loadConversation(path.join(dir, f)));
}

/** The answered questions only (the adversarial ones have no answer). */
export const answered = (c: LocomoConversation) => c.qa.filter((q): q is LocomoQa & { answer: string } => q.answer !== undefined);

// ------------------------------------------------------------------------- the public data set

/** The data set's own repository (snap-research/locomo, CC BY-NC 4.0). `LOCOMO_URL` overrides it. */
export const LOCOMO_URL = "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json";

/**
 * locomo10.json (an array of samples `{ sample_id, conversation, qa, observation?,
 * session_summary? }`) -> one file per conversation, named by `sample_id`, with the
 * conversation's fields at the top level next to `qa`: the shape parseConversation reads.
 * Throws, naming the problem, on anything else, before anything is written.
 */
export function splitLocomo10(data: unknown): Array<{ file: string; content: Record<string, unknown> }> {
  if (!Array.isArray(data) || data.length === 0) throw new Error("expected a non-empty JSON array of conversations");
  return data.map((sample: unknown, i) => {
    const s = sample as Record<string, unknown> | null;
    const id = s?.sample_id;
    if (typeof id !== "string" || !/^[\w.-]+$/.test(id)) throw new Error(`sample ${i}: missing or unusable sample_id`);
    const conversation = s!.conversation as Record<string, unknown> | undefined;
    if (!conversation || typeof conversation !== "object" || !Array.isArray(conversation.session_1)) {
      throw new Error(`sample ${id}: no conversation with session_1`);
    }
    if (!Array.isArray(s!.qa)) throw new Error(`sample ${id}: no qa list`);
    const content = {
      ...conversation,
      qa: s!.qa,
      ...((s!.observation as Record<string, unknown>) ?? {}),
      ...((s!.session_summary as Record<string, unknown>) ?? {}),
    };
    // Fail here, not later in a benchmark, when a sample does not parse.
    parseConversation(id, content);
    return { file: `${id}.json`, content };
  });
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
