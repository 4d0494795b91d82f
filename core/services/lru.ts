/**
 * A least-recently-used map bounded by its number of entries and by the sum of a weight per entry
 * (docs/libraries.md): the per-container caches of search indexes, blobs, settings and budgets. A
 * Map keeps insertion order, so re-inserting on each read keeps the oldest entry first.
 */
export interface LruOptions<V> {
  maxEntries?: number;
  /** The most the weights of the kept entries add up to; an entry heavier than this is not kept. */
  maxWeight?: number;
  /** An entry's weight (default 1). */
  weigh?: (value: V) => number;
  /** Called for each entry dropped to make room (not for a delete or a replacement). */
  onEvict?: () => void;
}

export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private total = 0;

  constructor(private readonly options: LruOptions<V>) {}

  /** The sum of the kept entries' weights. */
  get weight(): number {
    return this.total;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` as the most recently used entry, then drops the least recently used past the bounds. */
  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.options.weigh?.(value) ?? 1;
    const maxWeight = this.options.maxWeight ?? Infinity;
    const maxEntries = this.options.maxEntries ?? Infinity;
    if (weight > maxWeight) return;
    this.entries.set(key, { value, weight });
    this.total += weight;
    while (this.entries.size > maxEntries || this.total > maxWeight) {
      const [oldest] = this.entries.keys();
      this.delete(oldest as K);
      this.options.onEvict?.();
    }
  }

  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    this.total -= entry.weight;
    return true;
  }
}
