// The analytics rollups: the clicks (all and bots), conversions and revenue of every dimension value, with a
// HyperLogLog sketch of the human and of the bot visitors of each. Two families of documents hold them:
//   workspace level, per UTC quarter-hour, hour and day, one document per (workspace, grain, bucket, group of
//     dimensions): `l` is '', `d` the group ('_': the totals; 'small': the dimensions with few values; else one
//     dimension with many values, `link` among them: the per-link totals);
//   link level, per UTC day only, one document per (workspace, link, day) holding every dimension but `link` (the
//     document's totals are that cell): `l` the link id, `d` '*'.
// Cells sit at `v.<dimension>.<value key>` ({c, b, cv, rev: {<ISO currency>: minor units}}), `$inc`ed without being
// read; the ingester writes a batch's increments in one transaction with the marking of its clicks, so each click is
// counted once (see RollupWriter.rollUp). Their unique-visitor sketches are kept apart (sketch.store.ts): appended per
// batch and merged every few batches after the transaction, because reading and rewriting every touched sketch per
// batch made rollups cost most of ingestion. Documents written before that may still hold sketches at `s.<dimension>.<value key>` ({h, b});
// reads take the union of both.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Binary, type AnyBulkWriteOperation, type ClientSession, type Collection, type Db, type Document, type Filter, type MongoClient } from 'mongodb';
import type { ClickRecord } from '../clicks/click-record.ts';
import type { ClickDoc } from '../clicks/click.store.ts';
import { CELL_PRECISION, TOTAL_PRECISION, hashVisitor, registerOf, registersToBytes } from './hll.ts';
import { SketchStore, addParts, type CellSketchParts, type CellSketches, type SketchPartDoc, type Sketches } from './sketch.store.ts';
import { DIMENSIONS, TOTAL, cellKey, dimensionValues, documentGroup, isBot, type Dimension } from './dimensions.ts';
import { GRAIN_MS, bucketStart, type Grain, type Run } from './time.ts';

export interface CellCounts {
  /** Clicks, bots included. */
  c: number;
  /** Bot clicks. */
  b: number;
  /** Conversions attributed to clicks of the cell. */
  cv: number;
  /** Revenue of those conversions per ISO 4217 currency, in integer minor units (currencies never add up). */
  rev?: Revenue;
}

/** Integer minor units per ISO 4217 currency code, e.g. `{ EUR: 1250, USD: 300 }`. */
export type Revenue = Record<string, number>;

/** Adds `from` into `into`, currency by currency. */
export function addRevenue(into: Revenue, from: Readonly<Revenue> | undefined): void {
  if (!from) return;
  for (const currency of Object.keys(from)) into[currency] = (into[currency] ?? 0) + from[currency]!;
}

export interface RollupDoc {
  _id: string;
  w: string;
  /** '' at workspace level, else the link id. */
  l: string;
  g: Grain;
  t: Date;
  /** The group of dimensions at workspace level ('_' for the totals, see documentGroup), '*' at link level. */
  d: string;
  v: Record<string, Record<string, CellCounts>>;
  /** Sketches of documents written before they were kept apart (see sketch.store.ts); absent since. */
  s?: Sketches;
}

/** A rollup document as read for a query: its counts, and every stored part of its cells' sketches. */
export interface RollupView extends Omit<RollupDoc, 's' | '_id'> {
  s?: Record<string, Record<string, CellSketchParts>>;
}

export const LINK_LEVEL = '*';
const GRAINS: readonly Grain[] = ['q', 'h', 'd'];
// Link-level documents (every dimension of one link) exist per UTC day only: per quarter-hour and hour they held
// about one document per click (a long tail of links gets a click or two per quarter-hour), which no database holds
// at tens of millions of clicks. Per-link totals at every grain are the workspace-level `link` cells; the partial
// days at the edges of a link-filtered breakdown are counted from raw clicks (see EdgeClickStore).
const WORKSPACE_GRAINS = ['h', 'd'] as const;
const LINK_GRAINS = ['d'] as const;
/** Ids per query when rollup documents are read by id. */
const ID_CHUNK = 5000;
/**
 * A batch is worked out a slice at a time, giving the event loop a turn between slices: a batch of thousands of clicks
 * held the worker's thread (webhook deliveries, the outbox relay) for 400 ms at once. Each slice is a few milliseconds.
 */
