/**
 * `npm run bench`: runs every benchmark section in one process, side by side, and prints a table
 * per section plus the targets met or missed. DynamoDB Local is started here (and stopped again,
 * also on error or Ctrl-C); each section makes a fresh table in it (bench/support/dynamo.ts).
 * bench/search-recall.ts, when present, runs as a child step.
 *
 *   npm run bench                          default run (under 5 minutes on 2 cores, docs/benchmarks.md)
 *   npm run bench -- --full                also the long sections (the fidelity sweep) and larger repetitions
 *   BENCH_QUICK=1 npm run bench            smaller sizes, ~1-minute smoke run (or --quick)
 *   npm run bench -- --only hot-path,cold-start   any sections, long ones included
 *   npm run bench -- --out test-artifacts/bench   where results.json / results.md go
 *   npm run bench -- --baseline main       background-compaction also against that commit's code, side by side
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startDynamoLocal, type DynamoLocal } from "../local/dynamodb-local.js";
import { runBackgroundCompaction } from "./background-compaction.js";
import { runAgentLoop } from "./agent-loop.js";
import { runAgentEvidence } from "./agent-evidence.js";
import { runColdStart } from "./cold-start.js";
import { runCompactionCost } from "./compaction-cost.js";
import { runDataPortability } from "./data-portability.js";
import { runHotPath } from "./hot-path.js";
import { runLinearText } from "./linear-text.js";
import { runNativeContent } from "./native-content.js";
import { runOfflineSummary } from "./offline-summary.js";
import { runPrefixStability } from "./prefix-stability.js";
import { runProviderFolds } from "./provider-folds.js";
import { type BenchContext, repoRoot } from "./support/context.js";
import {
  renderSectionMarkdown,
  renderSectionText,
  renderTableMarkdown,
  renderTableText,
  type SectionResult,
  type Table,
} from "./support/report.js";
import { runTokenEstimation } from "./token-estimation.js";
import { runTokenSavings } from "./token-savings.js";
import { runFidelity } from "./fidelity.js";

interface Section {
  id: string;
  needsDynamo: boolean;
  /** Runs only with --full or when named by --only: it alone would take the default run past its budget. */
  long?: true;
  run(ctx: BenchContext): Promise<SectionResult>;
}

/** CPU-bound sections first, while no JVM shares the cores; then the DynamoDB Local ones. */
const SECTIONS: Section[] = [
  { id: "token-estimation", needsDynamo: false, run: runTokenEstimation },
  { id: "offline-summary", needsDynamo: false, run: runOfflineSummary },
  { id: "cold-start", needsDynamo: false, run: runColdStart },
  { id: "hot-path", needsDynamo: true, run: runHotPath },
  { id: "compaction-cost", needsDynamo: true, run: runCompactionCost },
  { id: "token-savings", needsDynamo: true, run: runTokenSavings },
  { id: "background-compaction", needsDynamo: true, run: runBackgroundCompaction },
  { id: "fidelity", needsDynamo: true, long: true, run: runFidelity },
  { id: "agent-loop", needsDynamo: true, long: true, run: runAgentLoop },
  { id: "agent-evidence", needsDynamo: true, long: true, run: runAgentEvidence },
  { id: "linear-text", needsDynamo: true, run: runLinearText },
  { id: "data-portability", needsDynamo: true, long: true, run: runDataPortability },
  { id: "native-content", needsDynamo: true, run: runNativeContent },
  { id: "provider-folds", needsDynamo: true, run: runProviderFolds },
  { id: "prefix-stability", needsDynamo: true, long: true, run: runPrefixStability },
];
const SEARCH_RECALL = path.join(repoRoot, "bench", "search-recall.ts");
const ALL_IDS = [...SECTIONS.map((s) => s.id), "search-recall"];

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    full: { type: "boolean", default: false },
    only: { type: "string" },
    skip: { type: "string" },
    out: { type: "string", default: "test-artifacts/bench" },
    baseline: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (args.help) {
  console.log(`usage: npm run bench -- [--quick | --full] [--only ${ALL_IDS.join(",")}] [--skip ids] [--out dir] [--baseline <git ref>]
long sections (run with --full or --only): ${SECTIONS.filter((s) => s.long).map((s) => s.id).join(", ")}
env: BENCH_QUICK=1, BENCH_FULL=1, BENCH_HOT_SIZES, BENCH_HOT_RUNS, BENCH_FOLD_SIZES, BENCH_FOLD_RUNS, BENCH_WINDOWS, BENCH_TURNS, BENCH_COLD_RUNS, BENCH_TEXT_SIZES, BENCH_TEXT_RUNS, BENCH_TEXT_FUNCTIONS, BENCH_TEXT_FOLD_SIZES, BENCH_TEXT_FOLD_RUNS, LOCOMO_DIR,
  BENCH_BG_TURNS, BENCH_BG_LOCOMO_TURNS, BENCH_BG_PAUSE_MS, BENCH_PORTABILITY_SIZES, BENCH_NATIVE_RUNS, AGENT_SESSIONS_DIR, BENCH_DYNAMO_START_MS, BENCH_PREFIX_BASELINE (prefix-stability's before), BENCH_BASELINE_REF (= --baseline: background-compaction and fidelity against that commit too),
  BENCH_CLEAR_THRESHOLDS, BENCH_AGENT_STEPS (agent-loop), BENCH_FIDELITY_JOIN, BENCH_FIDELITY_GENERATIONS, BENCH_FIDELITY_DETAIL, BENCH_STRENGTH (fidelity; with any tunable's variable, e.g. SUMMARY_WINDOW_SHARE, COMPACTION_FOLD_TARGET, RECALL_MAX_TOKENS)`);
  process.exit(0);
}

