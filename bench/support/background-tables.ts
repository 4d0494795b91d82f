/**
 * The figures, tables and targets of the background compaction benchmark
 * (bench/background-compaction.ts, docs/benchmarks.md "Compaction off the turn's critical path"),
 * from its sessions' samples (bench/support/background-session.ts).
 */
import type { SessionRun } from "./background-session.js";
import { cacheStableShare } from "./cache-stability.js";
import type { Table, Target } from "./report.js";
import { fmt, pct, percentile, times } from "./stats.js";

/** One session's figures, as the tables and targets show them. */
export function runFigures(r: SessionRun) {
  const all = timed(r).map((s) => s.ms);
  const plain = timed(r).filter((s) => !s.compacted).map((s) => s.ms);
  const trimmedTurns = r.turns.filter((s) => s.trimmed > 0).length;
  const p99All = percentile(all, 99);
  const p99Plain = percentile(plain, 99);
  return {
    folds: r.turns.filter((s) => s.compacted).length,
    trimmedTurns,
    trimmedShare: r.turns.length === 0 ? Number.NaN : trimmedTurns / r.turns.length,
    mostTrimmed: Math.max(0, ...r.turns.map((s) => s.trimmed)),
    waitedTurns: r.turns.filter((s) => s.waited).length,
    overWindow: r.turns.filter((s) => s.returnedTokens > r.window).length,
    cache: cacheStableShare(r.turns),
    p99All,
    p99Plain,
    ratio: p99All / p99Plain,
  };
}

/**
 * The turns whose latency counts: all but the first, which warms the process up (its first
 * requests, the modules' first run) while every session starts at once.
 */
const timed = (r: SessionRun) => r.turns.slice(1);

const label = (r: SessionRun) => [r.conversation, `${r.delayMs / 1000} s`, `${r.window / 1000}k`, r.mode, r.code];
const LABEL_COLUMNS = ["conversation", "summarizer delay", "window", "mode", "code"];
const quartet = (values: number[]) =>
  values.length === 0 ? "-" : [50, 95, 99, 100].map((p) => fmt(p === 100 ? Math.max(...values) : percentile(values, p), 0)).join(" / ");

/** Turn latency, every turn and split by whether the turn committed a fold. */
export function latencyTable(runs: readonly SessionRun[]): Table {
  return {
    title: "Turn latency (ms), every turn but the first: all, turns that commit a fold, plain turns",
    columns: [...LABEL_COLUMNS, "all p50/p95/p99/max", "committing p50/p95/p99/max", "plain p50/p95/p99/max"],
    rows: runs.map((r) => [
      ...label(r),
      quartet(timed(r).map((s) => s.ms)),
      quartet(timed(r).filter((s) => s.compacted).map((s) => s.ms)),
      quartet(timed(r).filter((s) => !s.compacted).map((s) => s.ms)),
    ]),
  };
}

/** The section's measures per configuration, before and after side by side when a baseline ran. */
export function configurationTable(runs: readonly SessionRun[]): Table {
  return {
    title: "Per configuration: trims, waits, prompts over the window, cache-stable turns, p99 ratio",
    columns: [
      ...LABEL_COLUMNS,
      "turns",
      "folds committed",
      "turns trimmed",
      "most messages trimmed",
      "turns that waited",
      "prompt > window",
      "cache-stable / counted turns",
      "p99 all / plain",
      "p99 ratio",
      "prepared used / discarded",
    ],
    rows: runs.map((r) => {
      const f = runFigures(r);
      return [
        ...label(r),
        String(r.turns.length),
        String(f.folds),
        `${f.trimmedTurns} (${pct(f.trimmedShare, 0)})`,
        String(f.mostTrimmed),
        String(f.waitedTurns),
        String(f.overWindow),
        `${f.cache.stable} / ${f.cache.counted} (${pct(f.cache.share)})`,
        `${fmt(f.p99All)} / ${fmt(f.p99Plain)} ms`,
        times(f.ratio, 2),
        r.mode === "background" ? `${r.preparedUsed} / ${r.preparedDiscarded}` : "-",
      ];
    }),
  };
}

type Figures = ReturnType<typeof runFigures>;
interface Measure {
  name: string;
  target: string;
  value: (f: Figures) => number;
  show: (v: number) => string;
  /** Which of two values is the worse one. */
  worse: (a: number, b: number) => boolean;
  met: (worst: number) => boolean;
}

/** The targets of docs/benchmarks.md for the background mode, each over every configuration. */
const MEASURES: Measure[] = [
  { name: "turns with a trimmed answer (share of the turns)", target: "<= 5%", value: (f) => f.trimmedShare, show: (v) => pct(v), worse: (a, b) => a > b, met: (w) => w <= 0.05 },
  { name: "turns that waited for a summarizer", target: "0", value: (f) => f.waitedTurns, show: String, worse: (a, b) => a > b, met: (w) => w === 0 },
  { name: "returned prompts over the window", target: "0", value: (f) => f.overWindow, show: String, worse: (a, b) => a > b, met: (w) => w === 0 },
  {
    name: "cache-stable turns among turns that commit and clear nothing",
    target: ">= 95%",
    value: (f) => f.cache.share,
    show: (v) => pct(v),
    worse: (a, b) => a < b,
    met: (w) => w >= 0.95,
  },
  { name: "p99 of all turns / p99 of plain turns", target: "<= 1.3x", value: (f) => f.ratio, show: (v) => times(v, 2), worse: (a, b) => a > b, met: (w) => w <= 1.3 },
];

/** The worst value of a measure over runs, and the configuration it came from. */
function worst(runs: readonly SessionRun[], m: Measure): { value: number; where: string } | undefined {
  let found: { value: number; where: string } | undefined;
  for (const r of runs) {
    const value = m.value(runFigures(r));
    if (Number.isNaN(value)) continue;
    if (!found || m.worse(value, found.value)) found = { value, where: `${r.conversation} ${r.delayMs / 1000} s ${r.window / 1000}k` };
  }
  return found;
}

/** The background runs' targets: this tree's worst value (and the baseline's, when it ran). */
export function backgroundTargets(runs: readonly SessionRun[]): Target[] {
  const background = runs.filter((r) => r.mode === "background");
  const after = background.filter((r) => r.code === "after");
  const before = background.filter((r) => r.code === "before");
  return MEASURES.map((m) => {
    const w = worst(after, m);
    const b = before.length > 0 ? worst(before, m) : undefined;
    const measured = w ? `worst ${m.show(w.value)} (${w.where})` : "n/a";
    return {
      name: `background: ${m.name}, worst configuration`,
      target: m.target,
      measured: b ? `${measured}; before: ${m.show(b.value)}` : measured,
      met: w !== undefined && m.met(w.value),
    };
  });
}