const YIELD_CLICKS = 500;
const YIELD_DOCUMENTS = 250;
/** Upserts per bulk write: each is serialised at once, hundreds of counters apiece. */
const WRITE_CHUNK = 250;

function docId(w: string, l: string, g: Grain, t: number, d: string): string {
  return `${w}|${l}|${g}|${t}|${d}`;
}

/** One cell's increments within a batch. */
interface CellAcc {
  dim: string;
  key: string;
  c: number;
  b: number;
  cv: number;
  rev: Revenue;
  /** Packed `index << 8 | rank` register updates of human and bot visitors. */
  humans: number[];
  bots: number[];
}

interface DocAcc {
  w: string;
  l: string;
  g: Grain;
  t: number;
  d: string;
  cells: Map<string, CellAcc>;
}

export interface Increment {
  clicks: boolean;
  conversions: number;
  revenue: Readonly<Revenue>;
}

const CLICK: Increment = { clicks: true, conversions: 0, revenue: {} };

/** Builds a batch's increments per rollup document: quarter-hours first, hours and days summed from them. */
class BatchRollup {
  private readonly quarters = new Map<string, DocAcc>();

  add(click: ClickRecord, inc: Increment): void {
    const ms = Date.parse(click.ts);
    const t = bucketStart(ms, 'q');
    const bot = isBot(click.visitor.visitor_type);
    const hash = inc.clicks ? hashVisitor(click.visitor.visitor_id) : null;
    const total = hash ? registerOf(hash, TOTAL_PRECISION) : null;
    const cell = hash ? registerOf(hash, CELL_PRECISION) : null;
    const totalReg = total ? (total.index << 8) | total.rank : -1;
    const cellReg = cell ? (cell.index << 8) | cell.rank : -1;
    const values = dimensionValues(click);
    const linkDoc = this.doc(click.workspace_id, click.link_id, t, LINK_LEVEL);
    this.count(this.doc(click.workspace_id, '', t, TOTAL), TOTAL, TOTAL, inc, bot, totalReg);
    this.count(linkDoc, TOTAL, TOTAL, inc, bot, totalReg);
    for (const dim of DIMENSIONS) {
      const key = cellKey(values[dim]);
      this.count(this.doc(click.workspace_id, '', t, documentGroup(dim)), dim, key, inc, bot, cellReg);
      // A link's document has no `link` cell: it would repeat the document's totals, and nothing reads it.
      if (dim !== 'link') this.count(linkDoc, dim, key, inc, bot, cellReg);
    }
  }

  private doc(w: string, l: string, t: number, d: string): DocAcc {
    const id = docId(w, l, 'q', t, d);
    let doc = this.quarters.get(id);
    if (!doc) this.quarters.set(id, (doc = { w, l, g: 'q', t, d, cells: new Map() }));
    return doc;
  }

  private count(doc: DocAcc, dim: string, key: string, inc: Increment, bot: boolean, reg: number): void {
    const id = dim === TOTAL ? TOTAL : `${dim}\u0000${key}`;
    let cell = doc.cells.get(id);
    if (!cell) doc.cells.set(id, (cell = { dim, key, c: 0, b: 0, cv: 0, rev: {}, humans: [], bots: [] }));
    if (inc.clicks) {
      cell.c++;
      if (bot) {
        cell.b++;
        cell.bots.push(reg);
      } else cell.humans.push(reg);
    }
    cell.cv += inc.conversions;
    addRevenue(cell.rev, inc.revenue);
  }

  /** Every document of the batch at each grain. */
  documents(): DocAcc[] {
    const out = new Map<string, DocAcc>();
    for (const q of this.quarters.values()) {
      const linkLevel = q.l !== '';
      if (!linkLevel) out.set(docId(q.w, q.l, 'q', q.t, q.d), q);
      for (const g of linkLevel ? LINK_GRAINS : WORKSPACE_GRAINS) {
        const t = bucketStart(q.t, g);
        const id = docId(q.w, q.l, g, t, q.d);
        let doc = out.get(id);
        if (!doc) out.set(id, (doc = { w: q.w, l: q.l, g, t, d: q.d, cells: new Map() }));
        for (const [cid, cell] of q.cells) {
          const into = doc.cells.get(cid);
          if (!into) doc.cells.set(cid, { ...cell, rev: { ...cell.rev }, humans: cell.humans, bots: cell.bots });
          else {
            into.c += cell.c;
            into.b += cell.b;
            into.cv += cell.cv;
            addRevenue(into.rev, cell.rev);
            into.humans = into.humans.concat(cell.humans);
            into.bots = into.bots.concat(cell.bots);
          }
        }
      }
    }
    return [...out.values()];
  }
}