// The background and fidelity sections read the baseline from the environment.
if (args.baseline) process.env.BENCH_BASELINE_REF = args.baseline;

const list = (s: string | undefined) => (s ? s.split(",").map((x) => x.trim()).filter(Boolean) : undefined);
const only = list(args.only);
const skip = list(args.skip) ?? [];
for (const id of [...(only ?? []), ...skip]) {
  if (!ALL_IDS.includes(id)) {
    console.error(`unknown section '${id}'; sections: ${ALL_IDS.join(", ")}`);
    process.exit(2);
  }
}
const wanted = (id: string) => (only ? only.includes(id) : true) && !skip.includes(id);
const flag = (name: string) => ["1", "true", "yes"].includes((process.env[name] ?? "").toLowerCase());
const quick = args.quick || flag("BENCH_QUICK");
const full = !quick && (args.full || flag("BENCH_FULL"));
const selected = SECTIONS.filter((s) => wanted(s.id) && (!s.long || full || only !== undefined));
const runName = quick ? "quick" : full ? "full" : "default";
const runSearchRecall = wanted("search-recall") && existsSync(SEARCH_RECALL);

let dynamo: DynamoLocal | undefined;
let stopping = false;
async function stopDynamo() {
  const d = dynamo;
  dynamo = undefined;
  await d?.stop();
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping DynamoDB Local`);
    void stopDynamo().finally(() => process.exit(130));
  });
}

const log = (message: string) => console.error(`[bench] ${message}`);

async function ensureDynamo(): Promise<string> {
  if (!dynamo) {
    const start = performance.now();
    // On a loaded machine the JVM can take longer than the default 30 s to answer.
    dynamo = await startDynamoLocal({ startTimeoutMs: Number(process.env.BENCH_DYNAMO_START_MS) || 30_000 });
    log(`DynamoDB Local on ${dynamo.endpoint} (${((performance.now() - start) / 1000).toFixed(1)} s to start)`);
  }
  return dynamo.endpoint;
}

/** bench/search-recall.ts (another module's benchmark) in its own process, output passed through. */
function runChild(file: string, endpoint: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", file], {
      cwd: repoRoot,
      stdio: "inherit",
      env: {
        ...process.env,
        ...(quick ? { BENCH_QUICK: "1" } : {}),
        ...(full ? { BENCH_FULL: "1" } : {}),
        ...(endpoint ? { BENCH_DYNAMODB_ENDPOINT: endpoint } : {}),
      },
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const results: SectionResult[] = [];
const failures: Array<{ id: string; error: string }> = [];
const began = performance.now();
log(`${runName} run: ${[...selected.map((s) => s.id), ...(runSearchRecall ? ["search-recall"] : [])].join(", ")}`);

try {
  for (const section of selected) {
    const ctx: BenchContext = { quick, full, log, ...(section.needsDynamo ? { endpoint: await ensureDynamo() } : {}) };
    const start = performance.now();
    log(`${section.id}: started`);
    try {
      const result = await section.run(ctx);
      result.seconds = (performance.now() - start) / 1000;
      results.push(result);
      console.log(`\n${renderSectionText(result)}\n`);
    } catch (e) {
      const error = e instanceof Error ? (e.stack ?? e.message) : String(e);
      failures.push({ id: section.id, error });
      console.error(`[bench] ${section.id} FAILED:\n${error}`);
    }
  }
  if (runSearchRecall) {
    log("search-recall: started (child process)");
    console.log("\n== Search recall (bench/search-recall.ts) ==\n");
    const code = await runChild(SEARCH_RECALL, dynamo?.endpoint);
    if (code !== 0) failures.push({ id: "search-recall", error: `exited with code ${code}` });
  } else if (wanted("search-recall")) {
    log("search-recall: bench/search-recall.ts not present, skipped");
  }
} finally {
  await stopDynamo();
}

const targets = results.flatMap((r) => r.targets.map((t) => ({ section: r.id, ...t })));
const summary: Table = {
  title: "All targets",
  columns: ["section", "target", "goal", "measured", "met"],
  rows: targets.map((t) => [t.section, t.name, t.target, t.measured, t.met ? "yes" : "NO"]),
};
const totalSeconds = (performance.now() - began) / 1000;
if (targets.length > 0) console.log(`\n${renderTableText(summary)}\n`);
console.log(
  `${targets.filter((t) => t.met).length} of ${targets.length} targets met; ${failures.length} section(s) failed; ${totalSeconds.toFixed(0)} s in all.`,
);

const outDir = path.resolve(repoRoot, args.out!);
mkdirSync(outDir, { recursive: true });
const machine = `${cpus()[0]?.model ?? "unknown CPU"} x ${cpus().length}, Node ${process.version}, ${process.platform}`;
writeFileSync(
  path.join(outDir, "results.json"),
  `${JSON.stringify({ at: new Date().toISOString(), run: runName, quick, machine, seconds: totalSeconds, results, failures }, null, 2)}\n`,
);
writeFileSync(
  path.join(outDir, "results.md"),
  [
    `# Benchmark run ${new Date().toISOString()} (${runName})`,
    `Machine: ${machine}. Total ${totalSeconds.toFixed(0)} s.`,
    ...results.map(renderSectionMarkdown),
    ...(targets.length > 0 ? [`### All targets\n\n${renderTableMarkdown(summary)}`] : []),
    ...(failures.length ? [`### Failures\n\n${failures.map((f) => `- ${f.id}: ${f.error.split("\n")[0]}`).join("\n")}`] : []),
  ].join("\n\n") + "\n",
);
log(`results: ${path.relative(repoRoot, outDir)}/results.{json,md}`);
process.exitCode = failures.length > 0 ? 1 : 0;
