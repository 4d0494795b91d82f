/**
 * An agent loop through the real service (DynamoDB Local, offline summarizer): one USER message,
 * then 400 tool call/result pairs with results of 0.5-8 KB (file reads, searches, logs), one turn
 * per pair, at 32k and 128k windows. Today's behaviour (the whole triggering turn protected, no
 * clearing: `foldCurrentTurn: 0` and every tool result kept) runs side by side on the same script.
 *
 * Per run: the largest prompt of any step against the window, steps over the emergency threshold
 * and over the window, summarizer calls, clearing rounds, prompt-cache prefix changes per 100
 * steps, and how many later references to an earlier result still find its content (verbatim in
 * the replay, or by one GET of the cleared message its placeholder names).
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * `npm run bench -- --only agent-loop` or `npm run bench -- --full` (a long section;
 * `BENCH_CLEAR_THRESHOLDS=0.5,0.6,0.7` compares `clearThreshold` values, `BENCH_AGENT_STEPS` sets the length). One USER message, then 400
 * tool call/result pairs, one turn per pair, through the real service (DynamoDB Local, offline
 * summarizer). Results are 0.5-8 KB of seeded text from `read_file`, `grep` and `tail_log`; every 8th
 * call refers to an earlier result (48 references). "Today" is the same service with
 * `foldCurrentTurn: 0` and `keepToolResults: 1000000`: the whole triggering turn stays and nothing
 * is cleared, which is how the service behaved before clearing and in-turn folding. Every step
 * folds in the turn (`COMPACTION_EXECUTION=inline`): the bench runs no worker, so a queued fold would
 * never land. All rows run in one process with the default tunables (a fold at 32k gets a
 * 4,000-token summary budget) and clearing's anchor rule (docs/compaction.md, "Tool-result
 * clearing").
 */
import { createOfflineSummarizer } from "../core/adapters/llm/offline-summarizer.js";
import { silentLog } from "../core/adapters/log.js";
import { createRecordingMetrics } from "../core/adapters/metrics/emf-metrics.js";
import type { Message } from "../core/domain/model.js";
import { DEFAULT_TUNABLES, type TunablesOverride } from "../core/domain/tunables.js";
import type { Summarizer } from "../core/ports/summarizer.js";
import { appendMessage, getMessage } from "../core/services/messages.js";
import { upsertProcess } from "../core/services/processes.js";
import { runTurn } from "../core/services/turn.js";
import { createDeps } from "../core/composition/create-deps.js";
import { type BenchContext, envInt, requireEndpoint } from "./support/context.js";
import { freshTable } from "./support/dynamo.js";
import type { SectionResult, Target } from "./support/report.js";
import { observedStore, prng, syntheticText } from "./support/service.js";
import { fmt } from "./support/stats.js";

const TOOLS = ["read_file", "grep", "tail_log"] as const;

interface Step {
  tool: (typeof TOOLS)[number];
  args: string;
  result: string;
  /** An earlier step whose result this step's call refers to (its needle). */
  refersTo?: number;
}

/** The needle each result carries, so a later reference can check whether its content is reachable. */
const needle = (i: number) => `needle-${i}-${(i * 7919) % 10007}`;

/** The script: the same bytes on every run (seeded). Every 8th call refers to an earlier result. */
export function agentScript(steps: number, seed = 16): Step[] {
  const rand = prng(seed);
  return Array.from({ length: steps }, (_, i) => {
    const tool = TOOLS[Math.floor(rand() * TOOLS.length)]!;
    const bytes = 512 + Math.floor(rand() * (8192 - 512));
    const refersTo = i >= 16 && i % 8 === 0 ? Math.floor(rand() * (i - 4)) : undefined;
    return {
      tool,
      args: JSON.stringify(refersTo !== undefined ? { about: needle(refersTo) } : { path: `src/module${i}.ts` }),
      result: `${needle(i)} ${syntheticText(rand, bytes - 24)}`,
      ...(refersTo !== undefined ? { refersTo } : {}),
    };
  });
}