export class RollupStore {
  readonly rollups: Collection<RollupDoc>;
  readonly sketches: SketchStore;

  constructor(db: Db) {
    this.rollups = db.collection<RollupDoc>('analytics_rollups');
    this.sketches = new SketchStore(db);
  }

  async ensureIndexes(): Promise<void> {
    await this.rollups.createIndexes([
      // Workspace-level reads (a dimension or the totals over time) and reads of chosen links.
      { key: { w: 1, l: 1, d: 1, g: 1, t: 1 }, name: 'workspace_link_dimension_time' },
      // Every link of a workspace over time (top links under a visitor filter).
      { key: { w: 1, d: 1, g: 1, t: 1 }, name: 'workspace_dimension_time' },
    ]);
    await this.sketches.ensureIndexes();
  }

  /**
   * Adds clicks (or conversions) to the rollups: counts as `$inc` upserts, visitors as one sketch part per document.
   * Pass the session of a transaction so the batch is counted entirely or not at all. Without one, the documents
   * due for compaction are compacted before returning; with one, call `compactSketches` once it has committed.
   */
  async apply(clicks: readonly ClickRecord[], options: { session?: ClientSession; increment?: Increment } = {}): Promise<void> {
    if (clicks.length === 0) return;
    const batch = new BatchRollup();
    const inc = options.increment ?? CLICK;
    for (let i = 0; i < clicks.length; i++) {
      batch.add(clicks[i]!, inc);
      if (i % YIELD_CLICKS === YIELD_CLICKS - 1) await nextTurn();
    }
    const session = options.session;
    const ops: AnyBulkWriteOperation<RollupDoc>[] = [];
    const parts: SketchPartDoc[] = [];
    const documents = batch.documents();
    for (let i = 0; i < documents.length; i++) {
      const doc = documents[i]!;
      if (i % YIELD_DOCUMENTS === YIELD_DOCUMENTS - 1) await nextTurn();
      const _id = docId(doc.w, doc.l, doc.g, doc.t, doc.d);
      const $inc: Record<string, number> = {};
      const sketches: Sketches = {};
      let visitors = false;
      for (const cell of doc.cells.values()) {
        const base = `v.${cell.dim}.${cell.key}`;
        // Only what changes: a missing counter reads as 0.
        if (cell.c !== 0) $inc[`${base}.c`] = cell.c;
        if (cell.b !== 0) $inc[`${base}.b`] = cell.b;
        if (cell.cv !== 0) $inc[`${base}.cv`] = cell.cv;
        for (const currency of Object.keys(cell.rev)) if (cell.rev[currency] !== 0) $inc[`${base}.rev.${currency}`] = cell.rev[currency]!;
        if (cell.humans.length + cell.bots.length === 0) continue;
        const precision = cell.dim === TOTAL ? TOTAL_PRECISION : CELL_PRECISION;
        const sketch: CellSketches = {};
        if (cell.humans.length > 0) sketch.h = new Binary(registersToBytes(cell.humans, precision));
        if (cell.bots.length > 0) sketch.b = new Binary(registersToBytes(cell.bots, precision));
        (sketches[cell.dim] ??= {})[cell.key] = sketch;
        visitors = true;
      }
      const update: Document = { $setOnInsert: { w: doc.w, l: doc.l, g: doc.g, t: new Date(doc.t), d: doc.d } };
      if (Object.keys($inc).length > 0) update.$inc = $inc;
      ops.push({ updateOne: { filter: { _id }, update, upsert: true } });
      if (visitors) parts.push({ r: _id, s: sketches });
    }
    // Bounded bulk writes: a batch over many links may touch thousands of documents.
    for (let i = 0; i < ops.length; i += WRITE_CHUNK) await this.rollups.bulkWrite(ops.slice(i, i + WRITE_CHUNK), { ordered: false, session });
    await this.sketches.insert(parts, session);
    if (!session) await this.sketches.compactDue();
  }

  /** Merges the sketch parts of the documents that received many (after the transaction that wrote them). */
  compactSketches(): Promise<void> {
    return this.sketches.compactDue();
  }

