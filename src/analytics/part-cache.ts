// The packed cells of rollup parts an api process has read, kept for the next query. A part is never changed once
// written (a merge inserts a new part and deletes those it replaces), so a part's bytes under its id stay right for as
// long as the part exists, and a query that finds a part's id in the rollup index may use the bytes kept for it. The
// history a dashboard asks for again and again (the last 30 or 90 days) is mostly settled parts: their bytes come from
// here instead of through the database and the driver (a 90-day daily time series in New York is 810 parts, about
// 11 MB). Bounded by bytes, least recently used out first.
import { Counter, Gauge, type Registry } from 'prom-client';
import { Lru } from '../platform/lru.ts';

/** What the cache holds per part and dimension: the dimension's packed cells, or null when the part has none. */
export type CachedCells = Uint8Array | null;

/** Bytes counted per entry beyond its cells: the map entry and its key. */
const ENTRY_OVERHEAD = 128;

export class PartCache {
  private readonly lru: Lru<CachedCells>;
  private readonly metrics: { hits: Counter; misses: Counter; bytes: Gauge } | null;

  readonly maxBytes: number;

  /** `maxBytes` 0 keeps nothing. */
  constructor(maxBytes: number, registry?: Registry) {
    this.maxBytes = maxBytes;
    this.lru = new Lru(maxBytes);
    this.metrics = registry
      ? {
          hits: new Counter({ name: 'linkplane_analytics_part_cache_hits_total', help: "Rollup parts an analytics query read from the api's cache", registers: [registry] }),
          misses: new Counter({ name: 'linkplane_analytics_part_cache_misses_total', help: 'Rollup parts an analytics query fetched from the database', registers: [registry] }),
          bytes: new Gauge({ name: 'linkplane_analytics_part_cache_bytes', help: "Bytes of packed rollup cells held by the api's cache", registers: [registry] }),
        }
      : null;
  }

  static key(partId: string, dimension: string): string {
    return `${partId}|${dimension}`;
  }

  /** The cells kept for a part's dimension (undefined: not kept), marked as used last. */
  get(key: string): CachedCells | undefined {
    const cells = this.lru.get(key);
    (cells === undefined ? this.metrics?.misses : this.metrics?.hits)?.inc();
    return cells;
  }

  /** Keeps a copy of the cells (the driver's bytes are views into a whole reply), dropping the least used beyond the budget. */
  set(key: string, cells: Uint8Array | null): CachedCells {
    // Uint8Array's slice copies; a Buffer's own slice would be another view of the reply.
    const kept = cells === null ? null : Uint8Array.prototype.slice.call(cells);
    this.lru.set(key, kept, ENTRY_OVERHEAD + key.length * 2 + (kept?.byteLength ?? 0));
    this.metrics?.bytes.set(this.lru.weight);
    return kept;
  }

  get size(): number {
    return this.lru.size;
  }

  get bytes(): number {
    return this.lru.weight;
  }
}

/**
 * Unique-visitor estimates an api process worked out, by what they unite: a query's sketches of a bucket come from
 * parts that never change, so the same parts (and the same cells of them) give the same estimate. A 90-day daily time
 * series in New York unites some 810 sketches, nine per day, every day's afresh on each request; with this, only the
 * days whose parts changed (today's, and those a late click or a merge touched) are united again. Bounded by bytes.
 */
export class EstimateMemo {
  private readonly lru: Lru<number>;
  private readonly metrics: { hits: Counter; misses: Counter } | null;

  constructor(maxBytes: number, registry?: Registry) {
    this.lru = new Lru(maxBytes);
    this.metrics = registry
      ? {
          hits: new Counter({ name: 'linkplane_analytics_estimate_memo_hits_total', help: 'Unique-visitor estimates an analytics query took from those worked out before', registers: [registry] }),
          misses: new Counter({ name: 'linkplane_analytics_estimate_memo_misses_total', help: 'Unique-visitor estimates an analytics query worked out by uniting sketches', registers: [registry] }),
        }
      : null;
  }

  /**
   * The estimate named by `key` (what it unites: see AnalyticsService), worked out by `estimate` unless known.
   */
  get(key: string, estimate: () => number): number {
    const known = this.lru.get(key);
    if (known !== undefined) {
      this.metrics?.hits.inc();
      return known;
    }
    this.metrics?.misses.inc();
    const value = estimate();
    this.lru.set(key, value, ENTRY_OVERHEAD + key.length * 2);
    return value;
  }

  get size(): number {
    return this.lru.size;
  }
}
