/**
 * `npm test` needs nothing outside the repository (README "Tests, demo, benchmarks"): no test and
 * no test configuration may name the folder beside the checkout. Data sets such as LoCoMo belong to
 * the benchmarks and the demo, which find them through LOCOMO_DIR or data/locomo/.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// Spelled in pieces so that this file does not name it either.
const OUTSIDE = new RegExp(["\\.\\.", "shared"].join("[\\\\/]"));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(full) : [full];
  });
}

describe("the test suite is self-contained", () => {
  const files = [
    ...filesUnder(path.join(repoRoot, "test")),
    // Tools the tests import (the chaos harness, the wire server) run inside `npm test` too.
    ...filesUnder(path.join(repoRoot, "tools")),
    ...readdirSync(repoRoot)
      .filter((f) => /^vitest\.config\.|^vite\.config\./.test(f))
      .map((f) => path.join(repoRoot, f)),
  ];

  it("looks at every test file and the vitest config", () => {
    const relative = files.map((f) => path.relative(repoRoot, f));
    expect(relative).toContain("vitest.config.ts");
    expect(relative).toContain(path.join("test", "unit", "self-contained.test.ts"));
    expect(relative).toContain(path.join("test", "unit", "offline-summarizer.test.ts"));
  });

  it("never names the folder beside the repository", () => {
    const offenders = files.filter((f) => OUTSIDE.test(readFileSync(f, "utf8"))).map((f) => path.relative(repoRoot, f));
    expect(offenders).toEqual([]);
  });

  it("would catch it (the pattern matches both separators)", () => {
    expect(OUTSIDE.test(`path.resolve(root, "${[".."].join("")}/shared/data/locomo")`)).toBe(true);
    expect(OUTSIDE.test(`..\\shared\\data`)).toBe(true);
    expect(OUTSIDE.test("shared table")).toBe(false);
  });
});
