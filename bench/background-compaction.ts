/**
 * Compaction off the turn's critical path (docs/compaction.md): a long session driven turn by turn
 * through the real OpenAI adapter against a local wire server that answers after a fixed delay,
 * with the summarizer called inside the turn (inline) and by the worker (background), side by side;
 * on the built-in synthetic conversation and on LoCoMo conversations where present; and a
 * 1,000-message fold at a 128k window, chained vs parallel, against one summarizer call.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createOpenAISummarizer } from "../core/adapters/llm/openai-summarizer.js";
import type { CompactionResult } from "../core/domain/model.js";
import { estimateTokens } from "../core/domain/tokens.js";
import { DEFAULT_TUNABLES } from "../core/domain/tunables.js";
import type { DomainEvent } from "../core/ports/events.js";
import type { Summarizer } from "../core/ports/summarizer.js";
import { compactIfNeeded } from "../core/services/compaction.js";
import type { ServiceDeps } from "../core/services/deps.js";
import { appendMessage } from "../core/services/messages.js";
import { upsertProcess } from "../core/services/processes.js";
import { runTurn } from "../core/services/turn.js";
import { silentLog } from "../core/adapters/log.js";
import { createRecordingMetrics } from "../core/adapters/metrics/emf-metrics.js";
import { createDynamoStore } from "../core/adapters/dynamodb/store.js";
import { createDeps } from "../core/composition/create-deps.js";
import { chatCompletionBody, startLlmWireServer, type LlmWireServer } from "../tools/llm-wire-server.js";
import { type BenchContext, bySize, envInt, requireEndpoint } from "./support/context.js";
import { batchPut, freshTable } from "./support/dynamo.js";
import type { SectionResult, Table, Target } from "./support/report.js";
import { idFactory, makeMessage, messageItem, prng, syntheticText } from "./support/service.js";
import { fmt, percentile, times } from "./support/stats.js";
import { loadConversations, type LocomoConversation } from "./support/locomo.js";
import { handleCompactionRequested } from "../core/adapters/events/handlers.js";

const SUMMARY = `<summary>${"The team moved the deploy to Friday, restored the dropped column, and owes Maria the rollback plan. ".repeat(6)}</summary>`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A wire server whose every chat completion answers SUMMARY after `delayMs`. */
async function slowModel(delayMs: number): Promise<LlmWireServer> {
  const server = await startLlmWireServer();
  server.setFallback({ delayMs, body: chatCompletionBody(SUMMARY, { promptTokens: 1000, completionTokens: 200 }) });
  return server;
}

const openai = (server: LlmWireServer): Summarizer =>
  createOpenAISummarizer({ baseURL: `${server.url}/v1`, apiKey: "bench", model: "gpt-4o-mini", retry: { maxAttempts: 1, attemptTimeoutMs: 60_000, deadlineMs: 120_000 } });

interface TurnSample {
  ms: number;
  compacted: boolean;
  queued: boolean;
  trimmed: number;
  /** The prompt the answer lets the engine build, in our estimate, against the window. */
  returnedTokens: number;
}

interface SessionRun {
  /** "synthetic", or the LoCoMo conversation's id. */
  conversation: string;
  mode: "inline" | "background";
  window: number;
  delayMs: number;
  turns: TurnSample[];
  /** Summarizer calls made while a turn was in progress (its own async context). */
  callsInTurns: number;
  callsInWorker: number;
  preparedUsed: number;
  preparedDiscarded: number;
}

/** The text of each turn: a USER message and the ASSISTANT reply. */
type Script = (i: number) => { user: string; reply: string };

/** Synthetic messages of ~1/70 of the window each, so every window sees several folds. */
function syntheticScript(window: number, delayMs: number): Script {
  const rand = prng(window + delayMs);
  const chars = Math.round((window / 70) * 4);
  return () => ({ user: syntheticText(rand, chars), reply: syntheticText(rand, chars) });
}

/** A LoCoMo conversation, one speaker as the user and the other as the assistant, turn by turn. */
function locomoScript(c: LocomoConversation): Script {
  const said = (t: LocomoConversation["turns"][number] | undefined) => (t ? (t.caption ? `${t.text} [shares a photo: ${t.caption}]` : t.text) : "…");
  return (i) => ({ user: said(c.turns[2 * i]), reply: said(c.turns[2 * i + 1]) });
}

