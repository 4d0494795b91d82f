/**
 * `npm run chaos -- --seed N --turns M`: the seeded reliability harness (tools/chaos/).
 * Starts DynamoDB Local (stopped again at the end, on error and on Ctrl-C), runs the plan of the
 * seed against the real store and services with faults injected, checks every invariant and
 * prints a summary whose last line is exactly
 *
 *   chaos: seed S, N operations, F faults, V violations
 *
 * The exit code is 1 when V > 0. The same seed runs the same operations with the same faults
 * and stalls (the interleaving of concurrent calls varies); `--plan-only` prints the plan's
 * digest; `--no-stalls` holds no call (the plan of the seed from before stalls existed).
 *
 *   npm run chaos                               seed 1, 300 operations (~1 minute)
 *   npm run chaos -- --seed 42 --turns 2000     the long run of docs/reliability.md
 *   npm run chaos -- --endpoint http://127.0.0.1:8000   use a running DynamoDB Local
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startDynamoLocal, type DynamoLocal } from "../local/dynamodb-local.js";
import { formatReport, runChaos } from "../tools/chaos/harness.js";
import { planChaos } from "../tools/chaos/plan.js";

const { values: args } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    turns: { type: "string", default: "300" },
    engines: { type: "string" },
    "lease-ms": { type: "string" },
    "check-every": { type: "string" },
    endpoint: { type: "string" },
    json: { type: "string" },
    "plan-only": { type: "boolean", default: false },
    "no-stalls": { type: "boolean", default: false },
    quiet: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (args.help) {
  console.log(`usage: npm run chaos -- [--seed N] [--turns M] [--engines E] [--lease-ms MS] [--check-every K]
                        [--no-stalls] [--endpoint URL] [--json FILE] [--plan-only] [--quiet]`);
  process.exit(0);
}

const int = (name: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be an integer from ${min} to ${max}, got '${value}'`);
    process.exit(2);
  }
  return n;
};
const seed = int("seed", args.seed, 0, 2 ** 32 - 1)!;
const turns = int("turns", args.turns, 1)!;
const engines = int("engines", args.engines, 2);
const leaseMs = int("lease-ms", args["lease-ms"], 50);
const checkEvery = int("check-every", args["check-every"], 1) ?? (turns > 1000 ? 2 : 1);
const stalls = !args["no-stalls"];

if (args["plan-only"]) {
  const plan = planChaos({ seed, turns, stalls, ...(engines ? { engines } : {}), ...(leaseMs ? { leaseMs } : {}) });
  console.log(`chaos plan: seed ${plan.seed}, ${plan.turns} operations over ${plan.engines.length} engines, digest ${plan.digest}`);
  process.exit(0);
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
  const report = await runChaos({
    seed,
    turns,
    endpoint,
    checkEvery,
    stalls,
    ...(engines ? { engines } : {}),
    ...(leaseMs ? { leaseMs } : {}),
    ...(args.quiet ? {} : { progress: (line: string) => console.log(line) }),
  });
  if (args.json) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
  for (const line of formatReport(report)) console.log(line);
  exitCode = report.violations.length > 0 ? 1 : 0;
} catch (e) {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  exitCode = 2;
} finally {
  await stop();
}
process.exit(exitCode);
