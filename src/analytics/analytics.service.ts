// Answers the analytics endpoints from the rollups, never from raw clicks. Which rollups answer what:
//   no link filter, no visitor filter  → workspace-level documents of the dimension asked (totals: '_');
//   a link filter (link_id, domain_id, tag, folder_id) → the workspace-level `link` cells of those links, or, for
//                                       their figures per dimension value, their link-level documents (per UTC day)
//                                       and raw clicks for the partial days at the range's edges;
//   a visitor filter on dimension F   → the cells of F (workspace level, or link level under a link filter),
//                                       restricted to the filter's values. It combines with summary, timeseries,
//                                       top links, and breakdowns by F or by link; a breakdown by another dimension
//                                       would need rollups keyed by the pair and answers 422.
import type { Collection } from 'mongodb';
import { ValidationError } from '../platform/errors.ts';
import type { LinkDoc } from '../links/link.store.ts';
import { DEFAULT_DOMAIN_ID } from '../links/domains.ts';
import type { Plan } from '../tenancy/plans.ts';
import { CELL_PRECISION, countVisitors, hashVisitor, isExactSet, visitorKey } from './hll.ts';
import { TOTAL, cellKey, cellValue, dimensionValues, isBot, type Dimension } from './dimensions.ts';
import type { EdgeClickStore } from './edge-clicks.store.ts';
import { fromClickDoc } from './raw-click.ts';
import { addRevenue, type Cell, type Revenue } from './cells.ts';
import type { RollupStore } from './rollup.store.ts';
import type { EstimateMemo } from './part-cache.ts';
import { GRAIN_MS, HOUR_MS, DAY_MS, decompose, isoInZone, nextPeriod, periodStart, type Granularity, type Grain, type Run } from './time.ts';
import { rangeView, resolve, type Resolved } from './query.ts';
import {
  ERROR_BOUNDS,
  MAX_BUCKETS,
  type AnalyticsQuery,
  type Breakdown,
  type BreakdownQuery,
  type Summary,
  type Timeseries,
  type TimeseriesQuery,
  type TopLinks,
  type TopLinksQuery,
  type GeoSources,
} from './analytics.schemas.ts';

export interface AnalyticsScope {
  /** The workspace read; for a partner, the partner's id (naming the scope, never read). */
  workspaceId: string;
  /**
   * Read across these workspaces instead (a partner's clients): their cells are summed and their unique-visitor
   * sketches merged, so a visitor of two clients counts once. Top links and exports read one workspace only.
   */
  workspaceIds?: readonly string[];
  workspaceZone?: string | null;
  plan: Plan;
}

/**
 * What names the sketches an Acc unites, for the estimate memo beyond the ids of the parts: the query's cells (level,
 * dimension, grouping and filter keys, see collect) and the group's key.
 */
interface MemoScope {
  memo: EstimateMemo;
  cells: string;
}

/** What a group of cells adds up to. */
class Acc {
  private readonly scope: MemoScope | null;
  private readonly group: string;
  /** Ids of the parts whose cells were added: a part's cells come together, so a part is listed once. */
  private readonly parts: string[] = [];

  constructor(scope: MemoScope | null = null, group = '') {
    this.scope = scope;
    this.group = group;
  }

  c = 0;
  b = 0;
  cv = 0;
  rev: Revenue = {};
  /** Serialised sketches, merged only for the rows shown. */
  humans: Uint8Array[] = [];
  bots: Uint8Array[] = [];

  /** Visitors counted from raw clicks, as their keys (visitorKey). */
  humanRegisters: number[] = [];
  botRegisters: number[] = [];

  /** Adds a cell of the part `part` (its id). */
  add(cell: Cell, part: string): void {
    if (this.parts[this.parts.length - 1] !== part) this.parts.push(part);
    this.c += cell.c;
    this.b += cell.b;
    this.cv += cell.cv;
    addRevenue(this.rev, cell.rev);
    if (cell.humans) this.humans.push(cell.humans);
    if (cell.bots) this.bots.push(cell.bots);
  }

  /** A raw click of a dimension cell: its click once rolled up (as the rollups count it), its conversions in any case. */
  addClick(rolledUp: boolean, bot: boolean, visitorId: string, conversions: number, revenue: Revenue | undefined): void {
    this.cv += conversions;
    addRevenue(this.rev, revenue);
    if (!rolledUp) return;
    const key = visitorKey(hashVisitor(visitorId));
    this.c++;
    if (bot) {
      this.b++;
      this.botRegisters.push(key);
    } else this.humanRegisters.push(key);
  }

