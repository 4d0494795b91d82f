/**
 * Cold start: every Lambda bundled exactly as `sst deploy` bundles it (stacks/bundling.ts, SST's
 * own esbuild), its size, and the time a fresh Node process takes to import it from a folder with
 * no node_modules, next to the import of an empty module (Node's own floor).
 *
 * Method (what docs/benchmarks.md reports, and how):
 *
 * **Setup.**
 * - **Bundles.** Each function is bundled with `productionBuildOptions` from `stacks/bundling.ts`, which
 *   is what `sst deploy` does: ESM, node22, minified, createRequire banner, AWS SDK bundled, the SDK's
 *   credential chain reduced to its environment link. The build uses SST's own esbuild, as
 *   `test/infra/bundle.test.ts` does.
 * - **Imports.** Each bundle is imported 15 times, interleaved, each time in a fresh `node` process
 *   started in a folder without node_modules and with only the function's environment (no credentials).
 * - **Floor.** An empty module is imported the same way.
 * - **Where the bytes come from.** Taken from esbuild's metafile.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { ESBUILD_TARGET, productionBuildOptions } from "../stacks/bundling.js";
import { HANDLERS, type HandlerName } from "../stacks/handlers.js";
import { type BenchContext, bySize, envInt, repoRoot } from "./support/context.js";
import type { SectionResult } from "./support/report.js";
import { fmt, median, ms, pct, percentile, times } from "./support/stats.js";

const run = promisify(execFile);
const require = createRequire(import.meta.url);

/** SST bundles with the esbuild it depends on (as test/infra/bundle.test.ts does); else the project's. */
function loadEsbuild(): typeof import("esbuild") {
  try {
    return createRequire(require.resolve("sst/package.json"))("esbuild") as typeof import("esbuild");
  } catch {
    return require("esbuild") as typeof import("esbuild");
  }
}

/** The functions every request reaches (the HTTP routes that never summarize, the authorizer): docs/benchmarks.md. */
const WEIGHT_TARGET = { kB: 500, importMs: 70 };

const MARK = "@@bench-cold@@ ";
const PROBE = `
const t0 = performance.now();
const m = await import(process.argv[1]);
const t1 = performance.now();
process.stdout.write("\\n" + ${JSON.stringify(MARK)} + JSON.stringify({ importMs: t1 - t0, readyMs: t1, rssMB: process.memoryUsage().rss / 1048576, handler: typeof m.handler }) + "\\n");
`;

interface Probe {
  importMs: number;
  readyMs: number;
  rssMB: number;
  handler: string;
}

async function coldImport(file: string, home: string): Promise<Probe> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", PROBE, pathToFileURL(file).href], {
    cwd: path.dirname(file),
    // Like a Lambda container at init: no credentials, nothing but the function's own settings.
    env: { PATH: process.env.PATH ?? "", AWS_REGION: "eu-west-1", TABLE_NAME: "t", EVENT_BUS_NAME: "b", HOME: home },
    timeout: 60_000,
  });
  const line = stdout.split("\n").find((l) => l.startsWith(MARK));
  if (!line) throw new Error(`no probe result from ${file}:\n${stdout}`);
  return JSON.parse(line.slice(MARK.length)) as Probe;
}

