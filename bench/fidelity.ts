/**
 * Fidelity on real conversations (docs/benchmarks.md, "Fidelity"): every LoCoMo conversation
 * replayed turn by turn through the real `runTurn` (DynamoDB Local, offline summarizer) at 4k, 8k
 * and 16k windows, then measured side by side against the simplest baselines:
 * 1. QA answers in the prompt when the question is the turn's query: ours (summary + recall +
 *    active messages) vs truncation at 0.85 of the window plus BM25's top 3 older turns;
 * 2. answers in the final replay without a query vs truncation at 0.85, with both prompts' tokens;
 * 3. units of strong messages still carried after each of five recompaction generations.
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * Each conversation is replayed turn by turn through `runTurn` as in bench/token-savings.ts.
 * Then, on the final state:
 *
 * - **With a query.** Each question is the query of a context read with the recall budget a turn
 *   would get (`min(recallMaxTokens, 0.85 x window - prompt)`); the prompt is the context block
 *   (summary + `## Recalled From History`) plus the active messages. Baseline: the newest turns that
 *   fit 0.85 x window plus the 3 best BM25 matches among the older turns (the service's own index).
 * - **Without a query.** The final replay (block + active messages) against truncation at 0.85.
 * - **Along the replay.** The final state is one point of the sawtooth: where the last fold fell
 *   decides much of it (a fold three turns before the end leaves a small replay). So both
 *   comparisons are also summed over snapshots, every 10th turn from the 100th plus the final state
 *   (119 snapshots in all), each with the questions whose answer is already in the transcript so far
 *   (3,437 answers to find). These sums move by a few answers between variants where the final
 *   state moves by ten; they are what the defaults rest on. The bench also counts the
 *   compactions of the replay (each is one summarizer call or more).
 * - **Generations.** The first 40 turns are appended with the QA evidence turns tagged strong and
 *   folded with EMERGENCY (strong messages fold only there); four more blocks of 40 untagged turns
 *   are appended and folded in turn. After each fold: the share of the salient units of the strong
 *   messages the first fold archived that the summary still carries word for word.
 * - **Before and after in one run.** `--baseline <git ref>` (`BENCH_BASELINE_REF`) replays the same
 *   conversations through that commit's service code too (bench/support/service-code.ts), each
 *   table's rows side by side; the generations run this tree's code only. `BENCH_FIDELITY_DETAIL=1`
 *   adds to results.json, per snapshot, the questions each prompt carried and the block, to
 *   compare two codes answer by answer.
 */
import type { Message } from "../core/domain/model.js";
import { summaryBudgetFor } from "../core/domain/summarizer-fit.js";
import { DEFAULT_TUNABLES, tunablesFromEnv } from "../core/domain/tunables.js";
import { GENERATION_TURNS, measureGenerations, type GenerationResult } from "./fidelity-generations.js";
import { addSnapshot, DETAIL, measureState, type SnapshotDetail, type SnapshotSums } from "./fidelity-state.js";
import { type BenchContext, envInts, repoRoot, requireEndpoint } from "./support/context.js";
import { freshTable } from "./support/dynamo.js";
import { depsFor, strengthVariant } from "./support/fidelity-deps.js";
import { conversationsOrBuiltIn } from "./support/generated-conversation.js";
import { answered, joinConversations, type LocomoConversation } from "./support/locomo.js";
import type { SectionResult, Table, Target } from "./support/report.js";
import { loadServiceCode, withCheckout, type ServiceCode } from "./support/service-code.js";
import { fmt, mean, pct, sum, times } from "./support/stats.js";

/** The summary budget of a fold at `window`: the tunables' (`SUMMARY_WINDOW_SHARE` set in the environment compares shares). */
function summaryBudget(window: number): number {
  return summaryBudgetFor(tunablesFromEnv({ SUMMARY_WINDOW_SHARE: process.env.SUMMARY_WINDOW_SHARE ?? "" }), window);
}

interface QaResult {
  conversation: string;
  /** The service code: "after" (this tree) or the baseline's label. */
  code: string;
  window: number;
  questions: number;
  oursWithQuery: number;
  baselineWithQuery: number;
  oursQueryTokens: number[];
  baselineQueryTokens: number[];
  oursFinal: number;
  truncationFinal: number;
  oursFinalTokens: number;
  truncationFinalTokens: number;
  /** Compactions committed during the replay (one summarizer call or more each). */
  folds: number;
  /** The same counts summed over the snapshots along the replay ({@link SNAPSHOT_EVERY}). */
  snapshots: SnapshotSums;
  /** `BENCH_FIDELITY_DETAIL=1`: per snapshot, to compare codes answer by answer. */
  detail?: SnapshotDetail[];
}