/**
 * One engine session: every turn appends a USER message, asks for the turn (timed), pauses like an
 * engine calling its model, then appends the ASSISTANT reply.
 */
async function runSession(
  endpoint: string,
  o: { mode: "inline" | "background"; window: number; delayMs: number; turns: number; pauseMs: number; conversation?: LocomoConversation },
): Promise<SessionRun> {
  const name = o.conversation?.id ?? "synthetic";
  const server = await slowModel(o.delayMs);
  const t = await freshTable(endpoint, `bg-${name}-${o.mode}-${o.window}`);
  const inTurn = new AsyncLocalStorage<boolean>();
  const counts = { turns: 0, worker: 0 };
  const real = openai(server);
  const summarizer: Summarizer = {
    ...real,
    summarize: (input) => {
      if (inTurn.getStore()) counts.turns++;
      else counts.worker++;
      return real.summarize(input);
    },
  };
  const queue: DomainEvent[] = [];
  const metrics = createRecordingMetrics();
  const deps: ServiceDeps = createDeps({
    env: { COMPACTION_EXECUTION: o.mode },
    store: createDynamoStore({ client: t.client, tableName: t.tableName }),
    log: silentLog,
    metrics,
    // The worker runs outside the turn's async context, as its own Lambda would.
    events: { publish: async (e) => void queue.push(e) },
    summarizerFactory: async () => summarizer,
  });
  let running = true;
  const jobs = new Set<Promise<unknown>>();
  const worker = (async () => {
    while (running || queue.length > 0 || jobs.size > 0) {
      const next = queue.shift();
      if (next?.detailType === "CompactionRequested") {
        const job = inTurn.run(false, () => handleCompactionRequested(deps, next.detail)).catch(() => {});
        jobs.add(job);
        void job.finally(() => jobs.delete(job));
      }
      await sleep(20);
    }
  })();

  const key = { tenantId: "bench", processId: `session-${name}-${o.mode}-${o.window}-${o.delayMs}` };
  await upsertProcess(deps, key.tenantId, key.processId, { projectId: "bench" });
  const script = o.conversation ? locomoScript(o.conversation) : syntheticScript(o.window, o.delayMs);
  await appendMessage(deps, key, { role: "USER", content: "Keep the release on track and tell me what is blocking it." });
  const samples: TurnSample[] = [];
  for (let i = 0; i < o.turns; i++) {
    const { user, reply } = script(i);
    const started = performance.now();
    const out = await inTurn.run(true, () => runTurn(deps, key, { message: { role: "USER", content: user }, model: { contextWindow: o.window } }));
    const elapsed = performance.now() - started;
    const c: CompactionResult = out.compaction;
    samples.push({
      ms: elapsed,
      compacted: c.compacted,
      queued: c.reason === "compaction_queued",
      trimmed: c.trimmed?.messages ?? 0,
      returnedTokens: estimateTokens(out.context.block) + out.messages.reduce((n, m) => n + m.tokens, 0),
    });
    await sleep(o.pauseMs);
    await appendMessage(deps, key, { role: "ASSISTANT", content: reply });
  }
  running = false;
  await worker;
  await server.close();
  return {
    conversation: name,
    mode: o.mode,
    window: o.window,
    delayMs: o.delayMs,
    turns: samples,
    callsInTurns: counts.turns,
    callsInWorker: counts.worker,
    preparedUsed: metrics.prepared.filter((p) => p === "used").length,
    preparedDiscarded: metrics.prepared.filter((p) => p !== "used").length,
  };
}

const q = (values: number[]) =>
  values.length === 0 ? ["-", "-", "-", "-"] : [50, 95, 99, 100].map((p) => fmt(p === 100 ? Math.max(...values) : percentile(values, p), 0));