interface Variant {
  name: string;
  overrides: TunablesOverride;
}

const TODAY: Variant = { name: "today (turn protected, no clearing)", overrides: { foldCurrentTurn: 0, keepToolResults: 1_000_000 } };
const ours = (clearThreshold: number): Variant => ({
  name: `clearing from ${clearThreshold} + in-turn folding`,
  overrides: clearThreshold === DEFAULT_TUNABLES.clearThreshold ? {} : { clearThreshold },
});

/** `BENCH_CLEAR_THRESHOLDS=0.5,0.6,0.7` compares clearThreshold values (how the default was chosen). */
function clearThresholds(): number[] {
  const raw = process.env.BENCH_CLEAR_THRESHOLDS;
  if (!raw?.trim()) return [DEFAULT_TUNABLES.clearThreshold];
  return raw.split(",").map((v) => {
    const n = Number(v.trim());
    if (!(n > 0 && n <= 1)) throw new Error(`BENCH_CLEAR_THRESHOLDS must be numbers in (0, 1], got '${raw}'`);
    return n;
  });
}

interface RunResult {
  variant: string;
  window: number;
  steps: number;
  maxRatio: number;
  overEmergency: number;
  overWindow: number;
  summarizerCalls: number;
  folds: number;
  clearingRounds: number;
  prefixChangesPer100: number;
  references: number;
  inReplay: number;
  byGet: number;
  lost: number;
}

/** The prompt an engine sends, as text: the memory block, then every replayed message. */
function promptText(block: string, messages: readonly Message[]): string {
  return [block, ...messages.map((m) => `${m.role}:${m.content}${m.toolCalls ? JSON.stringify(m.toolCalls) : ""}`)].join("\n");
}

