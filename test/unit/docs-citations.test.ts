/**
 * Every docs heading the code cites exists: a comment that says `docs/<page>.md, "<heading>"` (or
 * `README, "<heading>"`) names a heading of that page, and every `page.md#anchor` link between
 * the docs names a heading there. Each file is read once and scanned once, so this stays quick.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;
const SOURCE_DIRS = ["core", "functions", "stacks", "local", "scripts", "tools", "client", "web", "bench", "test"];
const SOURCE_EXT = /\.(ts|tsx|js|mjs)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", "test-artifacts", ".git"]);

function filesUnder(dir: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (SKIP_DIRS.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) filesUnder(path, keep, out);
    else if (keep(name)) out.push(path);
  }
  return out;
}

/** Heading text as compared: markup, case and spacing do not count. */
const normalize = (text: string) =>
  text.replace(/[`*_]/g, "").replace(/\s+/g, " ").trim().toLowerCase();

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens. */
const slug = (text: string) =>
  text.replace(/[`*]/g, "").trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");

type Page = { headings: Set<string>; anchors: Set<string> };
const pages = new Map<string, Page | null>();

/** The headings of a page (`#` to `######`, outside fenced code), read once; null when it is missing. */
function page(path: string): Page | null {
  if (pages.has(path)) return pages.get(path)!;
  let text: string | undefined;
  try {
    text = readFileSync(join(ROOT, path), "utf8");
  } catch {
    text = undefined;
  }
  let found: Page | null = null;
  if (text !== undefined) {
    found = { headings: new Set(), anchors: new Set() };
    const seen = new Map<string, number>();
    let fenced = false;
    for (const line of text.split("\n")) {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
      const m = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
      if (!m) continue;
      // A heading's closing remark in parentheses may be left out: "Range jobs" cites "Range jobs (accepted offers)".
      found.headings.add(normalize(m[1]!));
      found.headings.add(normalize(m[1]!.replace(/\s*\([^()]*\)\s*$/, "")));
      const base = slug(m[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.anchors.add(n === 0 ? base : `${base}-${n}`);
    }
  }
  pages.set(path, found);
  return found;
}

type Citation = { at: string; page: string; heading: string };

/**
 * The citations in one file's text: `docs/x.md, "Heading"`, `docs/x.md "Heading"`, `README,
 * "Heading"`. A heading may wrap onto the next comment line (` * ` or `// ` is dropped).
 */
function citationsIn(file: string, text: string): Citation[] {
  const out: Citation[] = [];
  const pattern = /\b((?:docs|tools)\/[\w./-]+?\.md|README(?:\.md)?),?[ \t]+"([^"\n]{1,200}(?:\n[ \t]*(?:\*|\/\/)?[ \t]*[^"\n]{0,200})?)"/g;
  // Line numbers by one pass over the newlines, not a search per match.
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  let line = 0;
  for (const m of text.matchAll(pattern)) {
    while (line + 1 < starts.length && starts[line + 1]! <= m.index!) line++;
    const target = m[1]!.startsWith("README") ? "README.md" : m[1]!;
    const heading = m[2]!.replace(/\n[ \t]*(?:\*|\/\/)?[ \t]*/, " ");
    out.push({ at: `${file}:${line + 1}`, page: target, heading });
  }
  return out;
}

/**
 * The citations in one markdown page, which also name pages relative to itself: `turns.md,
 * "Recall"`, `[features.md](features.md), "Auto-pin"`, `docs/api.md ("Events")`. A path that
 * starts with docs/ or tools/ is from the repository's root.
 */
function proseCitationsIn(file: string, text: string): Citation[] {
  const out: Citation[] = [];
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/") + 1) : "";
  const pattern = /(?<![\w/.-])((?:\.\.\/|[\w-]+\/)*[\w-]+\.md)(?:\]\([^)\s]*\))?,?[ \t]+\(?"([^"\n]{1,200}(?:\n[^"\n]{0,200})?)"/g;
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  let line = 0;
  for (const m of text.matchAll(pattern)) {
    while (line + 1 < starts.length && starts[line + 1]! <= m.index!) line++;
    const path = m[1]!;
    const target = path === "README.md" || path === "CHANGELOG.md" || /^(docs|tools)\//.test(path) ? path : normalizePath(dir + path);
    out.push({ at: `${file}:${line + 1}`, page: target, heading: m[2]!.replace(/\n\s*/, " ") });
  }
  return out;
}

/** Links from one markdown page to a heading: `(page.md#anchor)` or `(#anchor)`. */
function anchorLinksIn(file: string, text: string): Citation[] {
  const out: Citation[] = [];
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/") + 1) : "";
  const lines = text.split("\n");
  let fenced = false;
  lines.forEach((l, i) => {
    if (/^\s*(```|~~~)/.test(l)) fenced = !fenced;
    if (fenced) return;
    for (const m of l.matchAll(/\]\(((?:[\w./-]+\.md)?)#([^)\s]+)\)/g)) {
      const target = m[1] ? normalizePath(dir + m[1]) : file;
      out.push({ at: `${file}:${i + 1}`, page: target, heading: `#${m[2]}` });
    }
  });
  return out;
}

function normalizePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== "." && part !== "") parts.push(part);
  }
  return parts.join("/");
}

/** The citations that name no heading, as `file:line: page "heading"`. */
function missing(citations: Citation[], find: (path: string) => Page | null = page): string[] {
  return citations
    .filter((c) => {
      const target = find(c.page);
      if (!target) return true;
      return c.heading.startsWith("#") ? !target.anchors.has(c.heading.slice(1)) : !target.headings.has(normalize(c.heading));
    })
    .map((c) => `${c.at}: ${c.page} "${c.heading}"`);
}

const sources = SOURCE_DIRS.flatMap((d) => filesUnder(join(ROOT, d), (n) => SOURCE_EXT.test(n)));
const markdown = [
  ...filesUnder(join(ROOT, "docs"), (n) => n.endsWith(".md")),
  ...filesUnder(join(ROOT, "tools"), (n) => n.endsWith(".md")),
  join(ROOT, "README.md"),
  join(ROOT, "CHANGELOG.md"),
];
const rel = (path: string) => relative(ROOT, path);
const SELF = rel(new URL(import.meta.url).pathname);

describe("citations of docs headings", () => {
  it("every heading the code cites exists in the page it names", () => {
    const cited = sources.filter((f) => rel(f) !== SELF).flatMap((f) => citationsIn(rel(f), readFileSync(f, "utf8")));
    expect(cited.length).toBeGreaterThan(100);
    expect(missing(cited)).toEqual([]);
  });

  it("every heading a docs page cites, and every #anchor link between them, exists", () => {
    const cited = markdown.flatMap((f) => {
      const text = readFileSync(f, "utf8");
      return [...proseCitationsIn(rel(f), text), ...anchorLinksIn(rel(f), text)];
    });
    expect(missing(cited)).toEqual([]);
  });

  it("reports a citation of a heading that does not exist, with its file and line", () => {
    const text = ['// see docs/guide.md, "Setup"', "/**", ' * docs/guide.md, "Not a', ' * heading" and README, "Setup"', " */"].join("\n");
    const guide: Page = { headings: new Set([normalize("Setup")]), anchors: new Set(["setup"]) };
    const find = (path: string) => (path === "docs/guide.md" ? guide : null);
    expect(missing(citationsIn("x.ts", text), find)).toEqual(['x.ts:3: docs/guide.md "Not a heading"', 'x.ts:4: README.md "Setup"']);
    expect(missing(anchorLinksIn("docs/a.md", "[a](guide.md#setup) [b](guide.md#nope)"), find)).toEqual(['docs/a.md:1: docs/guide.md "#nope"']);
  });
});