/** A 1,000-message fold at a 128k window: wall time chained and parallel, against one call. */
async function bigFold(endpoint: string, delayMs: number, concurrency: number) {
  const server = await slowModel(delayMs);
  const t = await freshTable(endpoint, `bigfold-${concurrency}`);
  const deps = createDeps({
    env: { COMPACTION_SUMMARIZER_CONCURRENCY: String(concurrency) },
    store: createDynamoStore({ client: t.client, tableName: t.tableName }),
    log: silentLog,
    metrics: createRecordingMetrics(),
    events: { publish: async () => {} },
    summarizerFactory: async () => openai(server),
  });
  const key = { tenantId: "bench", processId: `bigfold-${concurrency}-${delayMs}` };
  await upsertProcess(deps, key.tenantId, key.processId, { projectId: "bench" });
  const ids = idFactory("msg");
  const rand = prng(1000 + concurrency);
  const base = Date.now() - 2_000_000;
  const items = Array.from({ length: 1000 }, (_, i) => {
    const at = new Date(base + i * 1000);
    return messageItem(key, makeMessage(key, ids(at), at, i % 2 ? "ASSISTANT" : "USER", syntheticText(rand, 380)));
  });
  await batchPut(t, items);
  const started = performance.now();
  const out = await compactIfNeeded(deps, key, { model: { contextWindow: 128_000 }, force: "HARD" });
  const wall = performance.now() - started;
  const calls = server.requests.length;
  await server.close();
  if (!out.compacted) throw new Error(`the 1,000-message fold did not commit: ${out.reason}`);
  // The summarizer's share (chunks and merge), as the service records it per fold.
  const summarizing = (await deps.store.getMemory(key, out.memoryId!))!.metadata.summarizerMs ?? Number.NaN;
  return { wall, summarizing, calls, folded: out.compactedMessages };
}