  clicks(bots: Resolved['bots']): number {
    return bots === 'exclude' ? this.c - this.b : bots === 'only' ? this.b : this.c;
  }

  uniques(bots: Resolved['bots']): number {
    // Known parts only, united as before: the same estimate. Visitors of raw clicks are counted afresh each time.
    const { scope } = this;
    if (!scope || this.parts.length === 0 || this.humanRegisters.length > 0 || this.botRegisters.length > 0) return this.unite(bots);
    return scope.memo.get(`${scope.cells}${JSON.stringify(this.group)}${bots}|${[...this.parts].sort().join(',')}`, () => this.unite(bots));
  }

  private unite(bots: Resolved['bots']): number {
    const parts = bots === 'exclude' ? this.humans : bots === 'only' ? this.bots : [...this.humans, ...this.bots];
    const registers = bots === 'exclude' ? this.humanRegisters : bots === 'only' ? this.botRegisters : [...this.humanRegisters, ...this.botRegisters];
    return countVisitors(parts, registers, CELL_PRECISION, this.clicks(bots));
  }

  /** Whether uniques(bots) is an exact count: every sketch it unites is still an exact set (raw clicks always are). */
  exact(bots: Resolved['bots']): boolean {
    const parts = bots === 'exclude' ? this.humans : bots === 'only' ? this.bots : [...this.humans, ...this.bots];
    return parts.every(isExactSet);
  }

  /** Revenue per currency, currencies in code order (a stable answer). */
  revenue(): Revenue {
    return Object.fromEntries(Object.keys(this.rev).sort().map((c) => [c, this.rev[c]!]));
  }

  figures(bots: Resolved['bots']) {
    return { clicks: this.clicks(bots), human_clicks: this.c - this.b, bot_clicks: this.b, unique_visitors: this.uniques(bots), conversions: this.cv, revenue: this.revenue() };
  }
}

interface Bucket {
  start: number;
  end: number;
}

/** Maps a rollup document (grain, bucket start) to the answer bucket whose runs contain it. */
class BucketIndex {
  private readonly runs: Array<Run & { bucket: number }> = [];

  constructor(buckets: readonly Bucket[]) {
    buckets.forEach((b, i) => {
      for (const run of decompose(b.start, b.end)) this.runs.push({ ...run, bucket: i });
    });
    this.runs.sort((a, b) => a.from - b.from);
  }

  allRuns(): Run[] {
    return this.runs;
  }

  find(grain: Grain, t: number): number {
    // The runs partition the range (buckets are disjoint, and so are the runs of one bucket): the only run that can
    // hold t is the last one starting at or before it. A document of another grain there is covered otherwise.
    let lo = 0;
    let hi = this.runs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.runs[mid]!.from <= t) lo = mid + 1;
      else hi = mid - 1;
    }
    const r = this.runs[hi];
    return r && r.grain === grain && t + GRAIN_MS[grain] <= r.to ? r.bucket : -1;
  }
}

export interface AnalyticsServiceOptions {
  rollups: RollupStore;
  /** Raw clicks of the partial days at a range's edges, for a link's figures per dimension value. */
  edges: EdgeClickStore;
  links: Collection<LinkDoc>;
  /** Base URL of links on the default short domain (SHORT_LINK_BASE_URL). */
  defaultBaseUrl: string;
  /** Estimates kept from one query to the next (an api process's); none: every estimate is worked out afresh. */
  memo?: EstimateMemo;
  /** Which visitor location facts the redirect resolves (from the shared GeoIP configuration); absent: none. */
  geo?: GeoSources;
}

type GroupBy = 'value' | 'link' | 'workspace' | 'none';

/** A breakdown dimension, or `workspace`: one row per workspace read (a partner's clients). */
export type BreakdownDimension = Dimension | 'workspace';

export class AnalyticsService {
  private readonly o: AnalyticsServiceOptions;

  constructor(options: AnalyticsServiceOptions) {
    this.o = options;
  }

  resolve(scope: AnalyticsScope, query: AnalyticsQuery, now?: number): Promise<Resolved> {
    return resolve(query, {
      workspaceId: scope.workspaceId,
      workspaceIds: scope.workspaceIds,
      workspaceZone: scope.workspaceZone,
      plan: scope.plan,
      links: this.o.links,
      firstBucket: () => this.o.rollups.firstBucket(scope.workspaceIds ?? scope.workspaceId),
      now,
    });
  }

