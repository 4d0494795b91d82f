/**
 * Measures the code keeps (docs/architecture.md "Changing things"): no import cycle among the
 * production modules, no production file over 350 lines, and no module of 25 lines or fewer whose
 * only job is one function used in one place (such a function belongs in the module that uses it).
 * Reads the repository's files and nothing else.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The production code: everything the service, its client, its stacks and its tools run. */
const PRODUCTION_DIRS = ["core", "functions", "local", "client", "stacks", "tools", "bench"];
/** Other code that uses production modules (a use there counts as a use). */
const OTHER_USERS = ["scripts", "sst.config.ts"];
const SKIP = new Set(["node_modules", "dist", "cdk.out", ".sst"]);
const MAX_LINES = 350;
const TINY_LINES = 25;

function sourcesUnder(rel: string): string[] {
  const full = path.join(repoRoot, rel);
  let entries;
  try {
    entries = readdirSync(full, { withFileTypes: true });
  } catch {
    return rel.endsWith(".ts") ? [rel] : [];
  }
  return entries.flatMap((e) => {
    if (e.name.startsWith(".") || SKIP.has(e.name)) return [];
    const child = path.posix.join(rel, e.name);
    if (e.isDirectory()) return sourcesUnder(child);
    return /\.(ts|mts)$/.test(e.name) && !e.name.endsWith(".d.ts") ? [child] : [];
  });
}

interface Module {
  file: string;
  lines: number;
  /** Repository files this module imports (runtime and type-only, static and dynamic). */
  imports: string[];
  /** Names of the values it exports, and which of them are functions. */
  valueExports: string[];
  functionExports: string[];
}

/** The repository file a relative specifier lands on (`./x.js` is written for `./x.ts`). */
function resolve(from: string, spec: string, known: Set<string>): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  const stem = base.replace(/\.(js|mjs|ts|mts)$/, "");
  for (const candidate of [`${stem}.ts`, `${stem}.mts`, `${stem}/index.ts`, base]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

function exportsOf(source: ts.SourceFile): { values: string[]; functions: string[] } {
  const values: string[] = [];
  const functions: string[] = [];
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && exported(statement)) {
      const name = statement.name?.text ?? "default";
      values.push(name);
      functions.push(name);
    } else if (ts.isVariableStatement(statement) && exported(statement)) {
      for (const d of statement.declarationList.declarations) {
        if (!ts.isIdentifier(d.name)) continue;
        values.push(d.name.text);
        const init = d.initializer;
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) functions.push(d.name.text);
      }
    } else if ((ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement)) && exported(statement)) {
      values.push(statement.name?.text ?? "default");
    } else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) {
      values.push("(re-export)");
    } else if (ts.isExportAssignment(statement)) {
      values.push("default");
    }
  }
  return { values, functions };
}

function readModules(files: string[]): Map<string, Module> {
  const known = new Set(files);
  const modules = new Map<string, Module>();
  for (const file of files) {
    const text = readFileSync(path.join(repoRoot, file), "utf8");
    const { importedFiles } = ts.preProcessFile(text, true, true);
    const imports = importedFiles.flatMap((f) => resolve(file, f.fileName, known) ?? []);
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const { values, functions } = exportsOf(source);
    const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
    modules.set(file, { file, lines, imports: [...new Set(imports)], valueExports: values, functionExports: functions });
  }
  return modules;
}

/** Every import cycle, reported once per set of files that import each other round (in file order). */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  // Tarjan's strongly connected components: a component of two or more files (or a file importing
  // itself) is a cycle; report one cycle through each such component.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => `import cycle among: ${[...component].sort().join(", ")}`).sort();
}

const production = PRODUCTION_DIRS.flatMap(sourcesUnder).filter((f) => !f.startsWith("client/dist/"));
const users = OTHER_USERS.flatMap(sourcesUnder);
const modules = readModules([...production, ...users]);
const productionSet = new Set(production);

function cycleFindings(): string[] {
  const graph = new Map(production.map((f) => [f, modules.get(f)!.imports.filter((i) => productionSet.has(i))]));
  return importCycles(graph);
}

function longFileFindings(): string[] {
  return production.filter((f) => modules.get(f)!.lines > MAX_LINES).map((f) => `over ${MAX_LINES} lines: ${f} (${modules.get(f)!.lines})`);
}

/**
 * A tiny one-use module: at most 25 lines, its only exported value is one function, and exactly one
 * other module (production code or scripts; tests do not count) imports it.
 */
function tinyModuleFindings(): string[] {
  const importers = new Map<string, string[]>();
  for (const m of modules.values()) {
    for (const target of m.imports) importers.set(target, [...(importers.get(target) ?? []), m.file]);
  }
  return production.flatMap((f) => {
    const m = modules.get(f)!;
    const users = (importers.get(f) ?? []).filter((u) => u !== f);
    const oneFunction = m.valueExports.length === 1 && m.functionExports.length === 1;
    return m.lines <= TINY_LINES && oneFunction && users.length === 1
      ? [`tiny one-use module: ${f} (${m.lines} lines, ${m.functionExports[0]}, used only by ${users[0]})`]
      : [];
  });
}

describe("structure measures", () => {
  it("reads the production tree", () => {
    for (const expected of ["core/domain/model.ts", "functions/plain-routes.ts", "bench/run.ts", "tools/invariants.ts"]) {
      expect(production).toContain(expected);
    }
    expect(modules.get("core/services/turn.ts")!.imports.length).toBeGreaterThan(0);
  });

  it("has no import cycle among production modules (type-only imports count)", () => {
    expect(cycleFindings()).toEqual([]);
  });

  it(`has no production file over ${MAX_LINES} lines`, () => {
    expect(longFileFindings()).toEqual([]);
  });

  it(`has no module of ${TINY_LINES} lines or fewer holding one function used in one place`, () => {
    expect(tinyModuleFindings()).toEqual([]);
  });

  it("finds a cycle through type-only imports and reports each cycle once", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
      ["e.ts", ["e.ts"]],
    ]);
    expect(importCycles(graph)).toEqual(["import cycle among: a.ts, b.ts, c.ts", "import cycle among: e.ts"]);
    const text = `import type { X } from "./b.js";\nexport type { Y } from "./c.js";\nconst z = await import("./d.js");`;
    expect(ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName)).toEqual(["./b.js", "./c.js", "./d.js"]);
  });
});
