/**
 * The fold pipeline's modules form no import cycle, type-only imports included
 * (docs/compaction.md, "Where the code lives"): planning (core/domain) is read by summarizing, which
 * is read by the paths that write (commit, worker, prepared commit), never the other way round.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const core = path.join(repoRoot, "core");

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourcesUnder(full);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** Every module of core/ and the modules of core/ it imports (`./x.js` names `./x.ts`). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourcesUnder(core)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith("."))
      .map((spec) => path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts"));
    graph.set(path.relative(repoRoot, file), targets.map((t) => path.relative(repoRoot, t)));
  }
  return graph;
}

/** The modules reachable from `start` (itself excluded unless a cycle leads back to it). */
function reachable(graph: Map<string, string[]>, start: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(graph.get(start) ?? [])];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(graph.get(next) ?? []));
  }
  return seen;
}

const PIPELINE = [
  "core/domain/mode-policy.ts",
  "core/domain/fold-plan.ts",
  "core/domain/fold-size.ts",
  "core/domain/selector.ts",
  "core/domain/mode.ts",
  "core/services/summary-fields.ts",
  "core/services/summarize.ts",
  "core/services/fold-pipeline.ts",
  "core/services/commit.ts",
  "core/services/prepared-commit.ts",
  "core/services/compaction.ts",
  "core/services/turn-compaction.ts",
  "core/services/manual-compaction.ts",
  "core/services/range-compaction.ts",
  "core/services/worker.ts",
];

describe("the fold pipeline has no import cycle", () => {
  const graph = importGraph();
  it.each(PIPELINE)("%s does not import itself back", (module) => {
    expect(graph.has(module)).toBe(true);
    expect(reachable(graph, module).has(module)).toBe(false);
  });
});