async function runLoop(ctx: BenchContext, script: Step[], window: number, variant: Variant, run: number): Promise<RunResult> {
  const t = await freshTable(requireEndpoint(ctx), `loop${run}`);
  const { store } = observedStore(t);
  const offline = createOfflineSummarizer();
  let summarizerCalls = 0;
  const summarizer: Summarizer = { ...offline, summarize: (input) => ((summarizerCalls += 1), offline.summarize(input)) };
  const metrics = createRecordingMetrics();
  // Every step folds in the turn (as without a worker): the bench runs none, and a queued fold would never land.
  const deps = createDeps({
    env: { COMPACTION_EXECUTION: "inline" },
    store,
    log: silentLog,
    metrics,
    events: { publish: async () => {} },
    summarizerFactory: async () => summarizer,
  });
  const tenantId = "bench";
  const processId = `loop-${run}`;
  const key = { tenantId, processId };
  await upsertProcess(deps, tenantId, processId, { projectId: "bench" });
  await deps.tunables.save(tenantId, undefined, variant.overrides, "2025-01-01T00:00:00.000Z");
  await appendMessage(deps, key, { role: "USER", content: "Go through the repository and fix every failing test; report what you changed." });

  const ids: string[] = [];
  let maxRatio = 0;
  let overEmergency = 0;
  let overWindow = 0;
  let prefixChanges = 0;
  let previous = "";
  let inReplay = 0;
  let byGet = 0;
  let lost = 0;
  let references = 0;
  for (let i = 0; i < script.length; i++) {
    const step = script[i]!;
    await appendMessage(deps, key, { role: "ASSISTANT", content: "", toolCalls: [{ id: `call_${i}`, name: step.tool, arguments: step.args }] });
    const turn = await runTurn(deps, key, {
      model: { contextWindow: window },
      message: { role: "TOOL", content: step.result, toolCallId: `call_${i}` },
    });
    ids.push(turn.messages.find((m) => m.toolCallId === `call_${i}`)?.id ?? "");
    // The prompt the engine now sends: the service's estimate of the replay after this turn.
    const ratio = turn.compaction.tokensAfter / window;
    maxRatio = Math.max(maxRatio, ratio);
    if (ratio >= 0.95) overEmergency++;
    if (ratio > 1) overWindow++;
    const text = promptText(turn.context.block, turn.messages);
    if (previous !== "" && !text.startsWith(previous)) prefixChanges++;
    previous = text;

    if (step.refersTo !== undefined) {
      references++;
      const wanted = needle(step.refersTo);
      const target = turn.messages.find((m) => m.id === ids[step.refersTo!]);
      if (ratio > 1 || !target) lost++; // over the window, or folded into the summary
      else if (target.content.includes(wanted)) inReplay++;
      else {
        // The placeholder names the message: one GET brings the full result back.
        const full = await getMessage(deps, key, target.id);
        if (target.content.includes(`message ${target.id}`) && full.content.includes(wanted)) byGet++;
        else lost++;
      }
    }
  }
  const runs = metrics.runs;
  return {
    variant: variant.name,
    window,
    steps: script.length,
    maxRatio,
    overEmergency,
    overWindow,
    summarizerCalls,
    folds: runs.filter((r) => r.mode !== "clear").length,
    clearingRounds: runs.filter((r) => r.mode === "clear").length,
    prefixChangesPer100: (prefixChanges * 100) / script.length,
    references,
    inReplay,
    byGet,
    lost,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

export async function runAgentLoop(ctx: BenchContext): Promise<SectionResult> {
  const steps = ctx.quick ? 120 : envInt("BENCH_AGENT_STEPS", 400);
  const windows = ctx.quick ? [16_000, 32_000] : [32_000, 128_000];
  const script = agentScript(steps);
  const results: RunResult[] = [];
  let run = 0;
  const variants = [TODAY, ...clearThresholds().map(ours)];
  for (const window of windows) {
    for (const variant of variants) {
      ctx.log(`agent-loop: ${variant.name}, window ${fmt(window)}, ${steps} steps`);
      results.push(await runLoop(ctx, script, window, variant, run++));
    }
  }
  const targets: Target[] = results.filter((r) => r.variant === ours(DEFAULT_TUNABLES.clearThreshold).name).map((r) => ({
    name: `largest prompt of any step at a ${fmt(r.window)} window`,
    target: "below the emergency threshold (0.95)",
    measured: pct(r.maxRatio),
    met: r.overEmergency === 0,
  }));
  return {
    id: "agent-loop",
    title: "Agent loop: one USER message, then tool call/result pairs (DynamoDB Local, offline summarizer)",
    command: `${ctx.quick ? "BENCH_QUICK=1 " : ""}npm run bench -- --only agent-loop`,
    tables: [
      {
        title: `${steps} pairs, results 0.5-8 KB, one turn per pair; every 8th call refers to an earlier result`,
        columns: ["behaviour", "window", "largest prompt", "steps >= 0.95", "steps over window", "summarizer calls", "folds", "clearing rounds", "prefix changes / 100 steps", "references", "in replay", "by one GET", "lost"],
        rows: results.map((r) => [
          r.variant,
          fmt(r.window),
          pct(r.maxRatio),
          fmt(r.overEmergency),
          fmt(r.overWindow),
          fmt(r.summarizerCalls),
          fmt(r.folds),
          fmt(r.clearingRounds),
          r.prefixChangesPer100.toFixed(1),
          fmt(r.references),
          fmt(r.inReplay),
          fmt(r.byGet),
          fmt(r.lost),
        ]),
      },
    ],
    targets,
    notes: [
      "Prompt = the service's own estimate of the replay after each turn (chars/4 + 4 per message), summary included.",
      "A reference counts as in the replay when the result itself is in the prompt verbatim, by one GET when the prompt holds its placeholder (which names its message id), and lost when it was folded into the summary or the prompt is over the window (the model refuses it).",
      "Today's behaviour is the same service with foldCurrentTurn 0 and keepToolResults 1 000 000 (nothing in the turn folds, nothing is cleared).",
    ],
    data: results,
  };
}
