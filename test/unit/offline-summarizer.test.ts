/**
 * The offline summarizer: budget, determinism, what it keeps, folding, and a side-by-side
 * measurement against "keep the first N characters" on real LoCoMo conversations (read at run
 * time from ../shared/data/locomo, never copied into the repository).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createSummarizerFromEnv, resolveSummarizerConfig } from "../../core/adapters/llm/create-summarizer.js";
import {
  createOfflineSummarizer,
  extractiveSummary,
  OFFLINE_SUMMARIZER_MODEL,
} from "../../core/adapters/llm/offline-summarizer.js";
import { AppError } from "../../core/domain/errors.js";
import { estimateTokens } from "../../core/domain/tokens.js";
import type { SummarySourceMessage } from "../../core/ports/summarizer.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const locomoDir = path.resolve(repoRoot, "../shared/data/locomo");
const CONVERSATIONS = ["conv-26", "conv-30", "conv-41"] as const;

// ---------------------------------------------------------------------------------------------
// LoCoMo loading and the evaluation measures (deliberately simpler than, and independent of, the
// summarizer's own extraction).

interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
}
interface LocomoQa {
  answer?: string | number;
  evidence?: string[];
}
interface Conversation {
  name: string;
  messages: SummarySourceMessage[];
  qa: LocomoQa[];
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** "1:56 pm on 8 May, 2023" -> Date (UTC). */
function parseSessionTime(text: string): Date {
  const m = /^(\d{1,2}):(\d{2}) (am|pm) on (\d{1,2}) (\w+), (\d{4})$/.exec(text.trim());
  if (!m) throw new Error(`unexpected LoCoMo date: ${text}`);
  const hour = (Number(m[1]) % 12) + (m[3] === "pm" ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), MONTHS.indexOf(m[5]!), Number(m[4]), hour, Number(m[2])));
}

function loadConversation(name: string): Conversation {
  const raw = JSON.parse(readFileSync(path.join(locomoDir, `${name}.json`), "utf8")) as Record<string, unknown>;
  const messages: SummarySourceMessage[] = [];
  for (let s = 1; s <= 100; s++) {
    const turns = raw[`session_${s}`] as LocomoTurn[] | undefined;
    if (!turns) continue;
    const start = parseSessionTime(String(raw[`session_${s}_date_time`]));
    turns.forEach((t, i) => {
      messages.push({
        id: t.dia_id,
        // The first speaker plays the user, the second the assistant: who said what must survive.
        role: t.speaker === raw.speaker_a ? "USER" : "ASSISTANT",
        content: t.text,
        createdAt: new Date(start.getTime() + i * 30_000).toISOString(),
      });
    });
  }
  return { name, messages, qa: raw.qa as LocomoQa[] };
}

