/** What every benchmark section gets from the runner. */
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface BenchContext {
  /** DynamoDB Local endpoint started by the runner (absent for sections that need none). */
  endpoint?: string;
  /** BENCH_QUICK=1 or --quick: smaller sizes for a ~1-minute smoke run. */
  quick: boolean;
  /** BENCH_FULL=1 or --full: the long sections too, and the larger repetitions (docs/benchmarks.md). */
  full: boolean;
  /** Progress lines (stderr), so the tables on stdout stay clean. */
  log(message: string): void;
}

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** A size or count for the run: the smoke run's, the default run's, or the full run's. */
export function bySize<T>(ctx: BenchContext, sizes: { quick: T; normal: T; full: T }): T {
  return ctx.quick ? sizes.quick : ctx.full ? sizes.full : sizes.normal;
}

export function requireEndpoint(ctx: BenchContext): string {
  if (!ctx.endpoint) throw new Error("this section needs DynamoDB Local (the runner starts it)");
  return ctx.endpoint;
}

/** Positive integer from the environment, or the default. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** Comma-separated positive integers from the environment, or the default. */
export function envInts(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (!raw?.trim()) return fallback;
  const values = raw.split(",").map((s) => Number(s.trim()));
  if (values.some((n) => !Number.isInteger(n) || n < 0)) throw new Error(`${name} must be comma-separated integers, got '${raw}'`);
  return values;
}
