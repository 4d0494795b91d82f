/**
 * A tiny seeded PRNG (mulberry32) for the chaos harness: the same seed gives the same operation
 * list and fault plan on every machine. Interleavings of concurrent calls still vary from run to
 * run; what the harness does and where it injects faults does not.
 */
import { createHash } from "node:crypto";

/** mulberry32: 32-bit state, good enough for schedules (not for cryptography). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Rng {
  readonly seed: number;
  /** A float in [0, 1). */
  float(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Picks by weight: `[[value, weight], ...]`. */
  weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T;
  /** An independent stream derived from this seed and a label (stable when other streams change). */
  fork(label: string): Rng;
}

/**
 * @example const rng = createRng(42); rng.int(1, 6); rng.fork("engine-0").pick(["a", "b"])
 */
export function createRng(seed: number): Rng {
  const next = mulberry32(seed);
  const rng: Rng = {
    seed,
    float: next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick(items) {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[Math.floor(next() * items.length)]!;
    },
    weighted(entries) {
      const total = entries.reduce((n, [, w]) => n + w, 0);
      let r = next() * total;
      for (const [value, w] of entries) {
        r -= w;
        if (r < 0) return value;
      }
      return entries[entries.length - 1]![0];
    },
    fork: (label) => createRng(deriveSeed(seed, label)),
  };
  return rng;
}

/** A 32-bit seed from a parent seed and a label. */
export function deriveSeed(seed: number, label: string): number {
  return createHash("sha256").update(`${seed >>> 0}/${label}`).digest().readUInt32LE(0);
}

/** A short stable digest of a JSON-serialisable value (the plan), to show two runs planned the same. */
export function digest(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}
