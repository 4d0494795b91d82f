/**
 * Token savings on real conversations: every LoCoMo conversation replayed turn by turn through
 * the real `runTurn` (DynamoDB Local, offline summarizer) with 4k, 8k and 16k windows, against
 * full replay and plain truncation (the newest messages that fit the window), side by side.
 * Token counts are chars/4, the service's default estimate.
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * **Setup.**
 * - **Replay.** Each of the three conversations is replayed turn by turn through the real `runTurn`
 *   against DynamoDB Local, with the offline summarizer, once per window, every turn folding in the
 *   request (`COMPACTION_EXECUTION=inline`: the bench runs no worker, and a queued fold would never
 *   land), default tunables (a fold's summary budget is 20% of the window: 800, 1,600 and 3,200
 *   tokens): conv-26 (419 turns), conv-30
 *   (369) and conv-41 (663). That makes 9 processes, 3 at a time.
 * - **Roles and clock.** speaker_a is USER and speaker_b is ASSISTANT. The clock is the session's time
 *   plus 30 s per turn.
 * - **When compaction triggers.** Each turn sends `prompt.chars`: what the engine holds (context block
 *   plus active messages) plus the new message. Compaction therefore triggers on the prompt's chars/4
 *   against the window, with the default thresholds (SOFT 0.40, HARD 0.85, EMERGENCY 0.95).
 * - **Token counts.** Every token count in this section is chars/4, the service's own estimate (docs/compaction.md).
 *   - The prompt counted for a turn is the context block plus the active messages the turn returns.
 *   - The summarizer's input is the prompt an LLM summarizer would be sent for each fold
 *     (`buildSummaryPrompt`: system plus user, with the prior summary and the transcript).
 *   - The summarizer's output is the summary the offline summarizer returned. An LLM would also write a
 *     scratch `<analysis>` block: up to as many output tokens again as the summary's budget.
 * - **Baselines, in the same loop.** Full replay (every message so far) and plain truncation (the newest
 *   messages whose chars fit the window x 4).
 * - **QA check.** An answer counts as word for word when it appears case-insensitively, with whitespace
 *   normalised and no letter or digit directly before or after it.
 */
import { createOfflineSummarizer } from "../core/adapters/llm/offline-summarizer.js";
import type { Message } from "../core/domain/model.js";
import { buildSummaryPrompt } from "../core/domain/summary-prompt.js";
import { CHARS_PER_TOKEN, estimateTokens } from "../core/domain/tokens.js";
import type { Summarizer } from "../core/ports/summarizer.js";
import { runTurn } from "../core/services/turn.js";
import { type BenchContext, envInt, envInts, requireEndpoint } from "./support/context.js";
import { freshTable } from "./support/dynamo.js";
import { conversationsOrBuiltIn } from "./support/generated-conversation.js";
import { answered, createVerbatimIndex, type LocomoConversation } from "./support/locomo.js";
import type { SectionResult, Table, Target } from "./support/report.js";
import { benchDeps, observedStore } from "./support/service.js";
import { fmt, mean, pct, sum, times } from "./support/stats.js";

const tokensOfChars = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

/** The offline summarizer, with the tokens an LLM call of the same fold would cost recorded. */
function meteredSummarizer(inner: Summarizer) {
  const usage = { calls: 0, input: 0, output: 0 };
  const summarizer: Summarizer = {
    provider: inner.provider,
    model: inner.model,
    contextWindow: inner.contextWindow,
    maxOutputTokens: inner.maxOutputTokens,
    async summarize(input) {
      const out = await inner.summarize(input);
      const prompt = buildSummaryPrompt(input, { maxSummaryTokens: inner.maxOutputTokens });
      usage.calls++;
      usage.input += estimateTokens(prompt.system) + estimateTokens(prompt.user);
      if (out.ok) usage.output += estimateTokens(out.summary);
      return out;
    },
  };
  return { summarizer, usage };
}

interface Strategy {
  max: number;
  mean: number;
  total: number;
  overWindow: number;
}

interface ReplayResult {
  conversation: string;
  window: number;
  turns: number;
  compactions: Record<string, number>;
  summarizerCalls: number;
  summarizerInput: number;
  summarizerOutput: number;
  ours: Strategy;
  truncation: Strategy;
  full: Strategy;
  verbatim: number;
  retainedOurs: number;
  retainedOursSummaryOnly: number;
  retainedTruncation: number;
  /** Tokens of the last turn's prompt: what the final-replay retention is measured on. */
  finalOurs: number;
  finalTruncation: number;
  ms: number;
}

