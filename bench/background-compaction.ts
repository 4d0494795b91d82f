/**
 * Compaction off the turn's critical path (docs/compaction.md, docs/benchmarks.md): long sessions
 * driven turn by turn through the real OpenAI adapter against a local wire server that answers
 * after a fixed delay (1 s and 5 s), at 8k and 32k windows, on the built-in synthetic conversation
 * and on LoCoMo conv-26 where present, all at the same time. Per configuration: trimmed answers,
 * turns that waited for a summarizer, prompts over the window, cache-stable turns and the p99 of
 * all turns against plain ones. `BENCH_BASELINE_REF=<git ref>` (or `--baseline <ref>`) runs the
 * same sessions against that commit's service code in the same run, side by side. And a
 * 1,000-message fold at a 128k window, chained vs parallel, against one summarizer call.
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * `npm run bench -- --only background-compaction` (bench/background-compaction.ts; part of every
 * `npm run bench`; knobs `BENCH_BG_TURNS`, `BENCH_BG_LOCOMO_TURNS`, `BENCH_BG_PAUSE_MS`;
 * `LOCOMO_DIR` for LoCoMo; `BENCH_BASELINE_REF=<git ref>` or `--baseline <ref>` for the code before a
 * change). One engine session per configuration, driven turn by turn through `runTurn`
 * (bench/support/background-session.ts): each turn appends a USER message and asks for its turn
 * (timed), the engine "thinks" for 400 ms, then the ASSISTANT reply is appended. The summarizer is
 * the real OpenAI adapter against the local wire server, which answers every call after a fixed
 * delay with a numbered summary (so that every fold changes the memory block, as a real summary
 * does); the compaction worker runs in process, outside the turns' async context, as its own Lambda
 * would.
 *
 * **Configurations, every run.** Two conversations: the built-in synthetic one (110 turns, 50 with
 * `--quick`; messages of ~1/70 of the window) and LoCoMo conv-26 whole (209 turns, its two speakers
 * as user and assistant; only when the data is present, `npm run data:locomo` or `LOCOMO_DIR`,
 * located by bench/support/locomo.ts). Summarizer delays of 1 s and 5 s, windows of 8k and 32k, in
 * the background mode (the default). Plus one inline session per delay (`COMPACTION_EXECUTION=inline`:
 * the turn summarizes; synthetic, 8k), the comparison the background mode exists for. Every session
 * runs at the same time against the one DynamoDB Local, so all of them share the same load.
 *
 * **Before and after in one run.** With `BENCH_BASELINE_REF=<git ref>` (or `npm run bench --
 * --baseline <ref>`) the section checks the commit out into a temporary git worktree (`git worktree
 * add --detach` under the OS's temporary directory, this tree's `node_modules` linked in, removed
 * afterwards) and loads that commit's service modules by path (bench/support/service-code.ts). Every
 * background configuration then runs twice at the same time: code `before` (the baseline) and code
 * `after` (this tree), both driven by this tree's benchmark, side by side in one table, and each
 * target also shows the baseline's worst value. The driver reads only what every version's answer
 * has: an absent `staticBlock`, `trimmed` or `clearedMessages` reads as empty.
 *
 * **Per configuration:**
 *
 * - *turns trimmed*: turns whose answer left messages out while a fold was pending
 *   (`compaction.trimmed`), as a count and a share of the session's turns; *most messages trimmed*
 *   in one answer.
 * - *turns that waited*: turns during which a summarizer call ran inside the turn's async context
 *   (the driver runs `runTurn` inside an `AsyncLocalStorage` scope that names the turn; the
 *   summarizer wrapper reads it).
 * - *prompt > window*: answers whose memory block plus messages, in the service's own estimate,
 *   exceed the window.
 * - *cache-stable / counted turns*: what stands before the prompt-cache breakpoint is the static part
 *   of the memory block (`context.staticBlock`: the summary, without the recall section) and then the
 *   answer's messages before its newest append. A turn is cache-stable when the previous answer's
 *   static text equals its own and the previous answer's message ids, in order, are a prefix of its
 *   own (bench/support/cache-stability.ts, `isCacheStable`). Counted: every turn but the first
 *   that commits no fold and clears no result; a fold the worker committed between two answers (the
 *   static text changed while a worker job ran) counts as a commit.
 * - *p99 all / plain* and *p99 ratio*: the 99th percentile of every turn's latency and of the turns
 *   that commit no fold, leaving out each session's first turn (it warms the process up while every
 *   session starts at once); the latency table beside it has p50 / p95 / p99 / max of both.
 * - *folds committed*: folds a turn committed (inline: summarized in the turn; background: a
 *   prepared fold, at EMERGENCY only); *prepared used / discarded*: prepared folds committed, by a
 *   turn or by the worker, and those thrown away or expired.
 *
 * **Targets** (each over every background configuration of this tree's code, its worst value and the
 * configuration it came from): turns with a trimmed answer <= 5% of the turns; turns that waited for
 * a summarizer 0; returned prompts over the window 0; cache-stable turns among the counted ones
 * >= 95%; p99 of all turns / p99 of plain turns <= 1.3x (on a quiet machine: under load every turn
 * slows down, which hides the commit's cost).
 */
