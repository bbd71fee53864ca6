// A Map bounded by the total weight of its entries (their bytes, or 1 each to bound a count), least recently used
// out first: a hit moves its key to the end, and Map keeps insertion order, so the first keys are the oldest. A hit
// on a key already among the newer half leaves it in place, so the order is approximate: such a key keeps the place
// of its last move, which is still newer than every key of the older half, where entries are dropped from.

export class Lru<V> {
  private readonly entries = new Map<string, { value: V; weight: number; stamp: number }>();
  private used = 0;
  /** Counts insertions and moves: an entry's stamp tells how many came after it, so how near the end it is. */
  private clock = 0;

  readonly maxWeight: number;

  /** `maxWeight` 0 keeps nothing. */
  constructor(maxWeight: number) {
    this.maxWeight = maxWeight;
  }

  /**
   * The value kept under `key` (undefined: none), marked as used last. An entry among the newer half is left where
   * it is: moving it (a delete and an insert, which leave the Map a hole to compact later) on every hit of a hot key
   * costs more than the lookup, and it is nowhere near the end that entries are dropped from.
   */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.clock - entry.stamp >= Math.max(1, this.entries.size >>> 1)) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      entry.stamp = ++this.clock;
    }
    return entry.value;
  }

  /** Keeps `value` under `key` (replacing what was there), dropping the least used beyond the bound; an entry heavier than the whole bound is not kept. */
  set(key: string, value: V, weight = 1): void {
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.used -= previous.weight;
    }
    if (weight > this.maxWeight) return;
    this.entries.set(key, { value, weight, stamp: ++this.clock });
    this.used += weight;
    if (this.used <= this.maxWeight) return;
    for (const [oldest, entry] of this.entries) {
      if (this.used <= this.maxWeight) break;
      this.entries.delete(oldest);
      this.used -= entry.weight;
    }
  }

  /** Forgets `key`, if kept. */
  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.used -= entry.weight;
  }

  /** Forgets every entry whose value `matches`. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) {
      if (!matches(entry.value)) continue;
      this.entries.delete(key);
      this.used -= entry.weight;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** The total weight kept. */
  get weight(): number {
    return this.used;
  }
}
