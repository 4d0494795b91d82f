/**
 * Compaction off the turn's critical path (docs/compaction.md, docs/benchmarks.md): long sessions
 * driven turn by turn through the real OpenAI adapter against a local wire server that answers
 * after a fixed delay (1 s and 5 s), at 8k and 32k windows, on the built-in synthetic conversation
 * and on LoCoMo conv-26 where present, all at the same time. Per configuration: trimmed answers,
 * turns that waited for a summarizer, prompts over the window, cache-stable turns and the p99 of
 * all turns against plain ones. `BENCH_BASELINE_REF=<git ref>` (or `--baseline <ref>`) runs the
 * same sessions against that commit's service code in the same run, side by side. And a
 * 1,000-message fold at a 128k window, chained vs parallel, against one summarizer call.
 */
import { createOpenAISummarizer } from "../core/adapters/llm/openai-summarizer.js";
import { DEFAULT_TUNABLES } from "../core/domain/tunables.js";
import { compactIfNeeded } from "../core/services/compaction.js";
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