/** Capitalised words not opening a sentence (names, places), plus multi-digit numbers. */
function entitiesOf(text: string): string[] {
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
function datesOf(messages: SummarySourceMessage[]): Set<string> {
  const dates = new Set(messages.map((m) => m.createdAt.slice(0, 10)));
  for (const m of messages) for (const d of m.content.matchAll(DATE_WORDS)) dates.add(d[0].toLowerCase());
  return dates;
}

function mentions(text: string, needle: string): boolean {
  const escaped = needle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\p{L}\\d])${escaped}(?![\\p{L}\\d])`, "iu").test(text);
}

function share(items: Set<string>, text: string): number {
  if (items.size === 0) return 1;
  return [...items].filter((e) => mentions(text, e)).length / items.size;
}

/** The baseline: the same turns rendered the same way, cut after the first N characters. */
function firstChars(messages: SummarySourceMessage[], chars: number): string {
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

// ---------------------------------------------------------------------------------------------

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("offline summarizer selection", () => {
  it("is the default on a fresh machine: no SUMMARIZER and no keys", () => {
    const config = resolveSummarizerConfig({});
    expect(config).toEqual({
      provider: "offline",
      model: OFFLINE_SUMMARIZER_MODEL,
      maxOutputTokens: 400,
      retry: { attemptTimeoutMs: 12_000, maxAttempts: 2, deadlineMs: 24_000, backoffMs: 400 },
    });
    const s = createSummarizerFromEnv({});
    expect([s.provider, s.model, s.contextWindow, s.maxOutputTokens]).toEqual(["offline", "offline-extractive-v1", 200_000, 400]);
  });

  it("treats empty variables as unset, and a base URL alone selects its provider", () => {
    expect(resolveSummarizerConfig({ SUMMARIZER: "", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: " " }).provider).toBe("offline");
    expect(resolveSummarizerConfig({ OPENAI_BASE_URL: "http://127.0.0.1:11434/v1" }).provider).toBe("openai");
    expect(resolveSummarizerConfig({ ANTHROPIC_BASE_URL: "http://127.0.0.1:9/" }).provider).toBe("anthropic");
  });

  it("follows the precedence SUMMARIZER > OPENAI_API_KEY > ANTHROPIC_API_KEY > offline", () => {
    expect(resolveSummarizerConfig({ SUMMARIZER: "offline", OPENAI_API_KEY: "k" }).provider).toBe("offline");
    expect(resolveSummarizerConfig({ OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "a" }).provider).toBe("openai");
    expect(resolveSummarizerConfig({ ANTHROPIC_API_KEY: "a" }).provider).toBe("anthropic");
    expect(resolveSummarizerConfig({ SUMMARIZER: "Anthropic", ANTHROPIC_API_KEY: "a" }).provider).toBe("anthropic");
  });

  it("reads SUMMARY_MAX_TOKENS, SUMMARIZER_TIMEOUT_MS, SUMMARIZER_DEADLINE_MS and SUMMARIZER_CONTEXT_WINDOW", () => {
    const config = resolveSummarizerConfig({
      SUMMARY_MAX_TOKENS: "250",
      SUMMARIZER_TIMEOUT_MS: "5000",
      SUMMARIZER_DEADLINE_MS: "9000",
      SUMMARIZER_CONTEXT_WINDOW: "32768",
    });
    expect(config.maxOutputTokens).toBe(250);
    expect(config.retry).toMatchObject({ attemptTimeoutMs: 5000, deadlineMs: 9000, maxAttempts: 2 });
    expect(config.contextWindow).toBe(32768);
    expect(createSummarizerFromEnv({ SUMMARY_MAX_TOKENS: "250" }).maxOutputTokens).toBe(250);
  });

  it.each([
    [{ SUMMARIZER: "gemini" }, "SUMMARIZER"],
    [{ SUMMARY_MAX_TOKENS: "lots" }, "SUMMARY_MAX_TOKENS"],
    [{ SUMMARY_MAX_TOKENS: "10" }, "SUMMARY_MAX_TOKENS"],
    [{ OPENAI_BASE_URL: "not a url" }, "OPENAI_BASE_URL"],
    [{ SUMMARIZER: "anthropic" }, "ANTHROPIC_API_KEY"],
  ])("rejects %j naming %s", (env, field) => {
    let error: unknown;
    try {
      resolveSummarizerConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("config.summarizer");
    expect((error as AppError).message).toContain(field);
  });
});

describe("offline summarizer behaviour", () => {
  const at = (day: number, minute: number) =>
    `2024-07-${String(day).padStart(2, "0")}T09:${String(minute).padStart(2, "0")}:00.000Z`;
  const project: SummarySourceMessage[] = [
    { id: "p1", role: "USER", content: "Hi! I'm Priya from Acme Logistics.", createdAt: at(1, 0) },
    { id: "p2", role: "ASSISTANT", content: "Hello Priya, how can I help?", createdAt: at(1, 1) },
    { id: "p3", role: "USER", content: "We need to move the route planner from MySQL 5.7 to PostgreSQL 16 before 2024-09-30.", createdAt: at(1, 2) },
    { id: "p4", role: "ASSISTANT", content: "Understood. The planner lives in services/route-planner and has 37 tables.", createdAt: at(1, 3) },
    { id: "p5", role: "USER", content: "ok thanks", createdAt: at(1, 4) },
    { id: "p6", role: "USER", content: "After talking to Marco we decided to use pgloader for the copy.", createdAt: at(2, 0) },
    { id: "p7", role: "ASSISTANT", content: "Good choice, that works.", createdAt: at(2, 1) },
    {
      id: "p8",
      role: "ASSISTANT",
      content: "Checking the schema now.",
      createdAt: at(2, 2),
      toolCalls: [{ id: "c1", name: "list_tables", arguments: '{"schema":"routes"}' }],
    },
    { id: "p9", role: "TOOL", content: "37 tables, largest: shipments (12 GB)", toolCallId: "c1", createdAt: at(2, 3) },
    { id: "p10", role: "USER", content: "Great. Can you draft the cutover runbook by Friday? Budget is $18,500.", createdAt: at(2, 4) },
    { id: "p11", role: "ASSISTANT", content: "Sure, sounds good.", createdAt: at(2, 5) },
  ];

  it("keeps who said what, names, numbers, dates, the decision and the open task", () => {
    const summary = extractiveSummary({ priorSummary: null, messages: project }, 400);
    expect(estimateTokens(summary)).toBeLessThanOrEqual(400);
    for (const fact of ["Priya", "Acme Logistics", "PostgreSQL 16", "2024-09-30", "37 tables", "Marco", "pgloader", "$18,500", "Friday", "list_tables"]) {
      expect(summary).toContain(fact);
    }
    expect(summary).toContain("- User (decision): After talking to Marco we decided to use pgloader for the copy.");
    expect(summary).toMatch(/- User \(to do\): Can you draft the cutover runbook by Friday\?/);
    expect(summary).toMatch(/^Offline extract of 11 messages \(2024-07-01 to 2024-07-02\):/);
    expect(summary.split("\n")).toEqual(expect.arrayContaining(["2024-07-01", "2024-07-02"]));
    // Every statement says who made it.
    for (const line of summary.split("\n").filter((l) => l.startsWith("- "))) {
      expect(line).toMatch(/^- (User|Assistant|Tool result|System)( \((decision|to do)\))?: /);
    }
    // Acknowledgements are not worth the budget.
    expect(summary).not.toContain("ok thanks");
    expect(summary).not.toContain("sounds good");
  });

  it("folds the prior summary in: its facts survive and its message count adds up", () => {
    const first = extractiveSummary({ priorSummary: null, messages: project.slice(0, 5) }, 400);
    const second = extractiveSummary({ priorSummary: first, messages: project.slice(5) }, 400);
    expect(second).toMatch(/^Offline extract of 11 messages \(2024-07-01 to 2024-07-02\):/);
    expect(second).toContain("PostgreSQL 16");
    expect(second).toContain("pgloader");
    expect(second.match(/^Offline extract/gm)).toHaveLength(1);
  });

  it("carries a prior summary written by an LLM (after a provider switch)", () => {
    const prior = "The user, Priya, asked you to plan a migration to PostgreSQL 16. You promised a runbook for the Zephyr cluster.";
    const summary = extractiveSummary({ priorSummary: prior, messages: project.slice(9) }, 200);
    expect(summary).toContain("Zephyr");
    expect(summary).toContain("$18,500");
    expect(estimateTokens(summary)).toBeLessThanOrEqual(200);
  });

  it("prefers what the topic label and instructions point at", () => {
    const filler = Array.from({ length: 30 }, (_, i) => ({
      id: `f${i}`,
      role: "USER" as const,
      content: `The pallet scanner Orion${i} at dock ${i + 10} keeps rebooting during the night shift.`,
      createdAt: at(3, i),
    }));
    const garden = { id: "g", role: "ASSISTANT" as const, content: "the greenhouse tomatoes need watering twice a week, and the soil should stay damp but never soaked", createdAt: at(3, 59) };
    const messages = [...filler.slice(0, 15), garden, ...filler.slice(15)];
    const plain = extractiveSummary({ priorSummary: null, messages }, 200);
    const focused = extractiveSummary({ priorSummary: null, messages, topicLabel: "Greenhouse", instructions: "keep the tomatoes" }, 200);
    expect(plain).not.toContain("greenhouse tomatoes");
    expect(focused).toContain("greenhouse tomatoes");
    expect(focused).toMatch(/topic: Greenhouse:/);
  });

  it("is deterministic", () => {
    const a = extractiveSummary({ priorSummary: "Earlier: Priya joined.", messages: project }, 300);
    const b = extractiveSummary({ priorSummary: "Earlier: Priya joined.", messages: [...project] }, 300);
    expect(a).toBe(b);
  });

  it("needs no network", async () => {
    const fetchSpy = vi.fn(() => {
      throw new Error("network used");
    });
    vi.stubGlobal("fetch", fetchSpy);
    const outcome = await createSummarizerFromEnv({}).summarize({ priorSummary: null, messages: project });
    expect(outcome.ok).toBe(true);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("fails rather than inventing a summary when there is nothing to fold", async () => {
    const outcome = await createOfflineSummarizer().summarize({ priorSummary: null, messages: [] });
    expect(outcome).toEqual({ ok: false, error: "nothing to summarize: no messages and no prior summary" });
  });

  it("says so when only small talk was folded", async () => {
    const outcome = await createOfflineSummarizer().summarize({
      priorSummary: null,
      messages: [
        { id: "a", role: "USER", content: "ok", createdAt: at(4, 0) },
        { id: "b", role: "ASSISTANT", content: "Great!", createdAt: at(4, 1) },
      ],
    });
    expect(outcome).toEqual({
      ok: true,
      summary: "Offline extract of 2 messages (2024-07-04):\n- (only acknowledgements and small talk)",
    });
  });
});

describe("offline summarizer on LoCoMo conversations", () => {
  it("finds the data set at ../shared/data/locomo relative to the repository root", () => {
    expect(existsSync(path.join(locomoDir, "conv-26.json")), `missing ${locomoDir}`).toBe(true);
  });

  const conversations = existsSync(locomoDir) ? CONVERSATIONS.map(loadConversation) : [];
  const chunks = conversations.flatMap((c) =>
    [60, 120].flatMap((size) =>
      [0, 100, 200, 300].map((start) => ({ conv: c, label: `${c.name}[${start}..${start + size})`, messages: c.messages.slice(start, start + size) })),
    ),
  );

  it("fits every chunk into the budget (200, 400 and 1000 tokens)", () => {
    expect(chunks.length).toBe(24);
    for (const budget of [200, 400, 1000]) {
      for (const chunk of chunks) {
        const summary = extractiveSummary({ priorSummary: null, messages: chunk.messages }, budget);
        expect(estimateTokens(summary), `${chunk.label} @${budget}`).toBeLessThanOrEqual(budget);
        // Small budgets are used, not wasted: chunks hold 7-19k chars. At 1000 tokens the
        // summarizer may stop early rather than pad the summary with small talk.
        if (budget <= 400) {
          expect(estimateTokens(summary), `${chunk.label} @${budget}`).toBeGreaterThan(budget * 0.9);
        }
      }
    }
  });

  it("keeps names, numbers and dates of the folded turns better than the first N characters", () => {
    const budget = 400;
    const rows: string[] = [];
    const total = { entOffline: 0, entPrefix: 0, dateOffline: 0, datePrefix: 0, ansOffline: 0, ansPrefix: 0, answers: 0 };
    for (const chunk of chunks) {
      const summary = extractiveSummary({ priorSummary: null, messages: chunk.messages }, budget);
      const prefix = firstChars(chunk.messages, summary.length);
      const entities = new Set(chunk.messages.flatMap((m) => entitiesOf(m.content)));
      const dates = datesOf(chunk.messages);
      // Answers to the benchmark's questions whose evidence lies in the chunk and that appear
      // word for word in it.
      const ids = new Set(chunk.messages.map((m) => m.id));
      const text = chunk.messages.map((m) => m.content).join("\n");
      const answers = chunk.conv.qa
        .filter((q) => q.answer !== undefined && (q.evidence ?? []).length > 0 && q.evidence!.every((e) => ids.has(e)))
        .map((q) => String(q.answer))
        .filter((a) => mentions(text, a));

      const e = [share(entities, summary), share(entities, prefix)];
      const d = [share(dates, summary), share(dates, prefix)];
      const a = [answers.filter((x) => mentions(summary, x)).length, answers.filter((x) => mentions(prefix, x)).length];
      total.entOffline += e[0]!;
      total.entPrefix += e[1]!;
      total.dateOffline += d[0]!;
      total.datePrefix += d[1]!;
      total.ansOffline += a[0]!;
      total.ansPrefix += a[1]!;
      total.answers += answers.length;
      rows.push(
        `${chunk.label.padEnd(18)} ${String(chunk.messages.length).padStart(3)} turns  entities ${entities.size
          .toString()
          .padStart(2)}: offline ${e[0]!.toFixed(2)} prefix ${e[1]!.toFixed(2)}  dates ${dates.size
          .toString()
          .padStart(2)}: offline ${d[0]!.toFixed(2)} prefix ${d[1]!.toFixed(2)}  answers ${answers.length}: offline ${a[0]} prefix ${a[1]}`,
      );
    }
    const n = chunks.length;
    const mean = {
      entOffline: total.entOffline / n,
      entPrefix: total.entPrefix / n,
      dateOffline: total.dateOffline / n,
      datePrefix: total.datePrefix / n,
    };
    console.log(
      [
        `offline-extractive-v1 vs first-N-chars, ${budget}-token budget, ${n} LoCoMo chunks (same length each side):`,
        ...rows,
        `mean entity retention: offline ${mean.entOffline.toFixed(3)}, prefix ${mean.entPrefix.toFixed(3)}`,
        `mean date retention:   offline ${mean.dateOffline.toFixed(3)}, prefix ${mean.datePrefix.toFixed(3)}`,
        `verbatim QA answers kept: offline ${total.ansOffline}/${total.answers}, prefix ${total.ansPrefix}/${total.answers}`,
      ].join("\n"),
    );
    expect(mean.entOffline).toBeGreaterThan(mean.entPrefix + 0.15);
    expect(mean.dateOffline).toBeGreaterThan(mean.datePrefix + 0.15);
    expect(total.ansOffline).toBeGreaterThan(total.ansPrefix);
  });

  it("stays within budget when a whole conversation is folded chunk after chunk, and old days survive", () => {
    const conv = conversations.find((c) => c.name === "conv-26")!;
    let prior: string | null = null;
    const chain: string[] = [];
    for (let start = 0; start < conv.messages.length; start += 60) {
      prior = extractiveSummary({ priorSummary: prior, messages: conv.messages.slice(start, start + 60) }, 400);
      chain.push(prior);
      expect(estimateTokens(prior)).toBeLessThanOrEqual(400);
    }
    const last = chain[chain.length - 1]!;
    expect(last).toMatch(new RegExp(`^Offline extract of ${conv.messages.length} messages \\(2023-05-08 to `));
    // The first session's day is still there after every later fold.
    expect(last.split("\n")).toContain("2023-05-08");
  });
});
