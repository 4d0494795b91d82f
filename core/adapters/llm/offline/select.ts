/**
 * Selection: a budgeted maximum-coverage greedy over the units. Each round takes the unit with the
 * best gain per character, where gain counts only facts no chosen unit covers yet; the prior
 * summary first gets a reserved share, so old facts fade slowly; a line said again and again is
 * printed once, with how many times. See docs/summarizers.md.
 */
import { lineFor } from "./format.js";
import type { Unit } from "./units.js";

/** Least a unit must add (besides its day heading): one name, number or date, or three new words. */
const MIN_GAIN = 1.25;
/** Share of the budget reserved for what the prior summary carried, so old facts fade slowly. */
const PRIOR_SHARE = 0.3;
/** Added to a unit's cost when it opens a new day heading ("2023-05-08\n"). */
const DAY_HEADING_CHARS = 11;

/** The count a collapsed line carries: "- Assistant: Noted (10). (30 times)". */
const TIMES = / \((\d+) times\)$/;
/** A line this short, once its numbers are masked, is an acknowledgement whatever counter it carries. */
const SHORT_WORDS = 3;

/** What makes two units the same line: their exact line, or, for a short one, the line with its numbers masked. */
function repeatKey(u: Unit): string {
  const text = u.text.replace(TIMES, "");
  const masked = text.replace(/\d+/g, "#");
  const words = masked.match(/\p{L}+/gu)?.length ?? 0;
  return `${u.label}|${u.marker}|${words <= SHORT_WORDS ? masked : text}`;
}

/**
 * Each line once, in the place it was first said: units whose line repeats (exactly, or a short
 * one with other numbers: "Noted (11).", "Noted (12).") collapse into the first, which states how
 * many times it was said, its own count from a prior summary included.
 */
export function collapseRepeats(units: Unit[]): Unit[] {
  const first = new Map<string, { unit: Unit; times: number }>();
  const out: Unit[] = [];
  for (const u of [...units].sort((a, b) => a.order - b.order)) {
    const times = Number(TIMES.exec(u.text)?.[1] ?? 1);
    const key = repeatKey(u);
    const seen = first.get(key);
    if (seen) {
      seen.times += times;
      continue;
    }
    first.set(key, { unit: u, times });
    out.push(u);
  }
  for (const { unit, times } of first.values()) {
    if (times > 1) unit.text = `${unit.text.replace(TIMES, "")} (${times} times)`;
  }
  return out;
}

/** The units to print within `budget` characters, in their original order. Deterministic. */
export function select(all: Unit[], budget: number): Unit[] {
  const units = collapseRepeats(all);
  // A unit's line never changes: it is built once, not in every round.
  const lines = new Map(units.map((u) => [u, lineFor(u)]));
  const covered = new Set<string>();
  const coveredDays = new Set<string>();
  const chosen: Unit[] = [];
  const pool = new Set(units);
  let used = 0;

  const run = (candidates: () => Iterable<Unit>, limit: number) => {
    for (;;) {
      let best: Unit | undefined;
      let bestRatio = 0;
      let bestCost = 0;
      for (const u of candidates()) {
        const cost = lines.get(u)!.length + 1 + dayHeadingCost(u, coveredDays);
        if (used + cost > limit) continue;
        const gain = unitGain(u, covered);
        // A unit must add something besides its day heading: "Good choice." dated is still noise.
        if (gain - dayGain(u, covered) < MIN_GAIN) continue;
        const ratio = gain / cost;
        // Strict ">" keeps the earliest unit on ties, so the output is deterministic.
        if (ratio > bestRatio) {
          best = u;
          bestRatio = ratio;
          bestCost = cost;
        }
      }
      if (!best) return;
      chosen.push(best);
      pool.delete(best);
      used += bestCost;
      for (const key of best.keys.keys()) covered.add(key);
      if (best.day) coveredDays.add(best.day);
    }
  };

  const priorUnits = units.filter((u) => u.prior);
  if (priorUnits.length > 0) {
    run(() => priorUnits.filter((u) => pool.has(u)), Math.floor(budget * PRIOR_SHARE));
  }
  run(() => pool, budget);
  return chosen.sort((a, b) => a.order - b.order);
}

function unitGain(u: Unit, covered: Set<string>): number {
  let gain = u.bonus;
  for (const [key, weight] of u.keys) if (!covered.has(key)) gain += weight;
  return gain;
}

function dayGain(u: Unit, covered: Set<string>): number {
  const key = `day:${u.day}`;
  return u.day && !covered.has(key) ? (u.keys.get(key) ?? 0) : 0;
}

/** What a unit adds to its line's cost: a day heading, when it opens a new day. */
function dayHeadingCost(u: Unit, coveredDays: Set<string>): number {
  return u.day && !coveredDays.has(u.day) ? DAY_HEADING_CHARS : 0;
}

/** Index of the chosen unit with the least gain per character, the first to drop when over budget. */
export function weakestIndex(units: Unit[]): number {
  let index = 0;
  let lowest = Number.POSITIVE_INFINITY;
  units.forEach((u, i) => {
    let gain = u.bonus;
    for (const w of u.keys.values()) gain += w;
    const ratio = gain / (lineFor(u).length + 1);
    if (ratio < lowest) {
      lowest = ratio;
      index = i;
    }
  });
  return index;
}