import { createOpenAISummarizer } from "../core/adapters/llm/openai-summarizer.js";
import { DEFAULT_TUNABLES } from "../core/domain/tunables.js";
import { compactIfNeeded } from "../core/services/compaction/compaction.js";
import { upsertProcess } from "../core/services/processes.js";
import { silentLog } from "../core/adapters/log.js";
import { createRecordingMetrics } from "../core/adapters/metrics/emf-metrics.js";
import { createDynamoStore } from "../core/adapters/dynamodb/store.js";
import { createDeps } from "../core/composition/create-deps.js";
import { runSession, slowModel, wireSummarizerOptions, type SessionOptions, type SessionRun } from "./support/background-session.js";
import { backgroundTargets, configurationTable, latencyTable } from "./support/background-tables.js";
import { type BenchContext, envInt, repoRoot, requireEndpoint } from "./support/context.js";
import { batchPut, freshTable } from "./support/dynamo.js";
import type { SectionResult, Table, Target } from "./support/report.js";
import { idFactory, makeMessage, messageItem, prng, syntheticText } from "./support/service.js";
import { fmt, times } from "./support/stats.js";
import { loadConversations } from "./support/locomo.js";
import { loadServiceCode, withCheckout, type ServiceCode } from "./support/service-code.js";

const DELAYS = [1000, 5000];
const WINDOWS = [8_000, 32_000];
/** The LoCoMo conversation the section drives, when the data is present. */
const LOCOMO_ID = "conv-26";

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
    summarizerFactory: async () => createOpenAISummarizer(wireSummarizerOptions(server)),
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

/** Every configuration's session, for each service code, all at the same time. */
async function runSessions(ctx: BenchContext, codes: readonly ServiceCode[]): Promise<SessionRun[]> {
  const endpoint = requireEndpoint(ctx);
  const turns = envInt("BENCH_BG_TURNS", ctx.quick ? 50 : 110);
  const pauseMs = envInt("BENCH_BG_PAUSE_MS", 400);
  const conversations = loadConversations();
  const locomo = conversations.find((c) => c.id === LOCOMO_ID) ?? conversations[0];
  const locomoTurns = locomo ? Math.min(Math.floor(locomo.turns.length / 2), envInt("BENCH_BG_LOCOMO_TURNS", ctx.quick ? 60 : 10_000)) : 0;
  const plans: Array<{ code: ServiceCode; options: SessionOptions }> = [];
  for (const conversation of [undefined, ...(locomo ? [locomo] : [])]) {
    for (const delayMs of DELAYS) {
      for (const window of WINDOWS) {
        const base = { window, delayMs, pauseMs, turns: conversation ? locomoTurns : turns, ...(conversation ? { conversation } : {}) };
        // One inline session per delay, this tree's code: the comparison the mode exists for.
        if (!conversation && window === WINDOWS[0]) plans.push({ code: codes.at(-1)!, options: { ...base, mode: "inline" } });
        for (const code of codes) plans.push({ code, options: { ...base, mode: "background" } });
      }
    }
  }
  ctx.log(
    `background-compaction: ${plans.length} sessions at once (${codes.map((c) => c.label).join(" and ")}), ${turns} synthetic turns` +
      `${locomo ? ` and ${locomoTurns} turns of LoCoMo ${locomo.id}` : " (no LoCoMo data)"} each`,
  );
  return Promise.all(plans.map((p) => runSession(p.code, endpoint, p.options)));
}

export async function runBackgroundCompaction(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const after = await loadServiceCode(repoRoot, "after");
  const baselineRef = process.env.BENCH_BASELINE_REF?.trim();
  let baseline: string | undefined;
  const runs = baselineRef
    ? await withCheckout(baselineRef, async (checkout) => {
        baseline = `${baselineRef} (${checkout.commit})`;
        ctx.log(`background-compaction: baseline ${baseline} checked out in ${checkout.root}`);
        return runSessions(ctx, [await loadServiceCode(checkout.root, "before"), after]);
      })
    : await runSessions(ctx, [after]);

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

  const targets: Target[] = [
    ...backgroundTargets(runs),
    {
      name: "1,000-message fold at 128k, parallel (default concurrency): summarizing wall time / one call",
      target: "<= 3x",
      measured: times(parallel.summarizing / foldDelay, 2),
      met: parallel.summarizing <= 3 * foldDelay,
    },
  ];
  const synthetic = runs.find((r) => r.conversation === "synthetic");
  const locomo = runs.find((r) => r.conversation !== "synthetic");
  return {
    id: "background-compaction",
    title: "Compaction off the turn's critical path",
    command: "npm run bench -- --only background-compaction",
    tables: [configurationTable(runs), latencyTable(runs), fold],
    targets,
    notes: [
      `Each session: ${synthetic?.turns.length ?? 0} turns on the built-in synthetic conversation (messages of ~1/70 of the window)${locomo ? `, or ${locomo.turns.length} turns of LoCoMo ${locomo.conversation} (its two speakers as user and assistant)` : " (LoCoMo conv-26 runs too when the data is present: npm run data:locomo or LOCOMO_DIR)"}, an engine pause between the turn and its reply, the real OpenAI adapter against a local wire server that answers every call after the fixed delay. Every session ran at the same time, against the same DynamoDB Local.`,
      baseline
        ? `code 'before' is ${baseline}'s service code, 'after' this tree's, both driven by this tree's benchmark in the same run.`
        : "code 'after' is this tree's service code; BENCH_BASELINE_REF=<git ref> (or --baseline <ref>) adds the same sessions against that commit's code ('before'), side by side.",
      "A turn 'commits' when it committed a fold (inline: summarized in the turn; background: a prepared fold). 'Waited': a summarizer call ran inside the turn's async context. Returned prompt = the service's estimate of the memory block plus the messages the turn answered with. Cache-stable: the answer's static memory block and its messages up to the previous answer's are the previous answer's (bench/support/cache-stability.ts), counted over the turns after the first that commit nothing and clear nothing (a fold the worker committed between two answers counts as a commit).",
    ],
    data: { baseline, runs, chained, eight, parallel },
  };
}