export async function runColdStart(ctx: BenchContext): Promise<SectionResult> {
  const runs = envInt("BENCH_COLD_RUNS", bySize(ctx, { quick: 3, normal: 9, full: 15 }));
  const esbuild = loadEsbuild();
  const out = mkdtempSync(path.join(tmpdir(), "vtm-bench-cold-"));
  try {
    const names = Object.keys(HANDLERS) as HandlerName[];
    const built = new Map<string, { entry: string; file: string; bytes: number; gzip: number; sdkBytes: number; zodBytes: number; llmBytes: number }>();
    for (const name of names) {
      const file = path.join(out, name, "index.mjs");
      const result = await esbuild.build({ ...productionBuildOptions(path.join(repoRoot, HANDLERS[name].entry), file), absWorkingDir: repoRoot });
      const text = readFileSync(file);
      // Where the bytes come from: the AWS SDK (with Smithy and aws-crypto), zod, the LLM SDKs.
      const inputs = Object.values(result.metafile?.outputs ?? {}).flatMap((o) => Object.entries(o.inputs));
      const bytesOf = (re: RegExp) => inputs.filter(([p]) => re.test(p)).reduce((n, [, i]) => n + i.bytesInOutput, 0);
      built.set(name, {
        entry: HANDLERS[name].entry,
        file,
        bytes: statSync(file).size,
        gzip: gzipSync(text).length,
        sdkBytes: bytesOf(/node_modules\/(@aws-sdk|@smithy|@aws-crypto)\//),
        zodBytes: bytesOf(/node_modules\/zod\//),
        llmBytes: bytesOf(/node_modules\/(openai|@anthropic-ai)\//),
      });
    }
    const emptyFile = path.join(out, "empty", "index.mjs");
    mkdirSync(path.dirname(emptyFile), { recursive: true });
    writeFileSync(emptyFile, "export const handler = async () => ({});\n");
    const all = [["(empty module)", emptyFile] as const, ...names.map((n) => [n, built.get(n)!.file] as const)];

    await coldImport(emptyFile, out); // warm the OS file cache once
    const samples = new Map<string, Probe[]>(all.map(([n]) => [n, []]));
    for (let r = 0; r < runs; r++) {
      for (let i = 0; i < all.length; i++) {
        const [name, file] = all[(i + r) % all.length]!;
        const probe = await coldImport(file, out);
        if (probe.handler !== "function") throw new Error(`${name} does not export a handler`);
        samples.get(name)!.push(probe);
      }
    }
    ctx.log(`cold-start: ${runs} fresh processes per bundle`);

    const floor = median(samples.get("(empty module)")!.map((p) => p.importMs));
    const api = median(samples.get("plainRoutes")!.map((p) => p.importMs));
    const rows = all.map(([name]) => {
      const ps = samples.get(name)!;
      const b = built.get(name);
      return {
        name,
        entry: b?.entry ?? "-",
        summarizes: name in HANDLERS ? HANDLERS[name as HandlerName].summarizes : false,
        kB: b ? b.bytes / 1024 : 0,
        gzipKB: b ? b.gzip / 1024 : 0,
        sdkShare: b ? b.sdkBytes / b.bytes : 0,
        zodShare: b ? b.zodBytes / b.bytes : 0,
        llmShare: b ? b.llmBytes / b.bytes : 0,
        importMs: median(ps.map((p) => p.importMs)),
        importP95: percentile(ps.map((p) => p.importMs), 95),
        readyMs: median(ps.map((p) => p.readyMs)),
        rssMB: median(ps.map((p) => p.rssMB)),
      };
    });
    return {
      id: "cold-start",
      title: "Cold start: bundle size and cold import per function",
      command: `${ctx.quick ? "BENCH_QUICK=1 " : ""}npm run bench -- --only cold-start`,
      tables: [
        {
          title: `Production bundles (stacks/bundling.ts: ESM, ${ESBUILD_TARGET}, minified, createRequire banner, AWS SDK bundled); fresh Node ${process.version} per import, median of ${runs}`,
          columns: ["function", "entry", "summarizes", "bundle", "gzip", "share: AWS SDK / zod / LLM SDKs", "import median / p95", "process start -> handler ready", "RSS after import", "import vs plainRoutes"],
          rows: rows.map((r) => [
            r.name,
            r.entry,
            r.name === "(empty module)" ? "-" : r.summarizes ? "yes" : "no",
            r.kB ? `${fmt(r.kB)} kB` : "-",
            r.gzipKB ? `${fmt(r.gzipKB)} kB` : "-",
            r.kB ? `${pct(r.sdkShare, 0)} / ${pct(r.zodShare, 0)} / ${pct(r.llmShare, 0)}` : "-",
            `${ms(r.importMs)} / ${ms(r.importP95)}`,
            ms(r.readyMs),
            `${fmt(r.rssMB, 0)} MB`,
            times(r.importMs / api, 2),
          ]),
        },
      ],
      targets: (["plainRoutes", "authorizer"] as const).flatMap((name) => {
        const r = rows.find((row) => row.name === name)!;
        return [
          { name: `${name}: bundle size`, target: `< ${WEIGHT_TARGET.kB} kB`, measured: `${fmt(r.kB)} kB`, met: r.kB < WEIGHT_TARGET.kB },
          { name: `${name}: cold import, median`, target: `< ${WEIGHT_TARGET.importMs} ms`, measured: ms(r.importMs), met: r.importMs < WEIGHT_TARGET.importMs },
        ];
      }),
      notes: [
        `Import time is measured inside the fresh process (performance.now() around the dynamic import: module parse, evaluation and the composition root's module-scope work); 'process start -> handler ready' adds Node's own start-up. The empty module (${ms(floor)}) is the floor of an import.`,
        "This machine is not a Lambda: the figures compare functions with each other and with the floor; AWS adds its own sandbox start and bills init separately.",
      ],
      data: { runs, rows },
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