  /**
   * For the conversions feature: adds conversions (and revenue, integer minor units per ISO currency) to every cell of the click
   * they are attributed to, in the same buckets as its click. Pass the session of the transaction that records the
   * conversion, so a conversion is counted once.
   */
  addConversions(click: ClickRecord, conversions: number, revenue: Readonly<Revenue>, session?: ClientSession): Promise<void> {
    return this.apply([click], { session, increment: { clicks: false, conversions, revenue } });
  }

  /**
   * Rollup documents of a workspace (or of a set of workspaces: a partner's clients) for the given runs of buckets,
   * level and dimension, with the fields asked. Each document names its workspace (`w`).
   */
  async *read(query: {
    workspaceId: string | readonly string[];
    /** null: workspace level; an array: those links; 'all-links': every link-level document. */
    links: readonly string[] | null | 'all-links';
    dimension: Dimension | typeof TOTAL;
    runs: readonly Run[];
    sketches: boolean;
    /** Only these cells of the dimension (their keys), when few; else all. */
    keys?: readonly string[];
  }): AsyncGenerator<RollupView> {
    const { workspaceId, links, dimension, runs } = query;
    if (Array.isArray(links) && links.length === 0) return;
    if (typeof workspaceId !== 'string' && workspaceId.length === 0) return;
    const workspaces: string[] = typeof workspaceId === 'string' ? [workspaceId] : [...workspaceId];
    let projection: Document | undefined = { w: 1, l: 1, g: 1, t: 1 };
    // A few chosen cells (links of a link filter) are projected one by one: a document may hold thousands.
    const cells = query.keys && query.keys.length <= 64 ? query.keys.map((k) => `${dimension}.${k}`) : [dimension];
    for (const cell of cells) {
      projection[`v.${cell}`] = 1;
      if (query.sketches) projection[`s.${cell}`] = 1;
    }
    // The totals' documents hold the totals cell alone: the whole document is what a projection would keep.
    if (dimension === TOTAL && links === null && query.sketches) projection = undefined;
    const sketchPaths = query.sketches ? cells : null;
    if (links === 'all-links') {
      // Links unknown beforehand: every link-level document of each run, through the (w, d, g, t) index.
      const w = workspaces.length === 1 ? workspaces[0]! : { $in: workspaces };
      let chunk: RollupDoc[] = [];
      for (const run of mergeRuns(runs)) {
        const filter: Filter<RollupDoc> = { w, d: LINK_LEVEL, g: run.grain, t: { $gte: new Date(run.from), $lt: new Date(run.to) } };
        for await (const doc of this.rollups.find(filter, { projection })) {
          chunk.push(doc);
          if (chunk.length >= ID_CHUNK) {
            yield* await this.withSketches(chunk, sketchPaths);
            chunk = [];
          }
        }
      }
      if (chunk.length > 0) yield* await this.withSketches(chunk, sketchPaths);
      return;
    }
    // Every other read knows the documents it wants: their ids are (workspace, link, grain, bucket, group), so they
    // are fetched by id, a lookup each, in one query per few thousand, instead of one ranged query per run (a
    // 90-day range in Kolkata is 180 runs, and each walked every document of its group and grain).
    const d = links === null ? documentGroup(dimension) : LINK_LEVEL;
    const ls: readonly string[] = links === null ? [''] : links;
    let ids: string[] = [];
    for (const run of mergeRuns(runs)) {
      const step = GRAIN_MS[run.grain];
      for (let t = run.from; t < run.to; t += step) for (const w of workspaces) for (const l of ls) ids.push(docId(w, l, run.grain, t, d));
      if (ids.length >= ID_CHUNK) {
        yield* this.byIds(ids, projection, sketchPaths);
        ids = [];
      }
    }
    if (ids.length > 0) yield* this.byIds(ids, projection, sketchPaths);
  }