const strategy = (prompts: number[], window: number): Strategy => ({
  max: Math.max(...prompts),
  mean: mean(prompts),
  total: sum(prompts),
  overWindow: prompts.filter((p) => p > window).length,
});

/** Newest messages whose chars fit `window` tokens (the newest one always). */
function truncate(texts: readonly string[], upTo: number, window: number): string[] {
  const budget = window * CHARS_PER_TOKEN;
  const kept: string[] = [];
  let chars = 0;
  for (let i = upTo; i >= 0; i--) {
    const length = texts[i]!.length;
    if (kept.length > 0 && chars + length > budget) break;
    kept.push(texts[i]!);
    chars += length;
  }
  return kept.reverse();
}

async function replay(ctx: BenchContext, endpoint: string, conv: LocomoConversation, window: number): Promise<ReplayResult> {
  const started = performance.now();
  const t = await freshTable(endpoint, `ts-${window}`);
  const { store } = observedStore(t);
  let now = conv.turns[0]!.at;
  const metered = meteredSummarizer(createOfflineSummarizer());
  // Every turn folds itself (as without a worker), so the replay shows what the folds keep.
  const deps = benchDeps({ store, clock: { now: () => new Date(now.getTime()) }, summarizer: metered.summarizer, env: { COMPACTION_EXECUTION: "inline" } });
  const key = { tenantId: "bench", processId: `${conv.id}-${window}` };
  await store.upsertProcess(key.tenantId, { processId: key.processId, projectId: "locomo" }, now.toISOString());

  const texts = conv.turns.map((turn) => turn.text);
  const ours: number[] = [];
  const truncation: number[] = [];
  const full: number[] = [];
  const compactions: Record<string, number> = {};
  let block = "";
  let active: Message[] = [];
  let fullChars = 0;
  for (const [i, turn] of conv.turns.entries()) {
    now = turn.at;
    const content = turn.text;
    // What the engine is about to send: the replay it holds plus the new message.
    const promptChars = block.length + sum(active.map((m) => m.content.length)) + content.length;
    const result = await runTurn(deps, key, {
      model: { contextWindow: window },
      prompt: { chars: promptChars },
      message: { role: turn.speaker === conv.speakerA ? "USER" : "ASSISTANT", content },
    });
    if (result.compaction.compacted) compactions[result.compaction.mode] = (compactions[result.compaction.mode] ?? 0) + 1;
    block = result.context.block;
    active = result.messages;
    ours.push(tokensOfChars(block.length + sum(active.map((m) => m.content.length))));
    fullChars += content.length;
    full.push(tokensOfChars(fullChars));
    truncation.push(tokensOfChars(sum(truncate(texts, i, window).map((s) => s.length))));
  }

  const inTranscript = createVerbatimIndex(texts.join("\n"));
  const verbatim = answered(conv).filter((q) => inTranscript(q.answer));
  const inActive = createVerbatimIndex(active.map((m) => m.content).join("\n"));
  const inOurs = createVerbatimIndex(`${block}\n${active.map((m) => m.content).join("\n")}`);
  const inTruncated = createVerbatimIndex(truncate(texts, texts.length - 1, window).join("\n"));
  const retainedOurs = verbatim.filter((q) => inOurs(q.answer));
  const result: ReplayResult = {
    conversation: conv.id,
    window,
    turns: conv.turns.length,
    compactions,
    summarizerCalls: metered.usage.calls,
    summarizerInput: metered.usage.input,
    summarizerOutput: metered.usage.output,
    ours: strategy(ours, window),
    truncation: strategy(truncation, window),
    full: strategy(full, window),
    verbatim: verbatim.length,
    retainedOurs: retainedOurs.length,
    retainedOursSummaryOnly: retainedOurs.filter((q) => !inActive(q.answer)).length,
    retainedTruncation: verbatim.filter((q) => inTruncated(q.answer)).length,
    finalOurs: ours[ours.length - 1]!,
    finalTruncation: truncation[truncation.length - 1]!,
    ms: performance.now() - started,
  };
  ctx.log(`token-savings: ${conv.id} @ ${window} tokens: ${conv.turns.length} turns in ${(result.ms / 1000).toFixed(1)} s`);
  return result;
}