/**
 * The final state is one point of the sawtooth (where the last fold fell decides much of it), so
 * the same comparisons are also summed over snapshots: every 10th turn from the 100th, with the
 * questions whose answer is already in the transcript so far.
 */
const SNAPSHOT_FROM = 100;
const SNAPSHOT_EVERY = 10;

async function measureConversation(ctx: BenchContext, endpoint: string, conv: LocomoConversation, window: number, code: ServiceCode): Promise<QaResult> {
  const started = performance.now();
  const t = await freshTable(endpoint, `fid-${window}`);
  const store = code.createDynamoStore({ client: t.client, tableName: t.tableName });
  let now = conv.turns[0]!.at;
  const deps = depsFor(store, { now: () => new Date(now.getTime()) }, code);
  const key = { tenantId: "bench", processId: `${conv.id}-${window}` };
  await store.upsertProcess(key.tenantId, { processId: key.processId, projectId: "locomo" }, now.toISOString());

  let block = "";
  let active: Message[] = [];
  const texts = conv.turns.map((turn) => turn.text);
  const questions = answered(conv);
  const snapshots: SnapshotSums = { questions: 0, oursWithQuery: 0, baselineWithQuery: 0, oursReplay: 0, truncation: 0, count: 0, oursTokens: 0, truncationTokens: 0 };
  let folds = 0;
  const detail: SnapshotDetail[] = [];
  const keep = (turns: number, at: Awaited<ReturnType<typeof measureState>>) => {
    if (DETAIL) detail.push({ turns, replay: at.found.replay, withQuery: at.found.withQuery, block, active: active.length });
  };
  for (const [i, turn] of conv.turns.entries()) {
    now = turn.at;
    const promptChars = block.length + sum(active.map((m) => m.content.length)) + turn.text.length;
    const result = await code.runTurn(deps, key, {
      model: { contextWindow: window },
      prompt: { chars: promptChars },
      message: { role: turn.speaker === conv.speakerA ? "USER" : "ASSISTANT", content: turn.text },
    });
    block = result.context.block;
    active = result.messages;
    if (result.compaction.compacted) folds++;
    if (i + 1 >= SNAPSHOT_FROM && (i + 1) % SNAPSHOT_EVERY === 0 && i + 1 < texts.length) {
      const at = await measureState(code, deps, key, window, { texts: texts.slice(0, i + 1), questions, block, active });
      addSnapshot(snapshots, at);
      keep(i + 1, at);
    }
  }
  const final = await measureState(code, deps, key, window, { texts, questions, block, active });
  addSnapshot(snapshots, final);
  keep(texts.length, final);
  ctx.log(`fidelity: ${code.label} ${conv.id} @ ${window}: ${conv.turns.length} turns, ${final.questions} questions in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const { found: _found, ...counts } = final;
  return { conversation: conv.id, code: code.label, window, ...counts, folds, snapshots, ...(DETAIL ? { detail } : {}) };
}

export async function runFidelity(ctx: BenchContext): Promise<SectionResult> {
  const endpoint = requireEndpoint(ctx);
  const { conversations: all, locomo, source } = conversationsOrBuiltIn();
  const command = "LOCOMO_DIR=<folder with conv-*.json> npm run bench -- --only fidelity";
  // BENCH_FIDELITY_JOIN=1: the conversations back to back as one session, long enough (~47k tokens)
  // to fill a 32k window, where the summary budget is at its 4,000-token cap as at 128k.
  const conversations = process.env.BENCH_FIDELITY_JOIN === "1" ? [joinConversations(all)] : ctx.quick ? all.slice(0, 1) : all;
  const windows = envInts("BENCH_WINDOWS", [4_000, 8_000, 16_000]);
  const replayAll = async (codes: ServiceCode[]) => {
    const out: QaResult[] = [];
    for (const window of windows) out.push(...(await Promise.all(codes.flatMap((code) => conversations.map((c) => measureConversation(ctx, endpoint, c, window, code))))));
    return out;
  };
  const after = await loadServiceCode(repoRoot, "after");
  const baselineRef = process.env.BENCH_BASELINE_REF?.trim();
  const results = baselineRef
    ? await withCheckout(baselineRef, async (checkout) => replayAll([after, await loadServiceCode(checkout.root, `before (${checkout.commit})`)]))
    : await replayAll([after]);
  const codes = [...new Set(results.map((r) => r.code))];
  // BENCH_FIDELITY_GENERATIONS=0 skips the generations (e.g. for a fold-target run, whose partial
  // EMERGENCY folds are not what that measurement is about).
  const generations =
    process.env.BENCH_FIDELITY_GENERATIONS === "0" ? [] : await Promise.all(conversations.map((c) => measureGenerations(endpoint, c)));

  const byWindow = windows.flatMap((window) => codes.map((code) => ({ window, code }))).map(({ window, code }) => {
    const rs = results.filter((r) => r.window === window && r.code === code);
    const s = (pick: (r: QaResult) => number) => sum(rs.map(pick));
    return {
      window,
      code,
      questions: s((r) => r.questions),
      oursWithQuery: s((r) => r.oursWithQuery),
      baselineWithQuery: s((r) => r.baselineWithQuery),
      oursQueryTokens: mean(rs.flatMap((r) => r.oursQueryTokens)),
      baselineQueryTokens: mean(rs.flatMap((r) => r.baselineQueryTokens)),
      oursFinal: s((r) => r.oursFinal),
      truncationFinal: s((r) => r.truncationFinal),
      oursFinalTokens: mean(rs.map((r) => r.oursFinalTokens)),
      truncationFinalTokens: mean(rs.map((r) => r.truncationFinalTokens)),
      folds: s((r) => r.folds),
      snapshots: {
        questions: s((r) => r.snapshots.questions),
        oursWithQuery: s((r) => r.snapshots.oursWithQuery),
        baselineWithQuery: s((r) => r.snapshots.baselineWithQuery),
        oursReplay: s((r) => r.snapshots.oursReplay),
        truncation: s((r) => r.snapshots.truncation),
        count: s((r) => r.snapshots.count),
        oursTokens: s((r) => r.snapshots.oursTokens),
        truncationTokens: s((r) => r.snapshots.truncationTokens),
      },
    };
  });
  const k = (w: number) => `${fmt(w / 1000, w % 1000 === 0 ? 0 : 1)}k`;
  // A row's window, with its code when a baseline runs beside this tree's.
  const row = (w: { window: number; code: string }) => (codes.length > 1 ? `${k(w.window)} ${w.code}` : k(w.window));
  const genMean = (pick: (g: GenerationResult) => number[], i: number) => mean(generations.map((g) => pick(g)[i]!));

  const tables: Table[] = [
    {
      title: "QA answers in the prompt when the question is the turn's query (verbatim answers only)",
      columns: ["window", "questions", "ours: summary + recall + active", "truncation 0.85 + BM25 top 3", "ours / baseline", "mean prompt tokens ours / baseline"],
      rows: byWindow.map((w) => [
        row(w),
        fmt(w.questions),
        `${fmt(w.oursWithQuery)} (${pct(w.oursWithQuery / w.questions)})`,
        `${fmt(w.baselineWithQuery)} (${pct(w.baselineWithQuery / w.questions)})`,
        times(w.oursWithQuery / Math.max(1, w.baselineWithQuery), 2),
        `${fmt(w.oursQueryTokens)} / ${fmt(w.baselineQueryTokens)}`,
      ]),
    },
    {
      title: "QA answers in the final replay without a query",
      columns: ["window", "questions", "ours", "truncation 0.85", "ours / truncation", "final prompt tokens ours / truncation (mean per conversation)"],
      rows: byWindow.map((w) => [
        row(w),
        fmt(w.questions),
        fmt(w.oursFinal),
        fmt(w.truncationFinal),
        times(w.oursFinal / Math.max(1, w.truncationFinal), 2),
        `${fmt(w.oursFinalTokens)} / ${fmt(w.truncationFinalTokens)}`,
      ]),
    },
    {
      title: `The same along the replay: summed over snapshots every ${SNAPSHOT_EVERY} turns from turn ${SNAPSHOT_FROM} and the final state (questions whose answer is in the transcript so far)`,
      columns: ["window", "answers to find", "with query: ours / baseline", "ratio", "replay without query: ours / truncation 0.85", "ratio", "mean replay tokens ours / truncation", "compactions in the replay"],
      rows: byWindow.map((w) => [
        row(w),
        fmt(w.snapshots.questions),
        `${fmt(w.snapshots.oursWithQuery)} / ${fmt(w.snapshots.baselineWithQuery)}`,
        times(w.snapshots.oursWithQuery / Math.max(1, w.snapshots.baselineWithQuery), 2),
        `${fmt(w.snapshots.oursReplay)} / ${fmt(w.snapshots.truncation)}`,
        times(w.snapshots.oursReplay / Math.max(1, w.snapshots.truncation), 2),
        `${fmt(w.snapshots.oursTokens / Math.max(1, w.snapshots.count))} / ${fmt(w.snapshots.truncationTokens / Math.max(1, w.snapshots.count))}`,
        fmt(w.folds),
      ]),
    },
    ...(generations.length === 0
      ? []
      : [
          {
            title: `Units of strong messages carried over five recompaction generations (${GENERATION_TURNS} turns per generation, EMERGENCY folds, QA evidence turns of generation 1 tagged strong)`,
            columns: ["generation", `all units of strong messages (${sum(generations.map((g) => g.units))})`, `required units (top 25; ${sum(generations.map((g) => g.requiredUnits))})`],
            rows: [0, 1, 2, 3, 4].map((i) => [String(i + 1), pct(genMean((g) => g.all, i)), pct(genMean((g) => g.required, i))]),
          },
        ]),
  ];
  const ours = byWindow.filter((w) => w.code === "after");
  const before = (w: (typeof byWindow)[number]) => byWindow.find((b) => b.window === w.window && b.code !== "after");
  const targets: Target[] = [
    ...ours.map((w) => ({
      name: `${k(w.window)}: answers in the prompt with the question as query vs truncation 0.85 + BM25 top 3`,
      target: ">= 1.2x",
      measured: `${w.oursWithQuery} vs ${w.baselineWithQuery} (${times(w.oursWithQuery / Math.max(1, w.baselineWithQuery), 2)})`,
      met: w.oursWithQuery >= 1.2 * w.baselineWithQuery,
    })),
    ...ours.map((w) => ({
      name: `${k(w.window)}: answers in the final replay vs truncation 0.85`,
      target: ">= truncation",
      measured: `${w.oursFinal} vs ${w.truncationFinal}`,
      met: w.oursFinal >= w.truncationFinal,
    })),
    // With a baseline: along the replay (the sums the defaults rest on), with and without a query.
    ...ours.flatMap((w) => {
      const b = before(w);
      if (!b) return [];
      return [
        { name: `${k(w.window)}: answers along the replay without a query vs ${b.code}`, target: ">= before", measured: `${w.snapshots.oursReplay} vs ${b.snapshots.oursReplay}`, met: w.snapshots.oursReplay >= b.snapshots.oursReplay },
        { name: `${k(w.window)}: answers along the replay with a query vs ${b.code}`, target: ">= before", measured: `${w.snapshots.oursWithQuery} vs ${b.snapshots.oursWithQuery}`, met: w.snapshots.oursWithQuery >= b.snapshots.oursWithQuery },
      ];
    }),
    ...(generations.length === 0
      ? []
      : [
          {
            name: "strong units carried after five generations (all units)",
            target: ">= 95%",
            measured: `${pct(genMean((g) => g.all, 4))} (required top 25: ${pct(genMean((g) => g.required, 4))})`,
            met: genMean((g) => g.all, 4) >= 0.95,
          },
        ]),
  ];
  return {
    id: "fidelity",
    title: `Fidelity on ${locomo ? "LoCoMo" : "the built-in generated"} conversations (chars/4)`,
    command,
    tables,
    targets,
    notes: [
      `Conversations: ${conversations.map((c) => `${c.id} (${c.turns.length} turns)`).join(", ")} (${source}); replayed as in the token-savings section (offline summarizer, folds in the turn, strength analyzer: ${strengthVariant()}, foldTarget ${process.env.COMPACTION_FOLD_TARGET ?? DEFAULT_TUNABLES.foldTarget}, foldMinRoomTokens ${process.env.COMPACTION_FOLD_MIN_ROOM_TOKENS ?? DEFAULT_TUNABLES.foldMinRoomTokens}, other tunables default; summary budget ${windows.map((w) => `${summaryBudget(w)} at ${k(w)}`).join(", ")}; recallMaxTokens ${process.env.RECALL_MAX_TOKENS ?? DEFAULT_TUNABLES.recallMaxTokens}).`,
      "With a query: after the whole conversation, each QA question whose answer is verbatim in the transcript is the query of a context read with the recall budget a turn would get (recallMaxTokens, never past the hard threshold); the prompt is the context block + the active messages. Baseline: the newest turns that fit 0.85 x window, plus the 3 best BM25 matches (the service's own index) among the older turns.",
      "Generations: the strong units are the salient units (names, numbers, dates, identifiers, quotes) of the strong messages generation 1 folded; 'required' is the 25 most mentioned, which the quality gate requires and later folds carry forward.",
    ],
    data: { windows, results, byWindow, generations },
  };
}
