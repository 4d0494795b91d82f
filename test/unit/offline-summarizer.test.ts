/**
 * The offline summarizer: budget, determinism, what it keeps, folding, and a side-by-side
 * measurement against "keep the first N characters" on long conversations. The tests use the
 * built-in generated conversations (bench/support/generated-conversation.ts), which live in the
 * repository; the same measurement on LoCoMo is the offline-summary benchmark (docs/benchmarks.md).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { generatedConversations } from "../../bench/support/generated-conversation.js";
import { chunksOf, measureRetention, toSourceMessages } from "../../bench/support/summary-retention.js";
import { createSummarizerFromEnv, resolveSummarizerConfig } from "../../core/adapters/llm/create-summarizer.js";
import {
  createOfflineSummarizer,
  extractiveSummary,
  OFFLINE_SUMMARIZER_MODEL,
} from "../../core/adapters/llm/offline-summarizer.js";
import { AppError } from "../../core/domain/errors.js";
import { estimateTokens } from "../../core/domain/tokens.js";
import type { SummarySourceMessage } from "../../core/ports/summarizer.js";

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
    expect(outcome).toEqual({ ok: false, failure: { kind: "nothing_to_summarize", retryable: false, message: "nothing to summarize: no messages and no prior summary" } });
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

describe("offline summarizer on long conversations (built-in, generated)", () => {
  const conversations = generatedConversations();
  const chunks = chunksOf(conversations);

  it("has three long conversations to cut into chunks", () => {
    expect(conversations.map((c) => [c.id, c.turns.length])).toEqual([
      ["gen-1", 419],
      ["gen-2", 409],
      ["gen-3", 466],
    ]);
  });

  it("fits every chunk into the budget (200, 400 and 1000 tokens)", () => {
    expect(chunks.length).toBe(24);
    for (const budget of [200, 400, 1000]) {
      for (const chunk of chunks) {
        const summary = extractiveSummary({ priorSummary: null, messages: chunk.messages }, budget);
        expect(estimateTokens(summary), `${chunk.label} @${budget}`).toBeLessThanOrEqual(budget);
        // Small budgets are used, not wasted: chunks hold 3.6-9k chars. At 1000 tokens the
        // summarizer may stop early rather than pad the summary with small talk.
        if (budget <= 400) {
          expect(estimateTokens(summary), `${chunk.label} @${budget}`).toBeGreaterThan(budget * 0.9);
        }
      }
    }
  });

  it("keeps names, numbers and dates of the folded turns better than the first N characters", () => {
    const r = measureRetention(chunks, 400);
    console.log(
      [
        `offline-extractive-v1 vs first-N-chars, ${r.budget}-token budget, ${r.rows.length} generated chunks (same length each side):`,
        `mean entity retention: offline ${r.meanEntity[0].toFixed(3)}, prefix ${r.meanEntity[1].toFixed(3)}`,
        `mean date retention:   offline ${r.meanDate[0].toFixed(3)}, prefix ${r.meanDate[1].toFixed(3)}`,
        `verbatim QA answers kept: offline ${r.answersKept[0]}/${r.answers}, prefix ${r.answersKept[1]}/${r.answers}`,
      ].join("\n"),
    );
    expect(r.answers).toBeGreaterThan(0);
    expect(r.meanEntity[0]).toBeGreaterThan(r.meanEntity[1] + 0.15);
    expect(r.meanDate[0]).toBeGreaterThan(r.meanDate[1] + 0.15);
    expect(r.answersKept[0]).toBeGreaterThan(r.answersKept[1]);
  });

  it("stays within budget when a whole conversation is folded chunk after chunk, and old days survive", () => {
    const messages = toSourceMessages(conversations.find((c) => c.id === "gen-1")!);
    let prior: string | null = null;
    const chain: string[] = [];
    for (let start = 0; start < messages.length; start += 60) {
      prior = extractiveSummary({ priorSummary: prior, messages: messages.slice(start, start + 60) }, 400);
      chain.push(prior);
      expect(estimateTokens(prior)).toBeLessThanOrEqual(400);
    }
    const last = chain[chain.length - 1]!;
    expect(last).toMatch(new RegExp(`^Offline extract of ${messages.length} messages \\(2023-05-08 to `));
    // The first session's day is still there after every later fold.
    expect(last.split("\n")).toContain("2023-05-08");
  });
});
