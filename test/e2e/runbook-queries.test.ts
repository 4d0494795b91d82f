/**
 * The Logs Insights queries of docs/operations.md and of the dashboard, run on the JSON lines the local runner really
 * prints (its Powertools Logger, as in Lambda) while it compacts, fails a summary, has one refused
 * by the quality gate, falls back to the offline summarizer, folds inside a turn, reverts and
 * answers a 500: every query's filter matches at least one line, and every field it shows, counts,
 * groups or sorts by is on a line it matches.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Store } from "../../core/ports/store.js";
import { FAILED_FOLDS_QUERY } from "../../stacks/dashboard.js";
import type { SummarizeOutcome } from "../../core/ports/summarizer.js";
import { freshTable } from "../support/dynamo.js";
import { createFakeSummarizer } from "../support/fake-summarizer.js";
import { fencedBlocks, matching, parseQuery, valueOf, type LogLine } from "../support/logs-insights.js";
import { startTestService } from "../support/service.js";

const RUNBOOK = readFileSync("docs/operations.md", "utf8");
/** The runbook's queries, and the one the dashboard runs (stacks/dashboard.ts). */
const QUERIES = [...fencedBlocks(RUNBOOK, "logs-insights"), FAILED_FOLDS_QUERY.join("\n| ")];
const BROKEN = "rb-broken";

let lines: LogLine[] = [];

beforeAll(async () => {
  const printed: string[] = [];
  // Powertools writes INFO to stdout and WARN/ERROR to stderr.
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, "write").mockImplementation((chunk) => (printed.push(String(chunk)), true));
  }
  const fake = createFakeSummarizer();
  const { tableName, store: real } = await freshTable("runbook");
  // One process whose memories cannot be read: the route answers 500 and logs `unhandled error`.
  const store: Store = {
    ...real,
    listMemories: async (key) => {
      if (key.processId === BROKEN) throw new Error("simulated store outage");
      return real.listMemories(key);
    },
  };
  const { service, api } = await startTestService({
    quiet: false,
    tableName,
    overrides: { summarizer: async () => fake, store },
    env: { COMPACTION_EXECUTION: "inline" },
  });
  try {
    const chat = async (id: string, n: number) => {
      expect((await api("PUT", `/v1/processes/${id}`, { body: { projectId: "ops", engine: "vance" } })).status).toBe(200);
      for (let i = 0; i < n; i++) {
        const role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
        expect((await api("POST", `/v1/processes/${id}/messages`, { body: { role, content: `item ${i}: shelf ${i} moves on day ${i % 3}.` } })).status).toBe(201);
      }
    };
    const compact = async (force: string) => (await api("POST", "/v1/processes/rb-1/compaction", { body: { model: { contextWindow: 100_000 }, force } })).body;
    const down: SummarizeOutcome = { ok: false, failure: { kind: "provider_unavailable", retryable: true, message: "model overloaded" } };
    const errorText: SummarizeOutcome = { ok: true, summary: '{"error": {"message": "upstream connect error", "code": 503}}' };

    await chat("rb-1", 16);
    expect(await compact("HARD")).toMatchObject({ compacted: true });
    await chat("rb-1", 12);
    fake.script.push(down);
    expect(await compact("HARD")).toMatchObject({ compacted: false, reason: "summarizer_failed: provider_unavailable" });
    fake.script.push(errorText, errorText);
    expect(await compact("HARD")).toMatchObject({ compacted: false, reason: "summarizer_failed: quality_gate: error_text" });
    await chat("rb-1", 16);
    fake.script.push(down);
    const fallback = await compact("EMERGENCY");
    expect(fallback).toMatchObject({ compacted: true });
    expect((await api("POST", `/v1/processes/rb-1/memories/${fallback.memoryId}/revert`)).status).toBe(200);
    // A turn that folds in the request (inline HARD), as the turn-latency query looks for.
    await chat("rb-turn", 30);
    const turn = await api("POST", "/v1/processes/rb-turn/turns", { body: { message: { role: "USER", content: "Which aisle first?" }, model: { contextWindow: 10_000 }, prompt: { tokens: 8_700 } } });
    expect(turn.body.compaction, JSON.stringify(turn.body.compaction)).toMatchObject({ mode: "HARD", compacted: true });
    await chat(BROKEN, 2);
    expect((await api("GET", `/v1/processes/${BROKEN}/memories`)).status).toBe(500);
  } finally {
    await service.stop();
    vi.restoreAllMocks();
  }
  lines = printed
    .join("")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((raw) => ({ raw, json: JSON.parse(raw) as Record<string, unknown> }));
}, 120_000);

describe("the runbook's Logs Insights queries", () => {
  it("are in the runbook, one per fenced logs-insights block, and the runner printed its JSON lines", () => {
    expect(QUERIES.length).toBeGreaterThanOrEqual(10);
    expect(lines.length).toBeGreaterThanOrEqual(9);
    expect(lines.every((l) => l.json.service === "vancetope-memory" && typeof l.json.level === "string")).toBe(true);
  });

  it.each(QUERIES.map((q) => [(q.split("\n").find((l) => l.includes("filter")) ?? q).replace(/^\|\s*/, ""), q]))("%s", (_, query) => {
    const parsed = parseQuery(query);
    const matched = matching(parsed, lines);
    expect(matched.length, `no line matches:\n${query}`).toBeGreaterThan(0);
    for (const field of parsed.fields) {
      expect(
        matched.some((l) => valueOf(l, field) !== undefined),
        `'${field}' is on none of the ${matched.length} matching lines`,
      ).toBe(true);
    }
  });
});

describe("the evaluator", () => {
  it("matches nothing for a message no line has, and names a field no matching line carries", () => {
    const none = parseQuery('filter message = "compaction failed: nothing"');
    expect(matching(none, lines)).toEqual([]);
    const reverted = parseQuery('fields summaryChars | filter message = "revert ok"');
    const matched = matching(reverted, lines);
    expect(matched).toHaveLength(1);
    expect(valueOf(matched[0]!, "summaryChars")).toBeUndefined();
  });

  it("tells like, ispresent, not, and, or and numbers apart", () => {
    const count = (q: string) => matching(parseQuery(q), lines).length;
    const committed = count("filter message like /compaction \\(.+\\) ok:/");
    expect(committed).toBe(3); // the first HARD, the EMERGENCY fallback and the turn's fold
    expect(count('filter message like /compaction \\(.+\\) ok:/ and mode = "emergency"')).toBe(1);
    expect(count('filter message like /compaction \\(.+\\) ok:/ and not mode = "emergency"')).toBe(2);
    expect(count('filter mode = "emergency" or message = "revert ok"')).toBe(2);
    expect(count("filter ispresent(tokensSaved) and tokensSaved > 0")).toBe(committed);
    expect(count("filter ispresent(error.message)")).toBe(1);
  });

  it("refuses what it does not support rather than passing it", () => {
    expect(() => parseQuery('filter (message = "a")')).toThrow("parentheses");
    expect(() => parseQuery("parse @message 'x'")).toThrow("unsupported command");
    expect(() => parseQuery("stats median(x)")).toThrow("unsupported stats function");
    expect(() => matching(parseQuery("filter @logStream like /x/"), lines)).toThrow("not on the service's lines");
  });
});