  private async *byIds(ids: readonly string[], projection: Document | undefined, sketchPaths: readonly string[] | null): AsyncGenerator<RollupView> {
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const filter: Filter<RollupDoc> = { _id: { $in: ids.slice(i, i + ID_CHUNK) } };
      yield* await this.withSketches(await this.rollups.find(filter, projection ? { projection } : {}).toArray(), sketchPaths);
    }
  }

  /**
   * The documents with the parts of their sketches (null paths: counts only). The parts are read after the counts:
   * a compaction in between leaves the union the same, and a part written in between only adds visitors of clicks
   * that are newer than the counts.
   */
  private async withSketches(docs: readonly RollupDoc[], paths: readonly string[] | null): Promise<RollupView[]> {
    const parts = paths && docs.length > 0 ? await this.sketches.read(docs.map((doc) => doc._id), paths) : null;
    return docs.map(({ _id, s, ...rest }) => {
      const view: RollupView = rest;
      if (!paths) return view;
      const cells = parts?.get(_id) ?? {};
      addParts(cells, s);
      view.s = cells;
      return view;
    });
  }

  /** Earliest bucket holding clicks of the workspace, or of any of a set of workspaces (for interval=all), or null. */
  async firstBucket(workspaceId: string | readonly string[]): Promise<Date | null> {
    if (typeof workspaceId !== 'string' && workspaceId.length === 0) return null;
    const w = typeof workspaceId === 'string' ? workspaceId : { $in: [...workspaceId] };
    const doc = await this.rollups.find({ w, l: '', d: TOTAL, g: 'd' }, { projection: { t: 1 } }).sort({ t: 1 }).limit(1).next();
    return doc?.t ?? null;
  }

  async deleteWorkspace(workspaceId: string): Promise<number> {
    await this.sketches.deleteWorkspace(workspaceId);
    return (await this.rollups.deleteMany({ w: workspaceId })).deletedCount;
  }

  /** Every rollup document and sketch of every workspace (a full rebuild of all workspaces). */
  async deleteAll(): Promise<number> {
    await this.sketches.deleteAll();
    return (await this.rollups.deleteMany({})).deletedCount;
  }
}

/** Joins adjacent runs of the same grain (a range's runs come sorted; a time series' buckets are adjacent). */
export function mergeRuns(runs: readonly Run[]): Run[] {
  const byGrain = new Map<Grain, Run[]>();
  for (const r of runs) {
    const list = byGrain.get(r.grain) ?? [];
    list.push(r);
    byGrain.set(r.grain, list);
  }
  const out: Run[] = [];
  for (const g of GRAINS) {
    const list = (byGrain.get(g) ?? []).sort((a, b) => a.from - b.from);
    for (const r of list) {
      const last = out[out.length - 1];
      if (last && last.grain === g && last.to >= r.from) last.to = Math.max(last.to, r.to);
      else out.push({ ...r });
    }
  }
  return out;
}

/** Marks raw clicks as rolled up; with the rollup increments in one transaction it makes counting exactly-once. */
export class RollupWriter {
  private readonly client: MongoClient;
  private readonly store: RollupStore;
  private readonly clicks: Collection<ClickDoc>;

  constructor(options: { client: MongoClient; store: RollupStore; clicks: Collection<ClickDoc> }) {
    this.client = options.client;
    this.store = options.store;
    this.clicks = options.clicks;
  }

  /**
   * In one transaction: takes the clicks of the batch not yet rolled up, marks them rolled up and adds them to the
   * rollups. A redelivered batch finds its clicks marked and adds nothing; a worker dying mid-batch commits nothing,
   * and the redelivery rolls the whole batch up. (Counting only the clicks whose raw insert was new would lose the
   * clicks of a worker that died between the insert and the increments.) Returns the clicks rolled up now.
   */
  async rollUp(records: readonly ClickRecord[]): Promise<ClickRecord[]> {
    if (records.length === 0) return [];
    const session = this.client.startSession();
    try {
      let fresh: ClickRecord[] = [];
      await session.withTransaction(async () => {
        const ids = [...new Set(records.map((r) => r.id))];
        // Fetched by id alone and sorted out here: a filter on `rolled_up` too has the database decode every click
        // to check it, where ids and a projection are read from the stored bytes.
        const found = await this.clicks.find({ _id: { $in: ids } }, { projection: { _id: 1, rolled_up: 1 }, session }).toArray();
        const open = new Set(found.filter((d) => d.rolled_up === false || d.rolled_up == null).map((d) => d._id));
        const seen = new Set<string>();
        fresh = records.filter((r) => open.has(r.id) && !seen.has(r.id) && (seen.add(r.id), true));
        if (fresh.length === 0) return;
        await this.clicks.updateMany({ _id: { $in: [...open] } }, { $set: { rolled_up: true } }, { session });
        await this.store.apply(fresh, { session });
      });
      if (fresh.length > 0) await this.store.compactSketches();
      return fresh;
    } finally {
      await session.endSession();
    }
  }

  /** The click-ingester hook (ClickIngestorOptions.counting). */
  readonly afterCount = async (counted: readonly ClickRecord[]): Promise<void> => {
    await this.rollUp(counted);
  };
}

export { GRAIN_MS };
