/** Small statistics and number formatting for the benchmark tables. */

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** `1234567` -> `1,234,567`; fractions keep `digits` decimals. */
export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return "n/a";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export const ms = (value: number) => `${fmt(value, value < 10 ? 2 : 1)} ms`;
export const pct = (value: number, digits = 1) => `${fmt(value * 100, digits)}%`;
/** A ratio as `12.3x`. */
export const times = (value: number, digits = 1) => `${fmt(value, digits)}x`;
/** Signed relative change, `+3.1%` / `-0.4%`. */
export const delta = (value: number) => `${value >= 0 ? "+" : ""}${fmt(value * 100, 1)}%`;

/** Wall-clock milliseconds of `fn`. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}
