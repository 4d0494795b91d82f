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
 * from other processes only ever adds time, so the minimum is the figure closest to the work). A
 * linear function gives a ratio near 8 (below it when a scan window caps the work); a quadratic
 * one near 64, a cubic one 512. Inputs grow from 4 KiB to 32 KiB, and, once that step is linear,
 * from 32 KiB to 256 KiB (the largest message content).
 *
 * Why a ratio over the limit is confirmed by its doublings: the cost of one character can jump
 * once between two sizes while the work stays linear. Strings of 128 KiB and more live in the
 * collector's large-object space, whose pages cost more per byte to get, and far more on a loaded
 * machine: a linear function measured 0.09 ms at 32 KiB and 3.9 ms at 256 KiB (x43) on a busy
 * two-core runner. Super-linear work grows at every doubling (x4 for a quadratic), a jump at one.
 * So a ratio over {@link MAX_RATIO} is measured again at n, 2n, 4n and 8n, with more repetitions,
 * and counts only when it is over the limit again and at least two of its three doublings are
 * over {@link MAX_DOUBLING}. The first test below shows that a quadratic function is still
 * reported, and one quadratic only past 32 KiB at the second step.
 *
 * The inputs and the list of functions are in bench/support/user-text.ts, shared with the
 * `linear-text` benchmark.
 */
import { describe, expect, it } from "vitest";
import { cpuMsPerCall, FAMILIES, FUNCTIONS, KIB, repeated, unitArb, type Gen } from "../../bench/support/user-text.js";
import fc from "fast-check";

/** Linear growth over 8x the input is about 8; quadratic about 64. */
const MAX_RATIO = 40;
const FACTOR = 8;
/** Linear growth over 2x the input is about 2; quadratic about 4. */
const MAX_DOUBLING = 3;
/** Runs per size; a ratio over the limit is measured again with more before it counts. */
const REPETITIONS = 3;
const CONFIRMATIONS = 7;

// ---- measuring ---------------------------------------------------------------------------------

/** The fastest of `repetitions` interleaved runs of f on each input, in ms per call. */
function fastest(f: (text: string) => unknown, inputs: string[], repetitions: number): number[] {
  for (const text of inputs) f(text); // warm-up: compile for every size before timing
  const best = inputs.map(() => Number.POSITIVE_INFINITY);
  for (let rep = 0; rep < repetitions; rep++) {
    inputs.forEach((text, i) => (best[i] = Math.min(best[i]!, cpuMsPerCall(f, text))));
  }
  return best;
}

interface Growth {
  small: number;
  large: number;
  ratio: number;
}

/**
 * Whether time grows faster than the input from n to 8n: over the limit once, then over it again
 * with at least two of the three doublings between n and 8n over theirs (see the header).
 */
function growsFaster(f: (text: string) => unknown, gen: Gen, n: number): Growth | null {
  const [small, large] = fastest(f, [gen(n), gen(n * FACTOR)], REPETITIONS) as [number, number];
  if (large / small <= MAX_RATIO) return null;
  const times = fastest(f, [n, 2 * n, 4 * n, 8 * n].map(gen), CONFIRMATIONS);
  const again = { small: times[0]!, large: times[3]!, ratio: times[3]! / times[0]! };
  const steepDoublings = [1, 2, 3].filter((i) => times[i]! / times[i - 1]! > MAX_DOUBLING).length;
  return again.ratio > MAX_RATIO && steepDoublings >= 2 ? again : null;
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

/**
 * A quadratic scan: from every 256th character, a count of the characters to the end. With
 * `from`, linear below that size and quadratic above it.
 */
function quadratic(from = 0) {
  const countFrom = (text: string, start: number) => {
    let count = 0;
    for (let i = start; i < text.length; i++) if (text.charCodeAt(i) !== 0) count++;
    return count;
  };
  return (text: string) => {
    if (text.length <= from) return countFrom(text, 0);
    let total = 0;
    for (let start = 0; start < text.length; start += 256) total += countFrom(text, start);
    return total;
  };
}

describe("the measure reports super-linear work", () => {
  it("a quadratic function fails, and one quadratic only past 32 KiB fails at 32 -> 256 KiB", { timeout: 600_000 }, () => {
    const letters: Array<[string, Gen]> = [["letters", repeated("ab")]];
    expect(superLinear(quadratic(), undefined, letters)).toEqual([expect.stringMatching(/^letters: .* KiB \(x\d+\)$/)]);
    expect(superLinear(quadratic(32 * KIB), undefined, letters)).toEqual([expect.stringMatching(/^letters: .* at 32 KiB, .* at 256 KiB/)]);
  });
});

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