/** Runs `jobs` with at most `limit` in flight. */
async function pool<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
      }
    }),
  );
  return results;
}

export async function runTokenSavings(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const { conversations: all, locomo, source } = conversationsOrBuiltIn();
  if (!locomo) ctx.log(`token-savings: ${source}`);
  const command = `${ctx.quick ? "BENCH_QUICK=1 " : ""}npm run bench -- --only token-savings`;
  // Quick: the first 200 turns of the shortest conversation.
  const maxTurns = envInt("BENCH_TURNS", ctx.quick ? 200 : Number.MAX_SAFE_INTEGER);
  const conversations = (ctx.quick ? [all.reduce((a, b) => (b.turns.length < a.turns.length ? b : a))] : all).map((c) => ({
    ...c,
    turns: c.turns.slice(0, maxTurns),
  }));
  // 4,000 and 8,000 are the windows of the truncation reference (all ten conversations).
  const windows = envInts("BENCH_WINDOWS", [4_000, 8_000, 16_000]);
  const jobs = conversations.flatMap((c) => windows.map((w) => () => replay(ctx, endpoint, c, w)));
  const results = await pool(jobs, 3);

  const byWindow = windows.map((window) => {
    const rs = results.filter((r) => r.window === window);
    const turns = sum(rs.map((r) => r.turns));
    const weighted = (pick: (r: ReplayResult) => Strategy) => sum(rs.map((r) => pick(r).mean * r.turns)) / turns;
    const agg = (pick: (r: ReplayResult) => Strategy): Strategy => ({
      max: Math.max(...rs.map((r) => pick(r).max)),
      mean: weighted(pick),
      total: sum(rs.map((r) => pick(r).total)),
      overWindow: sum(rs.map((r) => pick(r).overWindow)),
    });
    const summarizerInput = sum(rs.map((r) => r.summarizerInput));
    const summarizerOutput = sum(rs.map((r) => r.summarizerOutput));
    const ours = agg((r) => r.ours);
    return {
      window,
      turns,
      compactions: rs.reduce<Record<string, number>>((acc, r) => {
        for (const [k, v] of Object.entries(r.compactions)) acc[k] = (acc[k] ?? 0) + v;
        return acc;
      }, {}),
      summarizerCalls: sum(rs.map((r) => r.summarizerCalls)),
      summarizerInput,
      summarizerOutput,
      ours,
      oursTotal: ours.total + summarizerInput + summarizerOutput,
      truncation: agg((r) => r.truncation),
      full: agg((r) => r.full),
      verbatim: sum(rs.map((r) => r.verbatim)),
      retainedOurs: sum(rs.map((r) => r.retainedOurs)),
      retainedOursSummaryOnly: sum(rs.map((r) => r.retainedOursSummaryOnly)),
      retainedTruncation: sum(rs.map((r) => r.retainedTruncation)),
      finalOurs: sum(rs.map((r) => r.finalOurs)),
      finalTruncation: sum(rs.map((r) => r.finalTruncation)),
    };
  });
  const modes = (c: Record<string, number>) =>
    Object.keys(c).length === 0 ? "0" : Object.entries(c).map(([k, v]) => `${v} ${k}`).join(", ");
  const k = (w: number) => `${fmt(w / 1000, w % 1000 === 0 ? 0 : 1)}k`;

  const tables: Table[] = [
    {
      title: `Prompt tokens per turn (chars/4), ${conversations.length} conversations, ${fmt(sum(conversations.map((c) => c.turns.length)))} turns each window`,
      columns: ["window", "ours max", "ours mean", "truncation max", "truncation mean", "full replay max", "full replay mean", "turns where full replay > window", "turns where ours > window"],
      rows: byWindow.map((w) => [
        k(w.window),
        fmt(w.ours.max),
        fmt(w.ours.mean),
        fmt(w.truncation.max),
        fmt(w.truncation.mean),
        fmt(w.full.max),
        fmt(w.full.mean),
        fmt(w.full.overWindow),
        fmt(w.ours.overWindow),
      ]),
    },
    {
      title: "Total tokens over the whole replay (prompts of every turn + summarizer input and output)",
      columns: ["window", "compactions", "summarizer calls", "summarizer in", "summarizer out", "ours total", "truncation total", "full replay total", "ours / full", "ours / truncation"],
      rows: byWindow.map((w) => [
        k(w.window),
        modes(w.compactions),
        fmt(w.summarizerCalls),
        fmt(w.summarizerInput),
        fmt(w.summarizerOutput),
        fmt(w.oursTotal),
        fmt(w.truncation.total),
        fmt(w.full.total),
        times(w.oursTotal / w.full.total, 3),
        times(w.oursTotal / w.truncation.total, 3),
      ]),
    },
    {
      title: "QA answers found word for word in the transcript that are still word for word in the final replay",
      columns: ["window", "answers verbatim in transcript", "ours: final replay", "ours: only via the summary", "truncation: newest messages", "ours / truncation", "final prompt tokens ours / truncation", "kept per 1k final tokens ours / truncation", "full replay"],
      rows: byWindow.map((w) => [
        k(w.window),
        fmt(w.verbatim),
        `${fmt(w.retainedOurs)} (${pct(w.retainedOurs / w.verbatim)})`,
        fmt(w.retainedOursSummaryOnly),
        `${fmt(w.retainedTruncation)} (${pct(w.retainedTruncation / w.verbatim)})`,
        times(w.retainedOurs / Math.max(1, w.retainedTruncation), 2),
        `${fmt(w.finalOurs)} / ${fmt(w.finalTruncation)}`,
        `${fmt((1000 * w.retainedOurs) / w.finalOurs, 2)} / ${fmt((1000 * w.retainedTruncation) / w.finalTruncation, 2)}`,
        `${fmt(w.verbatim)} (100%)`,
      ]),
    },
    {
      title: "Per conversation",
      columns: ["conversation", "window", "turns", "compactions", "ours max / mean", "ours total", "truncation total", "full total", "retained ours / truncation / verbatim"],
      rows: results.map((r) => [
        r.conversation,
        k(r.window),
        fmt(r.turns),
        modes(r.compactions),
        `${fmt(r.ours.max)} / ${fmt(r.ours.mean)}`,
        fmt(r.ours.total + r.summarizerInput + r.summarizerOutput),
        fmt(r.truncation.total),
        fmt(r.full.total),
        `${r.retainedOurs} / ${r.retainedTruncation} / ${r.verbatim}`,
      ]),
    },
  ];

  const targets: Target[] = byWindow.flatMap((w) => [
    {
      name: `${k(w.window)}: largest prompt`,
      target: `<= window (${fmt(w.window)})`,
      measured: fmt(w.ours.max),
      met: w.ours.max <= w.window,
    },
    {
      name: `${k(w.window)}: verbatim answers kept in the final replay vs truncation (bench's own bar)`,
      target: ">= truncation",
      measured: `${w.retainedOurs} vs ${w.retainedTruncation}`,
      met: w.retainedOurs >= w.retainedTruncation,
    },
  ]);

  return {
    id: "token-savings",
    title: `Token savings on ${locomo ? "LoCoMo" : "the built-in generated"} conversations (chars/4)`,
    command,
    tables,
    targets,
    notes: [
      `Conversations: ${conversations.map((c) => `${c.id} (${c.turns.length} turns, ${fmt(sum(c.turns.map((t) => t.text.length)))} chars)`).join(", ")}, from ${source}. speaker_a is USER, speaker_b ASSISTANT; each turn's text is the message, its session time + 30 s per turn its clock.`,
      "Tokens are chars/4 (the service's default estimate) everywhere in this section. Ours: each turn calls runTurn with prompt.chars = the replay the engine holds (context block + active messages) + the new message; the prompt counted is the context block plus the active messages it returns. Truncation: the newest messages whose chars fit window x 4. Full replay: every message so far.",
      "Summarizer tokens: the prompt an LLM summarizer would get for the same fold (core/domain/summary-prompt.ts: system + user, incl. the prior summary), and the summary the offline summarizer wrote. An LLM would also write a scratch <analysis> block (up to 400 more output tokens per call at the default budget).",
      "The final replay is a snapshot of a sawtooth: a HARD fold keeps only the summary, pinned messages and the last 5, so right after one the replay is far below the window, while truncation always fills it. 'Final prompt tokens' shows the sizes the retention was measured on.",
      "Word for word: case-insensitive, whitespace-normalised, no letter or digit directly before or after the answer. The reference on all ten conversations of locomo10.json: 577 of 1,542 answers verbatim; the newest 4,000 tokens keep 34.3%, 8,000 tokens 54.6%.",
    ],
    data: { windows, results, byWindow },
  };
}