export async function runBackgroundCompaction(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const turns = Number(process.env.BENCH_BG_TURNS ?? (ctx.quick ? 50 : 110));
  const pauseMs = envInt("BENCH_BG_PAUSE_MS", 400);
  // The 5 s summarizer adds two minutes of waiting for its folds: --full runs it.
  const delays = bySize(ctx, { quick: [1000], normal: [1000], full: [1000, 5000] });
  const windows = [8_000, 32_000];
  // The first LoCoMo conversation when the data is there (npm run data:locomo or LOCOMO_DIR), whole.
  const locomo = loadConversations()[0];
  const locomoTurns = locomo ? Math.min(Math.floor(locomo.turns.length / 2), envInt("BENCH_BG_LOCOMO_TURNS", ctx.quick ? 60 : 10_000)) : 0;
  const runs: SessionRun[] = [];
  for (const delayMs of turns > 0 ? delays : []) {
    ctx.log(`background-compaction: sessions with a ${delayMs} ms summarizer, ${turns} synthetic turns${locomo ? ` and ${locomoTurns} turns of LoCoMo ${locomo.id}` : ""} each`);
    // Inline and background, both windows, both conversations, side by side in one run.
    const sessions = windows.flatMap((window) =>
      (["inline", "background"] as const).flatMap((mode) => [
        runSession(endpoint, { mode, window, delayMs, turns, pauseMs }),
        ...(locomo ? [runSession(endpoint, { mode, window, delayMs, turns: locomoTurns, pauseMs, conversation: locomo })] : []),
      ]),
    );
    runs.push(...(await Promise.all(sessions)));
  }

  const latency: Table = {
    title: "Turn latency (ms): every turn, turns that compact, turns that do not",
    columns: ["conversation", "summarizer delay", "window", "mode", "all p50/p95/p99/max", "compacting p50/p95/p99/max", "not compacting p50/p95/p99/max", "p99 all / p99 not compacting", "summarizer calls in turns"],
    rows: runs.map((r) => {
      const all = r.turns.map((s) => s.ms);
      const compacting = r.turns.filter((s) => s.compacted).map((s) => s.ms);
      const quiet = r.turns.filter((s) => !s.compacted).map((s) => s.ms);
      return [
        r.conversation,
        `${r.delayMs} ms`,
        String(r.window),
        r.mode,
        q(all).join(" / "),
        q(compacting).join(" / "),
        q(quiet).join(" / "),
        times(percentile(all, 99) / percentile(quiet, 99), 2),
        String(r.callsInTurns),
      ];
    }),
  };
  const safety: Table = {
    title: "Prompts, trimming and prepared folds",
    columns: ["conversation", "summarizer delay", "window", "mode", "turns", "folds committed", "returned prompt > window", "turns trimmed", "messages trimmed (max)", "prepared used / discarded or expired"],
    rows: runs.map((r) => [
      r.conversation,
      `${r.delayMs} ms`,
      String(r.window),
      r.mode,
      String(r.turns.length),
      String(r.turns.filter((s) => s.compacted).length),
      String(r.turns.filter((s) => s.returnedTokens > r.window).length),
      String(r.turns.filter((s) => s.trimmed > 0).length),
      String(Math.max(0, ...r.turns.map((s) => s.trimmed))),
      r.mode === "background" ? `${r.preparedUsed} / ${r.preparedDiscarded}` : "-",
    ]),
  };

  ctx.log("background-compaction: a 1,000-message fold at 128k, chained vs parallel");
  const foldDelay = 1000;
  const chained = await bigFold(endpoint, foldDelay, 1);
  const eight = await bigFold(endpoint, foldDelay, 8);
  const parallel = await bigFold(endpoint, foldDelay, DEFAULT_TUNABLES.summarizerConcurrency);
  const fold: Table = {
    title: `A 1,000-message fold at a 128k window (summarizer answers after ${foldDelay} ms)`,
    columns: ["strategy", "summarizer calls", "summarizing (wall)", "x one call", "whole fold incl. commit and 1,000 archives"],
    rows: [
      ["chained (summarizerConcurrency 1)", String(chained.calls), `${fmt(chained.summarizing)} ms`, times(chained.summarizing / foldDelay, 2), `${fmt(chained.wall)} ms`],
      ["parallel chunks + merge, 8 at once", String(eight.calls), `${fmt(eight.summarizing)} ms`, times(eight.summarizing / foldDelay, 2), `${fmt(eight.wall)} ms`],
      [
        `parallel chunks + merge, ${DEFAULT_TUNABLES.summarizerConcurrency} at once (default)`,
        String(parallel.calls),
        `${fmt(parallel.summarizing)} ms`,
        times(parallel.summarizing / foldDelay, 2),
        `${fmt(parallel.wall)} ms`,
      ],
    ],
  };

  const bg = runs.filter((r) => r.mode === "background");
  const worstRatio = bg.length === 0 ? Number.NaN : Math.max(...bg.map((r) => percentile(r.turns.map((s) => s.ms), 99) / percentile(r.turns.filter((s) => !s.compacted).map((s) => s.ms), 99)));
  const targets: Target[] = [
    { name: "p99 of all turns / p99 of turns that do not compact (background, worst run)", target: "<= 1.5x", measured: times(worstRatio, 2), met: worstRatio <= 1.5 },
    { name: "turns that waited for a summarizer (background)", target: "0", measured: String(bg.reduce((n, r) => n + r.callsInTurns, 0)), met: bg.every((r) => r.callsInTurns === 0) },
    {
      name: "turns whose returned prompt exceeded the window (background)",
      target: "0",
      measured: String(bg.reduce((n, r) => n + r.turns.filter((s) => s.returnedTokens > r.window).length, 0)),
      met: bg.every((r) => r.turns.every((s) => s.returnedTokens <= r.window)),
    },
    {
      name: "1,000-message fold at 128k, parallel (default concurrency): summarizing wall time / one call",
      target: "<= 3x",
      measured: times(parallel.summarizing / foldDelay, 2),
      met: parallel.summarizing <= 3 * foldDelay,
    },
  ];
  return {
    id: "background-compaction",
    title: "Compaction off the turn's critical path",
    command: "npm run bench -- --only background-compaction",
    tables: [latency, safety, fold],
    targets,
    notes: [
      `Each session: ${turns} turns on the built-in synthetic conversation (messages of ~1/70 of the window)${locomo ? `, or ${locomoTurns} turns of LoCoMo ${locomo.id} (its two speakers as user and assistant)` : " (LoCoMo sessions run too when the data is present: npm run data:locomo or LOCOMO_DIR)"}, an engine pause of ${pauseMs} ms between the turn and its reply, the real OpenAI adapter against a local wire server that answers every call after the fixed delay. Inline and background runs of both windows ran at the same time, against the same DynamoDB Local.`,
      "A turn 'compacts' when it committed a fold (inline: summarized in the turn; background: committed a prepared fold without a model call). Returned prompt = our estimate of the memory block plus the messages the turn answered with.",
    ],
    data: { runs: runs.map((r) => ({ ...r, turns: r.turns })), chained, eight, parallel },
  };
}
