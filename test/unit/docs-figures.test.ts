/**
 * Figures that change with the code are generated or linked, never copied into the docs by hand
 * (docs/benchmarks.md, "Cold start"): no page states a function's bundle size (every `npm test`
 * writes test-artifacts/bundle-sizes.json, and a bench run its results.md) or how many tests there
 * are. CHANGELOG.md and the decision notes keep earlier figures on purpose and are not read.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HANDLERS } from "../../stacks/handlers.js";

const ROOT = new URL("../../", import.meta.url).pathname;
/** The size every bundle must stay under (test/infra/bundle.test.ts): a target, not a measurement. */
const BUNDLE_TARGET_KB = 500;

const pages = [
  ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, "tools"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(ROOT, "tools", d.name)).filter((f) => f === "README.md").map((f) => `tools/${d.name}/${f}`)),
  "README.md",
];

/** A function named as code (`authorizer`) or by its camelCase name; "the authorizer" in prose names no bundle. */
const FUNCTIONS = Object.keys(HANDLERS).map((name) => new RegExp(/[A-Z]/.test(name) ? `\\b${name}\\b` : `\`${name}\``));
const SIZE = /(\d[\d,.]*)\s?kB\b/g;
const TEST_COUNT = /\b\d[\d,]*\s+(?:unit |integration |e2e )?(?:tests|test files)\s+(?:pass|passed|passing|ran|run in all)\b|\b(?:tests|test files):?\s+\d[\d,]*\s+passed\b/i;

/** The lines of one page that copy a changing figure, as `page:line: text`. */
function copiedFigures(page: string, text: string): string[] {
  return text.split("\n").flatMap((line, i) => {
    const namesFunction = FUNCTIONS.some((name) => name.test(line));
    const sizes = [...line.matchAll(SIZE)].map((m) => Number(m[1]!.replace(/,/g, "")));
    const bundleSize = namesFunction && sizes.some((kB) => kB !== BUNDLE_TARGET_KB);
    return bundleSize || TEST_COUNT.test(line) ? [`${page}:${i + 1}: ${line.trim()}`] : [];
  });
}

describe("figures that change with the code", () => {
  it("no docs page copies a bundle size or a test count", () => {
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.flatMap((page) => copiedFigures(page, readFileSync(join(ROOT, page), "utf8")))).toEqual([]);
  });

  it("finds a copied bundle size or test count, and lets the target and other sizes through", () => {
    const text = [
      "| plainRoutes | 456 kB | 149 kB |",
      "`plainRoutes` stays under 500 kB (test/infra/bundle.test.ts).",
      "The tracer adds about 130 kB to the plain routes and the authorizer.",
      "`authorizer`: 289 kB",
      "All 1,056 tests pass in 4 minutes.",
      "Tests: 1056 passed",
      "(10 files: 3 production, 4 tests, 3 docs)",
    ].join("\n");
    expect(copiedFigures("x.md", text)).toEqual([
      "x.md:1: | plainRoutes | 456 kB | 149 kB |",
      "x.md:4: `authorizer`: 289 kB",
      "x.md:5: All 1,056 tests pass in 4 minutes.",
      "x.md:6: Tests: 1056 passed",
    ]);
  });
});
