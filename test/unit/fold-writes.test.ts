/**
 * A fold's row has one writer (docs/architecture.md, "Changing things"): every store call that
 * puts or changes a fold's memory row (queue, prepare, FAILED, extend, commit, discard, revert) is
 * made in core/services/compaction/transitions.ts and nowhere else outside the store adapters.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const WRITER = "core/services/compaction/transitions.ts";
/** The Store methods that write a fold's row (core/ports/store.ts, MemoryStore and CompactionStore). */
const FOLD_WRITES = ["putMemory", "storeFold", "extendFold", "discardFold", "commitCompaction", "revertCompaction"];
/** The code that may call the store: everything but the store adapter itself. */
const CALLERS = ["core", "functions", "local", "tools", "scripts", "bench"];
const ADAPTERS = /^core\/adapters\/dynamodb\//;

function sources(rel: string): string[] {
  return readdirSync(path.join(repoRoot, rel), { withFileTypes: true }).flatMap((e) => {
    const child = path.posix.join(rel, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : sources(child);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [child] : [];
  });
}

/** `file:line method` for each call of a fold-writing store method in `text`. */
export function foldWrites(file: string, text: string): string[] {
  const call = new RegExp(`\\bstore\\??\\.(${FOLD_WRITES.join("|")})\\s*\\(`, "g");
  return text.split("\n").flatMap((line, i) => [...line.matchAll(call)].map((m) => `${file}:${i + 1} ${m[1]}`));
}

describe("one writer of a fold's row", () => {
  const files = CALLERS.flatMap(sources).filter((f) => !ADAPTERS.test(f));
  const writes = files.flatMap((f) => foldWrites(f, readFileSync(path.join(repoRoot, f), "utf8")));

  it("every fold write is made by the writer, and the writer makes each kind", () => {
    expect(writes.filter((w) => !w.startsWith(`${WRITER}:`))).toEqual([]);
    const kinds = new Set(writes.map((w) => w.split(" ")[1]));
    expect([...kinds].sort()).toEqual([...FOLD_WRITES].sort());
  });

  it("would catch a write elsewhere (plain and optional calls, not a read)", () => {
    expect(foldWrites("x.ts", "await deps.store.storeFold(key, fold, \"new\");")).toEqual(["x.ts:1 storeFold"]);
    expect(foldWrites("x.ts", "a\nctx.store?.discardFold (key)")).toEqual(["x.ts:2 discardFold"]);
    expect(foldWrites("x.ts", "deps.store.getMemory(key, id); deps.store.putMemoryX(k)")).toEqual([]);
  });
});