  async summary(scope: AnalyticsScope, query: AnalyticsQuery): Promise<Summary> {
    const r = await this.resolve(scope, query);
    const length = r.end - r.start;
    const previous = { start: r.start - length, end: r.start };
    const [current, before, imported] = await Promise.all([
      this.collect(r, [{ start: r.start, end: r.end }], 'none'),
      this.collect(r, [previous], 'none'),
      this.importedClicks(r),
    ]);
    const acc = current[0]!.get('') ?? new Acc();
    const prev = before[0]!.get('') ?? new Acc();
    return {
      range: rangeView(r),
      bots: r.bots,
      ...acc.figures(r.bots),
      unique_visitors_error: acc.exact(r.bots) ? 0 : r.visitor ? ERROR_BOUNDS.values : ERROR_BOUNDS.totals,
      imported_clicks: imported,
      previous: { start: isoInZone(previous.start, r.zone), end: isoInZone(previous.end, r.zone), ...prev.figures(r.bots) },
    };
  }

  /**
   * The click totals imported links came with, per source, over the links the link filters select: historical figures
   * kept apart from the counted clicks (no date, no visitor: null under a visitor filter).
   */
  private async importedClicks(r: Resolved): Promise<Summary['imported_clicks']> {
    if (r.visitor) return null;
    const bySource = new Map<string, { source: string; clicks: number; links: number; last: Date }>();
    const workspace = r.workspaces.length === 1 ? r.workspaces[0]! : { $in: [...r.workspaces] };
    const docs = this.o.links.find(
      { workspace_id: workspace, 'imported.clicks_total': { $gt: 0 }, ...(r.links ? { _id: { $in: r.links } } : {}) },
      { projection: { imported: 1 } },
    );
    for await (const doc of docs) {
      const mark = doc.imported;
      if (!mark || typeof mark.clicks_total !== 'number') continue;
      const row = bySource.get(mark.source) ?? { source: mark.source, clicks: 0, links: 0, last: mark.at };
      row.clicks += mark.clicks_total;
      row.links += 1;
      if (mark.at > row.last) row.last = mark.at;
      bySource.set(mark.source, row);
    }
    const sources = [...bySource.values()]
      .sort((a, b) => b.clicks - a.clicks || a.source.localeCompare(b.source))
      .map((row) => ({ source: row.source, clicks: row.clicks, links: row.links, last_imported_at: row.last.toISOString() }));
    return { total: sources.reduce((sum, row) => sum + row.clicks, 0), links: sources.reduce((sum, row) => sum + row.links, 0), sources };
  }

  async timeseries(scope: AnalyticsScope, query: TimeseriesQuery): Promise<Timeseries> {
    const r = await this.resolve(scope, query);
    const granularity: Granularity = query.granularity ?? autoGranularity(r.end - r.start);
    const buckets = timeBuckets(r.start, r.end, r.zone, granularity, query.granularity ? 'granularity' : 'interval');
    const groups = await this.collect(r, buckets, 'none');
    return {
      range: rangeView(r),
      bots: r.bots,
      granularity,
      data: buckets.map((b, i) => ({
        start: isoInZone(b.start, r.zone),
        end: isoInZone(b.end, r.zone),
        hours: (b.end - b.start) / HOUR_MS,
        ...(groups[i]!.get('') ?? new Acc()).figures(r.bots),
      })),
    };
  }

  async breakdown<D extends BreakdownDimension = Dimension>(
    scope: AnalyticsScope,
    query: Omit<BreakdownQuery, 'dimension'> & { dimension: D },
  ): Promise<Omit<Breakdown, 'dimension'> & { dimension: D }> {
    const r = await this.resolve(scope, query);
    const dimension = query.dimension;
    if (r.visitor && dimension !== r.visitor.dim && dimension !== 'link' && dimension !== 'workspace') {
      throw new ValidationError([
        {
          path: 'dimension',
          message: `a breakdown by ${dimension} cannot be filtered on ${r.visitor.dim}: with a ${r.visitor.dim} filter, break down by ${r.visitor.dim} or link`,
        },
      ]);
    }
    const groupBy: GroupBy = dimension === 'link' ? 'link' : dimension === 'workspace' ? 'workspace' : 'value';
    const groups = (await this.collect(r, [{ start: r.start, end: r.end }], groupBy, dimension === 'workspace' ? undefined : dimension))[0]!;
    let total = 0;
    for (const acc of groups.values()) total += acc.clicks(r.bots);
    const rows = [...groups.entries()]
      .map(([key, acc]) => ({ key, acc, clicks: acc.clicks(r.bots) }))
      .filter((row) => row.clicks > 0 || row.acc.cv > 0)
      .sort((a, b) => b.clicks - a.clicks || compareKeys(a.key, b.key))
      .slice(0, query.limit ?? 100);
    return {
      range: rangeView(r),
      bots: r.bots,
      dimension,
      total_clicks: total,
      geo: this.o.geo ?? { country: false, location: false, network: false },
      // Per workspace without a visitor filter, the rows are the totals' sketches.
      unique_visitors_error: rows.every((row) => row.acc.exact(r.bots)) ? 0 : dimension === 'workspace' && !r.visitor ? ERROR_BOUNDS.totals : ERROR_BOUNDS.values,
      data: rows.map(({ key, acc, clicks }) => ({
        value: dimension === 'link' || dimension === 'workspace' ? key : cellValue(key),
        clicks,
        unique_visitors: acc.uniques(r.bots),
        conversions: acc.cv,
        revenue: acc.revenue(),
        share: total === 0 ? 0 : clicks / total,
      })),
    };
  }

