// The packed cells of rollup parts an api process has read, kept for the next query. A part is never changed once
// written (a merge inserts a new part and deletes those it replaces), so a part's bytes under its id stay right for as
// long as the part exists, and a query that finds a part's id in the rollup index may use the bytes kept for it. The
// history a dashboard asks for again and again (the last 30 or 90 days) is mostly settled parts: their bytes come from
// here instead of through the database and the driver (a 90-day daily time series in New York is 810 parts, about
// 11 MB). Bounded by bytes, least recently used out first.
import { Counter, Gauge, type Registry } from 'prom-client';

/** What the cache holds per part and dimension: the dimension's packed cells, or null when the part has none. */
export type CachedCells = Uint8Array | null;

/** Bytes counted per entry beyond its cells: the map entry and its key. */
const ENTRY_OVERHEAD = 128;

export class PartCache {
  private readonly entries = new Map<string, CachedCells>();
  private used = 0;
  private readonly metrics: { hits: Counter; misses: Counter; bytes: Gauge } | null;

  readonly maxBytes: number;

  /** `maxBytes` 0 keeps nothing. */
  constructor(maxBytes: number, registry?: Registry) {
    this.maxBytes = maxBytes;
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
    const cells = this.entries.get(key);
    if (cells === undefined) {
      this.metrics?.misses.inc();
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, cells);
    this.metrics?.hits.inc();
    return cells;
  }

  /** Keeps a copy of the cells (the driver's bytes are views into a whole reply), dropping the least used beyond the budget. */
  set(key: string, cells: Uint8Array | null): CachedCells {
    // Uint8Array's slice copies; a Buffer's own slice would be another view of the reply.
    const kept = cells === null ? null : Uint8Array.prototype.slice.call(cells);
    const size = sizeOf(key, kept);
    if (size > this.maxBytes) return kept;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.used -= sizeOf(key, previous);
    }
    this.entries.set(key, kept);
    this.used += size;
    for (const [oldest, value] of this.entries) {
      if (this.used <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.used -= sizeOf(oldest, value);
    }
    this.metrics?.bytes.set(this.used);
    return kept;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.used;
  }
}

function sizeOf(key: string, cells: CachedCells): number {
  return ENTRY_OVERHEAD + key.length * 2 + (cells?.byteLength ?? 0);
}
