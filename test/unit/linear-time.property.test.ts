/**
 * Every function over user text runs in linear time (docs/reliability.md, "Linear time on any
 * input"): message contents, tool output, summaries, instructions and model answers are fed to
 * them as adversarial inputs (long runs of one character without a match, repeated separators,
 * each pattern's worst case, random repetitions) at growing sizes.
 *
 * Why a ratio and not a time: speed targets are met in benchmarks (docs/benchmarks.md, "Linear
 * text handling"), never in timed tests, because this suite shares two cores with other work.
 * Each check times one function on an input of n characters and on one of 8n, side by side in
 * the same run, in CPU time of this process (time spent waiting for a core other processes hold
 * is not counted), and takes the fastest of a few interleaved repetitions of each (interference
 * from other processes only ever adds time, so the minimum is the figure closest to the work); a
 * ratio over the limit is measured once more, with more repetitions, before it counts. A
 * linear function gives a ratio near 8 (below it when a scan window caps the work); a quadratic
 * one near 64, a cubic one 512. Failing only above {@link MAX_RATIO} leaves a wide margin for
 * noise on a loaded machine while still catching any super-linear growth. Inputs grow from 4 KiB
 * to 32 KiB, and, once that step is linear, from 32 KiB to 256 KiB (the largest message content).
 * The inputs and the list of functions are in bench/support/user-text.ts, shared with the
 * `linear-text` benchmark.
 */
import { describe, expect, it } from "vitest";
import { cpuMsPerCall, FAMILIES, FUNCTIONS, KIB, repeated, unitArb, type Gen } from "../../bench/support/user-text.js";
import fc from "fast-check";

/** Linear growth over 8x the input is about 8; quadratic about 64. */
const MAX_RATIO = 40;
const FACTOR = 8;
/** Runs per size; a ratio over the limit is measured again with more before it counts. */
const REPETITIONS = 3;
const CONFIRMATIONS = 7;

// ---- measuring ---------------------------------------------------------------------------------

/** Time at 8n over time at n: the fastest of `repetitions` interleaved runs of each. */
function growth(f: (text: string) => unknown, small: string, large: string, repetitions: number) {
  f(small); // warm-up: compile before timing
  let bestSmall = Number.POSITIVE_INFINITY;
  let bestLarge = Number.POSITIVE_INFINITY;
  for (let rep = 0; rep < repetitions; rep++) {
    bestSmall = Math.min(bestSmall, cpuMsPerCall(f, small));
    bestLarge = Math.min(bestLarge, cpuMsPerCall(f, large));
  }
  return { small: bestSmall, large: bestLarge, ratio: bestLarge / bestSmall };
}

/**
 * Whether time grows faster than the input from n to 8n. A ratio over the limit is measured again
 * with more repetitions before it counts: a garbage collection or a burst of load can spoil a
 * few runs, never all of two series, while a super-linear function fails both.
 */
function growsFaster(f: (text: string) => unknown, gen: Gen, n: number): { ratio: number; small: number; large: number } | null {
  const small = gen(n);
  const large = gen(n * FACTOR);
  const first = growth(f, small, large, REPETITIONS);
  if (first.ratio <= MAX_RATIO) return null;
  const again = growth(f, small, large, CONFIRMATIONS);
  return again.ratio > MAX_RATIO ? again : null;
}

const fmt = (ms: number) => `${ms.toFixed(ms < 1 ? 3 : 1)} ms`;

/** The inputs whose time grows more than linearly, described; empty when every one is linear. */
function superLinear(f: (text: string) => unknown, max: number | undefined, gens: Array<[string, Gen]>): string[] {
  const failures: string[] = [];
  const top = max ?? 256 * KIB;
  for (const [name, gen] of gens) {
    // 4 KiB -> 32 KiB first; 32 KiB -> 256 KiB only once that step is linear.
    for (let n = Math.min(4 * KIB, top / FACTOR); n * FACTOR <= top; n *= FACTOR) {
      const g = growsFaster(f, gen, n);
      if (g) {
        failures.push(`${name}: ${fmt(g.small)} at ${n / KIB} KiB, ${fmt(g.large)} at ${(n * FACTOR) / KIB} KiB (x${g.ratio.toFixed(0)})`);
        break;
      }
    }
  }
  return failures;
}

describe("every function over user text runs in linear time", () => {
  for (const { name, f, max } of FUNCTIONS) {
    it(`${name}: each named adversarial input`, { timeout: 600_000 }, () => {
      expect(superLinear(f, max, Object.entries(FAMILIES))).toEqual([]);
    });

    it(`${name}: random repetitions of significant characters`, { timeout: 600_000 }, () => {
      const units = fc.sample(unitArb, { numRuns: 6, seed: 25 });
      const gens = units.map((u): [string, Gen] => [`${JSON.stringify(u)} repeated`, repeated(u)]);
      expect(superLinear(f, max === undefined ? 32 * KIB : Math.min(max, 32 * KIB), gens)).toEqual([]);
    });
  }

});