  async topLinks(scope: AnalyticsScope, query: TopLinksQuery): Promise<TopLinks> {
    const r = await this.resolve(scope, query);
    const sort = query.sort ?? 'clicks';
    const groups = (await this.collect(r, [{ start: r.start, end: r.end }], 'link', 'link'))[0]!;
    const rows = [...groups.entries()]
      .map(([id, acc]) => ({ id, acc, clicks: acc.clicks(r.bots), uniques: -1 }))
      .filter((row) => row.clicks > 0);
    if (sort === 'unique_visitors') for (const row of rows) row.uniques = row.acc.uniques(r.bots);
    rows.sort((a, b) => (sort === 'clicks' ? b.clicks - a.clicks : b.uniques - a.uniques || b.clicks - a.clicks) || (a.id < b.id ? -1 : 1));
    const top = rows.slice(0, query.limit ?? 10);
    const docs = await this.o.links
      .find({ _id: { $in: top.map((row) => row.id) }, workspace_id: r.workspaceId }, { projection: { domain_id: 1, domain: 1, slug: 1, url: 1 } })
      .toArray();
    const byId = new Map(docs.map((d) => [d._id, d]));
    return {
      range: rangeView(r),
      bots: r.bots,
      sort,
      data: top.map(({ id, acc, clicks, uniques }) => {
        const link = byId.get(id);
        const base = link ? (link.domain_id === DEFAULT_DOMAIN_ID ? this.o.defaultBaseUrl : `https://${link.domain}`) : null;
        return {
          id,
          short_url: link ? `${base}/${link.slug}` : null,
          url: link?.url ?? null,
          domain: link?.domain ?? null,
          slug: link?.slug ?? null,
          clicks,
          unique_visitors: uniques >= 0 ? uniques : acc.uniques(r.bots),
          conversions: acc.cv,
          revenue: acc.revenue(),
        };
      }),
    };
  }

