/**
 * `npm run check:interleavings`: the interleaving checker (tools/interleavings/). Starts DynamoDB
 * Local (stopped again at the end, on error and on Ctrl-C), runs each scenario's actors under many
 * schedules, one DynamoDB call at a time, checks the stored data after each, and prints one line
 * per scenario and a last line that is exactly
 *
 *   interleavings: N schedules over S scenarios, F failing (T s, R schedules/s)
 *
 * The exit code is 1 when F > 0 (2 when the checker itself failed). A failing schedule is printed
 * in its replayable form; `--replay` runs it again step by step.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createDocumentClient } from "../core/adapters/dynamodb/client.js";
import { createTable } from "../core/adapters/dynamodb/create-table.js";
import { startDynamoLocal, type DynamoLocal } from "../local/dynamodb-local.js";
import { exploreScenario, replaySchedule, type ScenarioReport } from "../tools/interleavings/checker.js";
import { failureLines, replayLines, scenarioLine, summaryLine } from "../tools/interleavings/report.js";
import { SCENARIOS, scenarioById } from "../tools/interleavings/scenarios.js";

const DEFAULT_BUDGET = 1_200;
const DEFAULT_PARALLEL = 4;

const { values: args } = parseArgs({
  options: {
    scenario: { type: "string" },
    budget: { type: "string" },
    schedules: { type: "string" },
    seed: { type: "string", default: "1" },
    replay: { type: "string" },
    parallel: { type: "string" },
    "random-share": { type: "string" },
    "keep-going": { type: "boolean", default: false },
    endpoint: { type: "string" },
    json: { type: "string" },
    quiet: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (args.help) {
  console.log(`usage: npm run check:interleavings -- [--scenario S1,S3] [--budget N] [--seed N] [--parallel P]
                                     [--random-share F] [--keep-going] [--endpoint URL] [--json FILE] [--quiet]
       npm run check:interleavings -- --scenario S1 --replay 'walker*3,revert'

Runs 2-3 real service calls per scenario against DynamoDB Local, one DynamoDB call at a time, under
every schedule (fewest preemptions first) until --budget schedules per scenario ran (default
${DEFAULT_BUDGET}; a scenario whose every schedule ran stops sooner), the last --random-share of them
random (default 0.25), and checks the stored data after each. --parallel schedules run at once
(default ${DEFAULT_PARALLEL}), each on its own process. --keep-going: do not stop a scenario at its
first failing schedule. --replay runs one schedule of one scenario and prints its steps.

The defaults run ${SCENARIOS.length} scenarios, about 11,000 schedules, in 8 to 10 minutes on the 2-core
development machine (tools/interleavings/README.md, "The interleaving checker").

scenarios:
${SCENARIOS.map((s) => `  ${s.id.padEnd(4)} ${s.title}`).join("\n")}`);
  process.exit(0);
}

function int(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} must be an integer of at least ${min}, got '${value}'`);
    process.exit(2);
  }
  return n;
}

const budget = int("budget", args.budget ?? args.schedules, 1) ?? DEFAULT_BUDGET;
const seed = int("seed", args.seed, 0)!;
const parallel = int("parallel", args.parallel, 1) ?? DEFAULT_PARALLEL;
const randomShare = args["random-share"] === undefined ? undefined : Number(args["random-share"]);
if (randomShare !== undefined && !(randomShare >= 0 && randomShare <= 1)) {
  console.error(`--random-share must be a number from 0 to 1, got '${args["random-share"]}'`);
  process.exit(2);
}
let scenarios;
try {
  scenarios = args.scenario ? args.scenario.split(",").map((id) => scenarioById(id.trim())) : [...SCENARIOS];
} catch (e) {
  console.error((e as Error).message);
  process.exit(2);
}
if (args.replay !== undefined && scenarios.length !== 1) {
  console.error("--replay needs exactly one --scenario");
  process.exit(2);
}

let engine: DynamoLocal | undefined;
const stop = async () => {
  await engine?.stop();
  engine = undefined;
};
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping DynamoDB Local`);
    void stop().finally(() => process.exit(130));
  });
}

let exitCode = 0;
try {
  let endpoint = args.endpoint;
  if (!endpoint) {
    engine = await startDynamoLocal();
    endpoint = engine.endpoint;
  }
  const client = createDocumentClient({ endpoint });
  const world = { client, tableName: `interleavings-${Date.now().toString(36)}` };
  await createTable(client, world.tableName);

  if (args.replay !== undefined) {
    const result = await replaySchedule(world, scenarios[0]!, args.replay);
    console.log(`${scenarios[0]!.id}: ${scenarios[0]!.title}`);
    for (const line of replayLines(result)) console.log(line);
    exitCode = result.violations.length > 0 ? 1 : 0;
  } else {
    const started = Date.now();
    const reports: ScenarioReport[] = [];
    for (const scenario of scenarios) {
      const report = await exploreScenario(world, scenario, {
        budget,
        seed,
        parallel,
        stopAtFailure: !args["keep-going"],
        ...(randomShare !== undefined ? { randomShare } : {}),
      });
      reports.push(report);
      if (!args.quiet) for (const line of [scenarioLine(report), ...failureLines(report)]) console.log(line);
    }
    if (args.json) writeFileSync(args.json, `${JSON.stringify(reports, null, 2)}\n`);
    console.log(summaryLine(reports, Date.now() - started));
    exitCode = reports.some((r) => r.failures > 0) ? 1 : 0;
  }
} catch (e) {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  exitCode = 2;
} finally {
  await stop();
}
process.exit(exitCode);
