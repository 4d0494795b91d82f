/**
 * Dependencies point into test/, never out of it (README "Code layout"): production code, scripts,
 * benchmarks and tools/ must run without the test suite, so no file outside test/ may import a
 * file inside it. Shared helpers live in tools/ (or bench/support/) and the tests import them.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const testDir = path.join(repoRoot, "test");
const SKIP = new Set(["node_modules", "dist", "test-artifacts", "cdk.out"]);
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith(".") || SKIP.has(e.name)) return [];
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return full === testDir ? [] : sourcesUnder(full);
    return SOURCE.test(e.name) && !e.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** The relative specifiers of a file (static imports, re-exports, dynamic imports) that land in test/. */
function importsIntoTest(file: string, text: string): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith("."))
    .filter((spec) => {
      const target = path.resolve(path.dirname(file), spec);
      return target === testDir || target.startsWith(testDir + path.sep);
    });
}

describe("dependencies point into test/, never out", () => {
  const files = sourcesUnder(repoRoot);

  it("looks at production code, scripts, benchmarks and tools, and at nothing in test/", () => {
    const relative = files.map((f) => path.relative(repoRoot, f));
    for (const expected of ["scripts/chaos.ts", "bench/run.ts", "tools/chaos/harness.ts", "core/domain/model.ts"]) {
      expect(relative).toContain(expected);
    }
    expect(relative.filter((f) => f.startsWith(`test${path.sep}`))).toEqual([]);
  });

  it("no file outside test/ imports from test/", () => {
    const offenders = files.flatMap((f) =>
      importsIntoTest(f, readFileSync(f, "utf8")).map((spec) => `${path.relative(repoRoot, f)} -> ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it("would catch it (static, re-export and dynamic imports; not a sibling folder named like test)", () => {
    const at = path.join(repoRoot, "bench", "support", "x.ts");
    expect(importsIntoTest(at, `import { a } from "../../test/support/seed.js";`)).toEqual(["../../test/support/seed.js"]);
    expect(importsIntoTest(at, `export { b } from "../../test/x.js";`)).toHaveLength(1);
    expect(importsIntoTest(at, `const m = await import("../../test/y.js");`)).toHaveLength(1);
    expect(importsIntoTest(at, `import { c } from "../../tools/chaos/rng.js";`)).toEqual([]);
    expect(importsIntoTest(at, `import { d } from "../../test-artifacts/z.js";`)).toEqual([]);
  });
});