  /**
   * Sums the rollup cells of the scope's workspaces into each bucket, grouped by value (a breakdown), by link, by
   * workspace, or not at all; the visitor filter restricts the cells of its dimension. Which documents:
   *   no link filter, not by link under a visitor filter → workspace-level documents (any grain);
   *   per-link totals (a link filter or by link, no visitor filter, not by another dimension) → the workspace-level
   *     `link` cells of those links (any grain);
   *   a link's figures per dimension value (a link filter with a visitor filter or a breakdown, or by link under a
   *     visitor filter) → link-level documents for the whole UTC days, raw clicks for the partial days at the edges.
   */
  private async collect(r: Resolved, buckets: readonly Bucket[], groupBy: GroupBy, dimension?: Dimension): Promise<Array<Map<string, Acc>>> {
    const out = buckets.map(() => new Map<string, Acc>());
    const index = new BucketIndex(buckets);
    const filter = r.visitor;
    if (r.links !== null && r.links.length === 0) return out;
    // What the cells of this query are beyond their parts, for the estimate memo (JSON: one string names one query).
    const { memo } = this.o;
    let scope: MemoScope | null = null;
    const scopeOf = (dim: string, keys: Iterable<string> | null): MemoScope | null => (memo ? { memo, cells: JSON.stringify([dim, groupBy, keys ? [...keys].sort() : null]) } : null);
    const accOf = (bucket: number, group: string): Acc => {
      const groups = out[bucket]!;
      let acc = groups.get(group);
      if (!acc) groups.set(group, (acc = new Acc(scope, group)));
      return acc;
    };

    if (filter === null && groupBy !== 'value' && (r.links !== null || groupBy === 'link')) {
      const keys = r.links ? new Set(r.links.map(cellKey)) : null;
      scope = scopeOf('link', keys);
      const docs = this.o.rollups.read({ workspaceId: r.workspaces, links: null, dimension: 'link', runs: index.allRuns(), keys: keys ? [...keys] : undefined });
      for await (const doc of docs) {
        const bucket = index.find(doc.g, doc.t);
        if (bucket < 0) continue;
        for (const cell of doc.cells) accOf(bucket, groupBy === 'none' ? '' : groupBy === 'workspace' ? doc.w : cellValue(cell.key)!).add(cell, doc.part);
      }
      return out;
    }

    const linkLevel = (r.links !== null && (filter !== null || groupBy === 'value')) || (groupBy === 'link' && filter !== null);
    const links: readonly string[] | null | 'all-links' = linkLevel ? (r.links ?? 'all-links') : null;
    // Which cells: the filter's dimension, else the breakdown's, else the totals.
    const dim: Dimension | typeof TOTAL = filter ? filter.dim : groupBy === 'value' ? dimension! : TOTAL;
    const groupOf = (w: string, l: string, key: string): string => (groupBy === 'none' ? '' : groupBy === 'workspace' ? w : groupBy === 'link' ? l : key);
    const runs = index.allRuns();
    scope = scopeOf(dim, filter ? filter.keys : null);
    const docs = this.o.rollups.read({ workspaceId: r.workspaces, links, dimension: dim, runs: linkLevel ? runs.filter((run) => run.grain === 'd') : runs, keys: filter ? [...filter.keys] : undefined });
    for await (const doc of docs) {
      const bucket = index.find(doc.g, doc.t);
      if (bucket < 0) continue;
      for (const cell of doc.cells) accOf(bucket, groupOf(doc.w, doc.l, cell.key)).add(cell, doc.part);
    }
    if (!linkLevel || links === null || dim === TOTAL) return out;

    // The partial UTC days at the edges, from raw clicks: counted as the rollups count them (clicks once rolled up,
    // conversions whenever added).
    for (const window of edgeWindows(runs)) {
      for await (const doc of this.o.edges.read({ workspaces: r.workspaces, links, from: window.from, to: window.to })) {
        const ms = doc.ts.getTime();
        const bucket = bucketOf(buckets, ms);
        if (bucket < 0) continue;
        const click = fromClickDoc(doc);
        const key = cellKey(dimensionValues(click)[dim]);
        if (filter && !filter.keys.has(key)) continue;
        accOf(bucket, groupOf(doc.workspace_id, doc.link_id, key)).addClick(doc.rolled_up === true, isBot(click.visitor.visitor_type), click.visitor.visitor_id, doc.conversions ?? 0, doc.revenue);
      }
    }
    return out;
  }
}

/** The runs finer than a day, joined where adjacent: the partial UTC days of a range's buckets. */
function edgeWindows(runs: readonly Run[]): Array<{ from: number; to: number }> {
  const windows: Array<{ from: number; to: number }> = [];
  for (const run of [...runs].filter((r) => r.grain !== 'd').sort((a, b) => a.from - b.from)) {
    const last = windows[windows.length - 1];
    if (last && last.to >= run.from) last.to = Math.max(last.to, run.to);
    else windows.push({ from: run.from, to: run.to });
  }
  return windows;
}

/** The bucket holding an instant (buckets are sorted and disjoint), or -1. */
function bucketOf(buckets: readonly Bucket[], ms: number): number {
  let lo = 0;
  let hi = buckets.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (buckets[mid]!.end <= ms) lo = mid + 1;
    else if (buckets[mid]!.start > ms) hi = mid - 1;
    else return mid;
  }
  return -1;
}

function compareKeys(a: string, b: string): number {
  // null values last, then by value.
  if (a === b) return 0;
  if (a === '~') return 1;
  if (b === '~') return -1;
  return a < b ? -1 : 1;
}

export function autoGranularity(lengthMs: number): Granularity {
  if (lengthMs <= 2 * DAY_MS) return 'hour';
  if (lengthMs <= 92 * DAY_MS) return 'day';
  return 'month';
}

/** Zero-filled local buckets of the granularity covering [start, end); the first and last cut by the range. */
export function timeBuckets(start: number, end: number, zone: string, granularity: Granularity, parameter: string): Bucket[] {
  const buckets: Bucket[] = [];
  let from = start;
  let period = periodStart(start, zone, granularity);
  while (from < end) {
    let next = nextPeriod(period, zone, granularity);
    if (next <= from) next = from + HOUR_MS; // never loop on a zone quirk
    buckets.push({ start: from, end: Math.min(next, end) });
    if (buckets.length > MAX_BUCKETS) {
      throw new ValidationError([{ path: parameter, message: `the range holds more than ${MAX_BUCKETS} ${granularity} buckets; choose a coarser granularity or a shorter range` }]);
    }
    from = next;
    period = next;
  }
  return buckets;
}
