// The analytics rollups: the clicks (all and bots), conversions and revenue of every dimension value, with a
// HyperLogLog sketch of the human and of the bot visitors of each, per UTC bucket. A rollup is named by
// (workspace, link, grain, bucket, group):
//   workspace level, per UTC quarter-hour, hour, six hours and day: `l` is '', `d` the group ('_': the totals; 'small': the
//     dimensions with few values; else one dimension with many values, `link` among them: the per-link totals);
//   link level, per UTC day only: `l` the link id, `d` '*', holding every dimension but `link` (its totals are the
//     '_' cell).
// A rollup is stored as parts (collection analytics_parts), each holding some of its clicks, one binary value of
// packed cells per dimension (cells.ts): an ingested batch inserts one part per rollup it touches, and reads add the
// parts up. Nothing on the ingestion path reads or rewrites stored figures: inserting a part is the whole write, in
// the transaction that inserts the batch's raw clicks (or marks stored ones rolled up), so each click is counted
// exactly once (RollupWriter).
// Parts are merged in transactions that insert the merged part and delete the parts it replaces (so a part is never
// counted twice, nor lost):
//   - by the writer, every COMPACT_AFTER parts it wrote to a rollup, the small parts only (a part that outweighs the
//     rest together is left alone), so a cell is rewritten a logarithmic number of times however long its bucket;
//   - by the settling job (RollupSettler), once a bucket has ended (SETTLE_AFTER_MS): all its parts into one.
// Reads take one snapshot of the parts (a snapshot session), so a merge committed meanwhile is seen wholly or not at all.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Binary, type ClientSession, type Collection, type Db, type Filter, type MongoClient, type ObjectId } from 'mongodb';
import { Counter, type Registry } from 'prom-client';
import type { ClickRecord } from '../visitor/click-record.ts';
import { INSERT_CHUNK, duplicateIdErrors, eachIdOnce, toClickDoc, type ClickDoc } from '../clicks/click.store.ts';
import { inTransaction } from '../platform/mongo.ts';
import { CELL_PRECISION, TOTAL_PRECISION, hashVisitor, visitorKey } from './hll.ts';
import { addCell, addRevenue, decodeCells, encodeCells, encodeOneClick, newCell, type Cell, type CellBuilder, type Revenue } from './cells.ts';
import { DIMENSIONS, TOTAL, cellKey, dimensionValueList, documentGroup, isBot, type Dimension } from './dimensions.ts';
import { GRAIN_MS, bucketStart, type Grain, type Run } from './time.ts';
import { PartCache } from './part-cache.ts';

export { addRevenue, type Revenue } from './cells.ts';

/** One stored part of a rollup. */
export interface RollupPartDoc {
  _id?: ObjectId;
  /** The rollup (rollupId): its workspace, group, grain, bucket and link, in an order its index reads by range. */
  r: string;
  /** Bytes of the packed cells (merges take the small parts first). */
  z: number;
  /** When the bucket ends, until the part is settled (merged once the bucket is over); absent after. */
  u?: Date;
  /** Packed cells per dimension (cells.ts). */
  c: Record<string, Binary>;
}

/** What a rollup id names. */
export interface RollupKey {
  w: string;
  /** '' at workspace level, else the link id. */
  l: string;
  g: Grain;
  /** The bucket's start (ms). */
  t: number;
  /** The group of dimensions at workspace level ('_' for the totals, see documentGroup), '*' at link level. */
  d: string;
}

/** The cells of one dimension of one stored part, as read for a query. */
export interface RollupView extends RollupKey {
  /** The part's id: a part never changes, so its id names these cells for good. */
  part: string;
  cells: Cell[];
}

export const LINK_LEVEL = '*';
const GRAINS: readonly Grain[] = ['q', 'h', 's', 'd'];
// Link-level rollups (every dimension of one link) exist per UTC day only: per quarter-hour and hour they held
// about one document per click (a long tail of links gets a click or two per quarter-hour), which no database holds
// at tens of millions of clicks. Per-link totals at every grain are the workspace-level `link` cells; the partial
// days at the edges of a link-filtered breakdown are counted from raw clicks (see EdgeClickStore).
const WORKSPACE_GRAINS = ['h', 's', 'd'] as const;
/**
 * Parts per reply when their cells are read: about a megabyte of dense sketches. The driver copies each reply into a
 * buffer of its own; a 90-day New York series came as 13 MB replies, and the fresh memory of each (page faults, then
 * collections driven by memory outside the heap) cost the api more than merging the sketches did.
 */
const READ_BATCH = 64;
/** Rollup ids per query when parts are read by rollup id. */
const ID_CHUNK = 5000;
/**
 * A batch is worked out a slice at a time, giving the event loop a turn between slices: a batch of thousands of clicks
 * held the worker's thread (webhook deliveries, the outbox relay) for 400 ms at once. Each slice is a few milliseconds.
 */
const YIELD_CLICKS = 500;
const YIELD_DOCUMENTS = 250;
/** Parts per insert: a write is serialised at once. */
const WRITE_CHUNK = 200;
/** Parts a process writes to a rollup before it merges the small ones. */
export const COMPACT_AFTER = 8;
/** Rollups per merging transaction. */
const COMPACT_CHUNK = 200;
/** Unsettled parts the settling job reads at a time. */
const SETTLE_CHUNK = 5000;
/** A bucket's parts are merged into one this long after it ends (late clicks after that add a part, merged next time). */
export const SETTLE_AFTER_MS = 5 * 60_000;

/**
 * `<workspace>|<group>|<grain>|<bucket ms, 13 digits>|<link>`: ordered so that the one index on it answers a workspace's
 * parts (deletion), a group and grain over a time range (every link of a workspace, the first bucket), and one rollup.
 * Workspace ids and groups hold no `|`; the link id is the rest.
 */
export function rollupId(w: string, l: string, g: Grain, t: number, d: string): string {
  return `${w}|${d}|${g}|${String(t).padStart(13, '0')}|${l}`;
}

/** The start of the ids of a workspace's group and grain (add a padded time to narrow it). */
export function rollupPrefix(w: string, d: string, g: Grain): string {
  return `${w}|${d}|${g}|`;
}

export function parseRollupId(r: string): RollupKey {
  const a = r.indexOf('|');
  const b = r.indexOf('|', a + 1);
  const c = r.indexOf('|', b + 1);
  const e = r.indexOf('|', c + 1);
  if (a < 0 || b < 0 || c < 0 || e < 0) throw new RangeError(`not a rollup id: ${r}`);
  return { w: r.slice(0, a), d: r.slice(a + 1, b), g: r.slice(b + 1, c) as Grain, t: Number(r.slice(c + 1, e)), l: r.slice(e + 1) };
}

const padded = (t: number) => String(t).padStart(13, '0');

/** The cells of one rollup within a batch, per dimension. */
interface DocAcc {
  w: string;
  l: string;
  g: Grain;
  t: number;
  d: string;
  dims: Map<string, Map<string, CellBuilder>>;
  /** The cells of `dims` counted into, by slot (a dimension's index in DIMENSIONS, TOTAL_SLOT for the totals). */
  slots?: Array<Map<string, CellBuilder> | undefined>;
  /** An hour or day holding a single quarter-hour of the batch: its cells are that quarter-hour's, packed once. */
  same?: DocAcc;
  /**
   * A link's day while the batch has one click for it (most links of a batch): the click, not yet counted into `dims`,
   * packed straight from its cell keys if no other click comes (packOneClick).
   */
  lone?: OneClick;
  packed?: { c: Record<string, Binary>; z: number };
}

export interface Increment {
  clicks: boolean;
  conversions: number;
  revenue: Readonly<Revenue>;
}

const CLICK: Increment = { clicks: true, conversions: 0, revenue: {} };

/** One click of a rollup: its cell key per dimension (DIMENSIONS order), whether a bot, its registers (cell and total precision). */
interface OneClick {
  keys: string[];
  bot: boolean;
  cellReg: number;
  totalReg: number;
}

/** The workspace-level group of each dimension, in DIMENSIONS order. */
const GROUPS: readonly string[] = DIMENSIONS.map(documentGroup);
const TOTAL_SLOT = DIMENSIONS.length;
const LINK_SLOT = DIMENSIONS.indexOf('link');

/** Builds a batch's cells per rollup: workspace quarter-hours (hours and days summed from them), link days. */
class BatchRollup {
  private readonly quarters = new Map<string, DocAcc>();
  private readonly linkDays = new Map<string, DocAcc>();
  /** The last click's workspace quarter-hour rollups, per group, and its workspace's link days of its day, per link. */
  private lastQuarter: { w: string; t: number; totals: DocAcc; groups: DocAcc[] } | null = null;
  private lastDay: { w: string; t: number; links: Map<string, DocAcc> } | null = null;

  add(click: ClickRecord, inc: Increment): void {
    const ms = Date.parse(click.ts);
    const w = click.workspace_id;
    const bot = isBot(click.visitor.visitor_type);
    let totalReg = -1;
    let cellReg = -1;
    if (inc.clicks) {
      // One key for every sketch: the precision applies only once a sketch outgrows its exact set.
      totalReg = cellReg = visitorKey(hashVisitor(click.visitor.visitor_id));
    }
    const values = dimensionValueList(click);
    const keys = new Array<string>(DIMENSIONS.length);
    for (let i = 0; i < DIMENSIONS.length; i++) keys[i] = cellKey(values[i] ?? null);
    const quarter = this.quarterOf(w, bucketStart(ms, 'q'));
    count(quarter.totals, TOTAL_SLOT, TOTAL, inc, bot, totalReg);
    for (let i = 0; i < DIMENSIONS.length; i++) count(quarter.groups[i]!, i, keys[i]!, inc, bot, cellReg);
    const linkDay = this.linkDay(w, click.link_id, bucketStart(ms, 'd'));
    const one: OneClick = { keys, bot, cellReg, totalReg };
    if (inc === CLICK && linkDay.lone === undefined && linkDay.slots === undefined) linkDay.lone = one;
    else {
      if (linkDay.lone) {
        countLinkDay(linkDay, linkDay.lone, CLICK);
        linkDay.lone = undefined;
      }
      countLinkDay(linkDay, one, inc);
    }
  }

  /** The quarter-hour rollups of a workspace: the totals' and each dimension's (clicks come mostly in time order). */
  private quarterOf(w: string, t: number): { totals: DocAcc; groups: DocAcc[] } {
    const last = this.lastQuarter;
    if (last && last.w === w && last.t === t) return last;
    const docOf = (d: string): DocAcc => {
      const id = rollupId(w, '', 'q', t, d);
      let doc = this.quarters.get(id);
      if (!doc) this.quarters.set(id, (doc = { w, l: '', g: 'q', t, d, dims: new Map() }));
      return doc;
    };
    const quarter = { w, t, totals: docOf(TOTAL), groups: GROUPS.map(docOf) };
    this.lastQuarter = quarter;
    return quarter;
  }

  private linkDay(w: string, l: string, t: number): DocAcc {
    let day = this.lastDay;
    if (!day || day.w !== w || day.t !== t) this.lastDay = day = { w, t, links: new Map() };
    let doc = day.links.get(l);
    if (doc) return doc;
    const id = rollupId(w, l, 'd', t, LINK_LEVEL);
    doc = this.linkDays.get(id);
    if (!doc) this.linkDays.set(id, (doc = { w, l, g: 'd', t, d: LINK_LEVEL, dims: new Map() }));
    day.links.set(l, doc);
    return doc;
  }

  /** Every rollup of the batch: the quarter-hours, the hours and days summed from them, the link days. */
  documents(): DocAcc[] {
    const out = new Map<string, DocAcc>();
    const sources = new Map<string, { g: Grain; quarters: DocAcc[] }>();
    for (const q of this.quarters.values()) {
      out.set(rollupId(q.w, q.l, 'q', q.t, q.d), q);
      for (const g of WORKSPACE_GRAINS) {
        const id = rollupId(q.w, q.l, g, bucketStart(q.t, g), q.d);
        const source = sources.get(id);
        if (source) source.quarters.push(q);
        else sources.set(id, { g, quarters: [q] });
      }
    }
    for (const [id, { g, quarters }] of sources) {
      const first = quarters[0]!;
      const doc: DocAcc = { w: first.w, l: first.l, g, t: bucketStart(first.t, g), d: first.d, dims: new Map() };
      out.set(id, doc);
      // A batch usually spans a quarter-hour or two: most hours and days are one quarter-hour's cells.
      if (quarters.length === 1) {
        doc.same = first;
        continue;
      }
      for (const q of quarters) {
        for (const [dim, cells] of q.dims) {
          let into = doc.dims.get(dim);
          if (!into) doc.dims.set(dim, (into = new Map<string, CellBuilder>()));
          for (const [key, cell] of cells) {
            const target = into.get(key);
            if (!target) into.set(key, copyCell(cell));
            else sumInto(target, cell);
          }
        }
      }
    }
    for (const [id, doc] of this.linkDays) out.set(id, doc);
    return [...out.values()];
  }
}

/** Counts a click (or conversion) into a link's day. A link's rollup has no `link` cell: it would repeat its totals, and nothing reads it. */
function countLinkDay(doc: DocAcc, click: OneClick, inc: Increment): void {
  count(doc, TOTAL_SLOT, TOTAL, inc, click.bot, click.totalReg);
  for (let i = 0; i < DIMENSIONS.length; i++) if (i !== LINK_SLOT) count(doc, i, click.keys[i]!, inc, click.bot, click.cellReg);
}

/** Counts a click (or conversion) into the cell `key` of the dimension in `slot`. */
function count(doc: DocAcc, slot: number, key: string, inc: Increment, bot: boolean, reg: number): void {
  const slots = (doc.slots ??= []);
  let cells = slots[slot];
  if (!cells) {
    slots[slot] = cells = new Map<string, CellBuilder>();
    doc.dims.set(slot === TOTAL_SLOT ? TOTAL : DIMENSIONS[slot]!, cells);
  }
  let cell = cells.get(key);
  if (!cell) cells.set(key, (cell = newCell()));
  if (inc.clicks) {
    cell.c++;
    if (bot) {
      cell.b++;
      if (cell.botRegisters) cell.botRegisters.push(reg);
      else cell.botRegisters = [reg];
    } else if (cell.humanRegisters) cell.humanRegisters.push(reg);
    // Most cells of a batch see one visitor: an array of one, where a push into an empty array reserves seventeen.
    else cell.humanRegisters = [reg];
  }
  cell.cv += inc.conversions;
  if (inc !== CLICK && Object.keys(inc.revenue).length > 0) addRevenue((cell.rev ??= {}), inc.revenue);
}

function copyCell(cell: CellBuilder): CellBuilder {
  return {
    ...newCell(),
    c: cell.c,
    b: cell.b,
    cv: cell.cv,
    rev: cell.rev ? { ...cell.rev } : null,
    humanRegisters: cell.humanRegisters ? [...cell.humanRegisters] : null,
    botRegisters: cell.botRegisters ? [...cell.botRegisters] : null,
  };
}

function sumInto(into: CellBuilder, cell: CellBuilder): void {
  into.c += cell.c;
  into.b += cell.b;
  into.cv += cell.cv;
  if (cell.rev) addRevenue((into.rev ??= {}), cell.rev);
  if (cell.humanRegisters) for (const r of cell.humanRegisters) (into.humanRegisters ??= []).push(r);
  if (cell.botRegisters) for (const r of cell.botRegisters) (into.botRegisters ??= []).push(r);
}

/** The packed cells of each dimension, and their size. */
export function packCells(dims: Map<string, Map<string, CellBuilder>>): { c: Record<string, Binary>; z: number } {
  const c: Record<string, Binary> = {};
  let z = 0;
  for (const [dim, cells] of dims) {
    const bytes = encodeCells(cells, dim === TOTAL ? TOTAL_PRECISION : CELL_PRECISION);
    c[dim] = new Binary(bytes);
    z += bytes.length;
  }
  return { c, z };
}

/** The packed cells of a link's day holding one click: what packCells gives for it, without building its cells first. */
function packOneClick(click: OneClick): { c: Record<string, Binary>; z: number } {
  const c: Record<string, Binary> = {};
  let z = 0;
  const put = (dim: string, key: string, p: number, reg: number) => {
    const bytes = encodeOneClick(key, click.bot, reg, p);
    c[dim] = new Binary(bytes);
    z += bytes.length;
  };
  put(TOTAL, TOTAL, TOTAL_PRECISION, click.totalReg);
  for (let i = 0; i < DIMENSIONS.length; i++) if (i !== LINK_SLOT) put(DIMENSIONS[i]!, click.keys[i]!, CELL_PRECISION, click.cellReg);
  return { c, z };
}

/** One part holding the cells of several parts of a rollup (counts summed, sketches united). */
function mergeParts(parts: readonly RollupPartDoc[], settled: boolean): RollupPartDoc {
  const dims = new Map<string, Map<string, CellBuilder>>();
  for (const part of parts) {
    for (const dim of Object.keys(part.c)) {
      let cells = dims.get(dim);
      if (!cells) dims.set(dim, (cells = new Map<string, CellBuilder>()));
      for (const cell of decodeCells(part.c[dim]!.buffer)) {
        let into = cells.get(cell.key);
        if (!into) cells.set(cell.key, (into = newCell()));
        addCell(into, cell);
      }
    }
  }
  const merged: RollupPartDoc = { r: parts[0]!.r, ...packCells(dims) };
  // Merged before its bucket is settled: still to be settled (the parts' end of bucket).
  const open = settled ? undefined : parts.find((part) => part.u)?.u;
  if (open) merged.u = open;
  return merged;
}

/**
 * The parts worth merging among a rollup's: all but those that each outweigh every smaller part together (merged
 * again only once the others have grown to half their size), so a cell is rewritten a logarithmic number of times.
 */
export function smallParts<T extends { z: number }>(parts: readonly T[]): T[] {
  const sorted = [...parts].sort((a, b) => b.z - a.z);
  let rest = sorted.reduce((sum, p) => sum + p.z, 0);
  let i = 0;
  while (i < sorted.length) {
    rest -= sorted[i]!.z;
    if (sorted[i]!.z <= 2 * rest) break;
    i++;
  }
  return sorted.length - i >= 2 ? sorted.slice(i) : [];
}

export class RollupStore {
  readonly parts: Collection<RollupPartDoc>;
  private readonly client: MongoClient;
  /** Parts this process wrote per rollup since it last merged them, and the rollups due for a merge. */
  private readonly written = new Map<string, number>();
  private readonly due = new Set<string>();

  /** Bytes of parts read before, kept for later reads (an api process's; see part-cache.ts). */
  private cache: PartCache | null = null;

  constructor(db: Db) {
    this.parts = db.collection<RollupPartDoc>('analytics_parts');
    this.client = db.client;
  }

  /** Reads keep the bytes of the parts they fetch in `cache` and take them from there next time. */
  cacheParts(cache: PartCache | null): void {
    this.cache = cache;
  }

  async ensureIndexes(): Promise<void> {
    await this.parts.createIndexes([
      // A rollup's parts (every read that knows its rollups, and merges), and by range (see rollupId) every link of a
      // workspace over time (top links under a visitor filter), the first bucket, deletions.
      { key: { r: 1 }, name: 'rollup' },
      // Parts of buckets not settled yet.
      { key: { u: 1 }, name: 'unsettled', sparse: true },
    ]);
  }

  /**
   * Adds clicks (or conversions) to the rollups: one part per rollup the batch touches. Pass the session of a
   * transaction so the batch is counted entirely or not at all; then call `compactDue` once it has committed
   * (without a session, it is called before returning). `parts`: the parts `build` worked out for these same clicks.
   */
  async apply(clicks: readonly ClickRecord[], options: { session?: ClientSession; increment?: Increment; parts?: readonly RollupPartDoc[] } = {}): Promise<void> {
    if (clicks.length === 0) return;
    const parts = options.parts ?? (await this.build(clicks, options.increment));
    for (let i = 0; i < parts.length; i += WRITE_CHUNK) await this.parts.insertMany(parts.slice(i, i + WRITE_CHUNK), { ordered: false, session: options.session });
    for (const part of parts) {
      const n = (this.written.get(part.r) ?? 0) + 1;
      if (n >= COMPACT_AFTER) {
        this.written.delete(part.r);
        this.due.add(part.r);
      } else this.written.set(part.r, n);
    }
    if (!options.session) await this.compactDue();
  }

  /** The parts adding the clicks (or their conversions) to the rollups, worked out a slice at a time; nothing is written. */
  async build(clicks: readonly ClickRecord[], increment: Increment = CLICK): Promise<RollupPartDoc[]> {
    const batch = new BatchRollup();
    for (let i = 0; i < clicks.length; i++) {
      batch.add(clicks[i]!, increment);
      if (i % YIELD_CLICKS === YIELD_CLICKS - 1) await nextTurn();
    }
    const parts: RollupPartDoc[] = [];
    const documents = batch.documents();
    for (let i = 0; i < documents.length; i++) {
      const doc = documents[i]!;
      if (i % YIELD_DOCUMENTS === YIELD_DOCUMENTS - 1) await nextTurn();
      const source = doc.same ?? doc;
      const packed = (source.packed ??= source.lone ? packOneClick(source.lone) : packCells(source.dims));
      parts.push({ r: rollupId(doc.w, doc.l, doc.g, doc.t, doc.d), c: packed.c, z: packed.z, u: new Date(doc.t + GRAIN_MS[doc.g]) });
    }
    return parts;
  }

  /** Merges the small parts of the rollups this process wrote COMPACT_AFTER parts to (after the transaction that wrote them). */
  async compactDue(): Promise<void> {
    if (this.due.size === 0) return;
    const ids = [...this.due];
    this.due.clear();
    await this.compact(ids, false);
  }

  /**
   * Merges parts of the given rollups, each chunk in a transaction: `settle` merges all of a rollup's parts into one
   * settled part, else only its small ones (smallParts). A chunk another process merged meanwhile is left to it.
   */
  async compact(ids: readonly string[], settle: boolean): Promise<void> {
    for (let i = 0; i < ids.length; i += COMPACT_CHUNK) {
      const chunk = ids.slice(i, i + COMPACT_CHUNK);
      const session = this.client.startSession();
      try {
        await session.withTransaction(() => this.compactChunk(chunk, settle, session));
      } catch (error) {
        if (!(error instanceof MergedMeanwhile)) throw error;
      } finally {
        await session.endSession();
      }
      await nextTurn();
    }
  }

  private async compactChunk(ids: readonly string[], settle: boolean, session: ClientSession): Promise<void> {
    const heads = await this.parts.find({ r: { $in: [...ids] } }, { projection: { _id: 1, r: 1, z: 1, u: 1 }, session }).toArray();
    const byRollup = new Map<string, Array<Pick<RollupPartDoc, '_id' | 'r' | 'z' | 'u'>>>();
    for (const head of heads) {
      const list = byRollup.get(head.r);
      if (list) list.push(head);
      else byRollup.set(head.r, [head]);
    }
    const merging: ObjectId[] = [];
    const unsettle: ObjectId[] = [];
    for (const list of byRollup.values()) {
      if (settle && list.length === 1) {
        if (list[0]!.u) unsettle.push(list[0]!._id!);
        continue;
      }
      for (const part of settle ? list : smallParts(list)) merging.push(part._id!);
    }
    if (unsettle.length > 0) await this.parts.updateMany({ _id: { $in: unsettle } }, { $unset: { u: '' } }, { session });
    if (merging.length === 0) return;
    const byId = new Map<string, RollupPartDoc[]>();
    for (const part of await this.parts.find({ _id: { $in: merging } }, { session }).toArray()) {
      const list = byId.get(part.r);
      if (list) list.push(part);
      else byId.set(part.r, [part]);
    }
    const merged: RollupPartDoc[] = [];
    let n = 0;
    for (const list of byId.values()) {
      merged.push(mergeParts(list, settle));
      // Dense sketches take a while to merge: the thread gets a turn every few dozen rollups.
      if (++n % 50 === 0) await nextTurn();
    }
    for (let i = 0; i < merged.length; i += WRITE_CHUNK) await this.parts.insertMany(merged.slice(i, i + WRITE_CHUNK), { ordered: false, session });
    const deleted = await this.parts.deleteMany({ _id: { $in: merging } }, { session });
    if (deleted.deletedCount !== merging.length) throw new MergedMeanwhile();
  }

  /**
   * Merges the parts of every bucket that ended before `before` into one each; answers how many rollups were settled.
   * A few thousand parts at a time (`chunk`): a worker back after a long stop, or a backfill, finds hundreds of
   * thousands of them, and one query for them all held the database for minutes (devdb answered nothing else for
   * 90 s at 10 M clicks, and the driver gave up on it).
   */
  async settle(before: Date, chunk = SETTLE_CHUNK): Promise<number> {
    let settled = 0;
    let previous = '';
    for (;;) {
      const ids = new Set<string>();
      let parts = 0;
      for await (const part of this.parts.find({ u: { $lt: before } }, { projection: { _id: 0, r: 1 }, limit: chunk })) {
        ids.add(part.r);
        parts++;
      }
      // The same rollups as the round before: another process is merging them (compact leaves them to it).
      const named = [...ids].sort().join(',');
      if (ids.size === 0 || named === previous) return settled;
      previous = named;
      await this.compact([...ids], true);
      // What this process counted for those rollups is moot now.
      for (const id of ids) this.written.delete(id);
      settled += ids.size;
      if (parts < chunk) return settled;
    }
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
   * The cells of one dimension in the stored parts of a workspace's rollups (or of a set of workspaces': a partner's
   * clients) for the given runs of buckets and level, one view per part. Each view names its workspace (`w`).
   */
  async *read(query: {
    workspaceId: string | readonly string[];
    /** null: workspace level; an array: those links; 'all-links': every link-level rollup. */
    links: readonly string[] | null | 'all-links';
    dimension: Dimension | typeof TOTAL;
    runs: readonly Run[];
    /** Only these cells of the dimension (their keys); else all. */
    keys?: readonly string[];
  }): AsyncGenerator<RollupView> {
    const { workspaceId, links, dimension, runs } = query;
    if (Array.isArray(links) && links.length === 0) return;
    if (typeof workspaceId !== 'string' && workspaceId.length === 0) return;
    const workspaces: string[] = typeof workspaceId === 'string' ? [workspaceId] : [...workspaceId];
    const projection = { _id: 1, r: 1, [`c.${dimension}`]: 1 };
    const keys = query.keys ? new Set(query.keys) : null;
    const viewOf = (id: string, r: string, bytes: Uint8Array | null | undefined): RollupView => ({ ...parseRollupId(r), part: id, cells: bytes ? decodeCells(bytes, keys) : [] });
    const view = (part: RollupPartDoc): RollupView => viewOf(part._id!.toHexString(), part.r, part.c?.[dimension]?.buffer);
    // One snapshot for every query of this read: a merge commits its part and its deletions together.
    const session = this.client.startSession({ snapshot: true });
    // How every query below reads the parts' cells.
    const reading = { projection, session, batchSize: READ_BATCH };
    const { parts, cache } = this;
    // The parts of these rollups. With a cache, their ids first (from the rollup index), then the bytes of the parts
    // it does not hold; a part's bytes never change, and the snapshot still holds every part the ids named.
    async function* byRollupIds(ids: string[]): AsyncGenerator<RollupView> {
      if (!cache) {
        for await (const part of parts.find({ r: { $in: ids } }, reading)) yield view(part);
        return;
      }
      const missing: ObjectId[] = [];
      for await (const part of parts.find({ r: { $in: ids } }, { projection: { _id: 1, r: 1 }, session })) {
        const id = part._id.toHexString();
        const cells = cache.get(PartCache.key(id, dimension));
        if (cells === undefined) missing.push(part._id);
        else yield viewOf(id, part.r, cells);
      }
      for (let i = 0; i < missing.length; i += ID_CHUNK) {
        const filter: Filter<RollupPartDoc> = { _id: { $in: missing.slice(i, i + ID_CHUNK) } };
        for await (const part of parts.find(filter, reading)) {
          const id = part._id.toHexString();
          yield viewOf(id, part.r, cache.set(PartCache.key(id, dimension), part.c?.[dimension]?.buffer ?? null));
        }
      }
    }
    try {
      if (links === 'all-links') {
        // Links unknown beforehand: every link-level part of each run, a range of rollup ids per workspace.
        for (const run of mergeRuns(runs)) {
          for (const w of workspaces) {
            const prefix = rollupPrefix(w, LINK_LEVEL, run.grain);
            const filter: Filter<RollupPartDoc> = { r: { $gte: prefix + padded(run.from), $lt: prefix + padded(run.to) } };
            for await (const part of this.parts.find(filter, reading)) yield view(part);
          }
        }
        return;
      }
      // Every other read knows the rollups it wants: their ids are (workspace, link, grain, bucket, group), so their
      // parts are fetched by id, in one query per few thousand rollups, instead of one ranged query per run (a
      // 90-day range in Kolkata is 180 runs).
      const d = links === null ? documentGroup(dimension) : LINK_LEVEL;
      const ls: readonly string[] = links === null ? [''] : links;
      let ids: string[] = [];
      for (const run of mergeRuns(runs)) {
        const step = GRAIN_MS[run.grain];
        for (let t = run.from; t < run.to; t += step) {
          for (const w of workspaces) for (const l of ls) ids.push(rollupId(w, l, run.grain, t, d));
          if (ids.length < ID_CHUNK) continue;
          yield* byRollupIds(ids);
          ids = [];
        }
      }
      if (ids.length > 0) yield* byRollupIds(ids);
    } finally {
      await session.endSession();
    }
  }

  /** Earliest bucket holding clicks of the workspace, or of any of a set of workspaces (for interval=all), or null. */
  async firstBucket(workspaceId: string | readonly string[]): Promise<Date | null> {
    if (typeof workspaceId !== 'string' && workspaceId.length === 0) return null;
    let first: number | null = null;
    for (const w of typeof workspaceId === 'string' ? [workspaceId] : workspaceId) {
      // The workspace's daily totals, first bucket first (the range of their ids, see rollupId).
      const prefix = rollupPrefix(w, TOTAL, 'd');
      const doc = await this.parts.find({ r: { $gte: prefix, $lt: `${prefix}~` } }, { projection: { _id: 0, r: 1 } }).sort({ r: 1 }).limit(1).next();
      if (doc) first = Math.min(first ?? Infinity, parseRollupId(doc.r).t);
    }
    return first === null ? null : new Date(first);
  }

  /** Deletes a workspace's rollups; answers how many parts were deleted. */
  async deleteWorkspace(workspaceId: string): Promise<number> {
    // `|` (0x7C) ends the workspace id in a rollup id; `}` (0x7D) is the next code point.
    return (await this.parts.deleteMany({ r: { $gte: `${workspaceId}|`, $lt: `${workspaceId}}` } })).deletedCount;
  }

  /** Every rollup of every workspace (a full rebuild of all workspaces). */
  async deleteAll(): Promise<number> {
    this.written.clear();
    this.due.clear();
    return (await this.parts.deleteMany({})).deletedCount;
  }
}

/** A merge found some of its parts gone: another process merged them first. */
class MergedMeanwhile extends Error {
  constructor() {
    super('rollup parts merged by another process meanwhile');
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

/**
 * Writes rollup parts in one transaction with the raw clicks they count (inserted by `storing`, or stored before and
 * marked by `rollUp`): each click is counted exactly once.
 */
export class RollupWriter {
  private readonly client: MongoClient;
  private readonly store: RollupStore;
  private readonly clicks: Collection<ClickDoc>;
  private readonly onError: (error: unknown) => void;
  /** The parts of the slices of clicks arriving (see `arriving`), worked out while their raw clicks are written. */
  private readonly prepared = new Map<readonly ClickRecord[], Promise<RollupPartDoc[]>>();
  private readonly rolledUp: Counter | null;
  /** The merge of parts running after a batch, if any: one at a time, off the ingestion's path. */
  private compacting: Promise<void> | null = null;

  constructor(options: { client: MongoClient; store: RollupStore; clicks: Collection<ClickDoc>; onError?: (error: unknown) => void; registry?: Registry }) {
    this.client = options.client;
    this.store = options.store;
    this.clicks = options.clicks;
    this.onError = options.onError ?? (() => undefined);
    this.rolledUp = options.registry
      ? new Counter({ name: 'linkplane_clicks_rolled_up_total', help: 'Clicks added to the analytics rollups (each once)', registers: [options.registry] })
      : null;
  }

  /**
   * Rolls up clicks stored already (the rebuild): in one transaction, takes those not yet rolled up, marks them rolled
   * up and adds them to the rollups. Run again over the same clicks, it finds them marked and adds nothing; a process
   * dying midway commits nothing. Returns the clicks rolled up now. The small parts due for a merge are merged after
   * it, in the background (see `idle`).
   */
  async rollUp(records: readonly ClickRecord[]): Promise<ClickRecord[]> {
    if (records.length === 0) return [];
    const fresh = await sortedOutOnConflict((sorting) => inTransaction(this.client, (session) => this.rollUpIn(session, records, sorting)));
    this.rolledUp?.inc(fresh.length);
    if (fresh.length > 0) this.compactLater();
    return fresh;
  }

  /**
   * The transaction of rollUp. Usually every click of the batch is new to the rollups, and marking them all says so
   * (every one modified) without reading them first; when some were not (a redelivery), the marking is rolled back
   * with the transaction (SomeRolledUp) and `sorting` reads which clicks are still to count.
   */
  private async rollUpIn(session: ClientSession, records: readonly ClickRecord[], sorting: boolean): Promise<ClickRecord[]> {
    const unique = eachIdOnce(records, () => true);
    const ids = unique.map((r) => r.id);
    let fresh = unique;
    if (sorting) {
      // Fetched by id alone and sorted out here: a filter on `rolled_up` too has the database decode every click
      // to check it, where ids and a projection are read from the stored bytes.
      const found = await this.clicks.find({ _id: { $in: ids } }, { projection: { _id: 1, rolled_up: 1 }, session }).toArray();
      const open = new Set(found.filter((d) => d.rolled_up === false || d.rolled_up == null).map((d) => d._id));
      fresh = unique.filter((r) => open.has(r.id));
      if (fresh.length === 0) return fresh;
      await this.clicks.updateMany({ _id: { $in: [...open] } }, { $set: { rolled_up: true } }, { session });
    } else {
      const marked = await this.clicks.updateMany({ _id: { $in: ids } }, { $set: { rolled_up: true } }, { session });
      if (marked.modifiedCount !== ids.length) throw new SomeRolledUp();
    }
    await this.store.apply(fresh, { session });
    return fresh;
  }

  /**
   * The click ingester's write with rollups on (ClickIngestorOptions.storing): in one transaction, the raw clicks are
   * inserted, marked rolled up, with the rollup parts of their batch. A raw click is stored if and only if it is in
   * the rollups: a redelivered batch adds nothing twice, and a worker dying mid-batch leaves nothing of it. Returns the
   * clicks still to count, as ClickStore.insert does.
   */
  readonly storing = async (records: readonly ClickRecord[], expiresAt?: (record: ClickRecord) => Date | undefined): Promise<ClickRecord[]> => {
    if (records.length === 0) return [];
    const prepared = this.prepared.get(records);
    this.prepared.delete(records);
    const stored = await sortedOutOnConflict((sorting) => inTransaction(this.client, (session) => this.storeIn(session, records, expiresAt, prepared, sorting)));
    this.rolledUp?.inc(stored.rolledUp);
    if (stored.rolledUp > 0) this.compactLater();
    return stored.toCount;
  };

  /**
   * The transaction of `storing`. Usually every click of the batch is new, and inserting them all says so; when one
   * is stored already (a redelivery, or the same id twice in the batch), the insert fails, the transaction is rolled
   * back (SomeRolledUp) and `sorting` reads which clicks are stored, and which of those are rolled up and counted.
   */
  private async storeIn(
    session: ClientSession,
    records: readonly ClickRecord[],
    expiresAt: ((record: ClickRecord) => Date | undefined) | undefined,
    prepared: Promise<RollupPartDoc[]> | undefined,
    sorting: boolean,
  ): Promise<{ toCount: ClickRecord[]; rolledUp: number }> {
    let fresh: readonly ClickRecord[] = records;
    let toRoll: readonly ClickRecord[] = records;
    let toCount: ClickRecord[] = [...records];
    if (sorting) {
      const found = new Map<string, Pick<ClickDoc, 'rolled_up' | 'counted'>>();
      const ids = [...new Set(records.map((r) => r.id))];
      for (const doc of await this.clicks.find({ _id: { $in: ids } }, { projection: { _id: 1, rolled_up: 1, counted: 1 }, session }).toArray()) found.set(doc._id, doc);
      const notRolledUp = (r: ClickRecord) => !found.has(r.id) || found.get(r.id)!.rolled_up !== true;
      fresh = eachIdOnce(records, (r) => !found.has(r.id));
      toRoll = eachIdOnce(records, notRolledUp);
      toCount = eachIdOnce(records, (r) => !found.has(r.id) || found.get(r.id)!.counted === false);
      const open = toRoll.filter((r) => found.has(r.id));
      if (open.length > 0) await this.clicks.updateMany({ _id: { $in: open.map((r) => r.id) } }, { $set: { rolled_up: true } }, { session });
    }
    for (let i = 0; i < fresh.length; i += INSERT_CHUNK) {
      const docs = fresh.slice(i, i + INSERT_CHUNK).map((r) => toClickDoc(r, expiresAt?.(r), true));
      try {
        await this.clicks.insertMany(docs, { session });
      } catch (error) {
        // Stored already: a write error ends the transaction, which is sorted out click by click in another.
        if (!sorting && duplicateIdErrors(error)) throw new SomeRolledUp();
        throw error;
      }
    }
    // Usually the batch as it arrived: its parts are ready.
    const parts = prepared && sameClicks(records, toRoll) ? await prepared : undefined;
    await this.store.apply(toRoll, { session, parts });
    return { toCount, rolledUp: toRoll.length };
  }

  /** Merges the parts due for it after a batch, in the background, one merge at a time (see `idle`). */
  private compactLater(): void {
    if (this.compacting) return;
    this.compacting = this.store
      .compactDue()
      .catch(this.onError)
      .finally(() => (this.compacting = null));
  }

  /** Resolves once no merge started by `rollUp` or `storing` is running. */
  async idle(): Promise<void> {
    while (this.compacting) await this.compacting;
  }

  /**
   * The click-ingester hook (ClickIngestorOptions.arriving): the parts of each slice are worked out as soon as its
   * batch is gathered, while the batch before it is written.
   */
  readonly arriving = (records: readonly ClickRecord[]): void => {
    const parts = this.store.build(records);
    // A failure is thrown where the parts are awaited (storing), or not at all if the slice never gets there.
    parts.catch(() => undefined);
    this.prepared.set(records, parts);
    // Slices of batches that failed before their write: the oldest go (two batches are in hand at most).
    for (const slice of this.prepared.keys()) {
      if (this.prepared.size <= 8) break;
      this.prepared.delete(slice);
    }
  };
}

/** Some clicks of a batch were stored or rolled up already, or are gone: the batch is sorted out click by click. */
class SomeRolledUp extends Error {
  constructor() {
    super('some clicks of the batch were stored or rolled up already');
  }
}

/** Runs `attempt` for a batch taken whole; if some of it was there already (SomeRolledUp), again, sorting it out. */
async function sortedOutOnConflict<T>(attempt: (sorting: boolean) => Promise<T>): Promise<T> {
  try {
    return await attempt(false);
  } catch (error) {
    if (!(error instanceof SomeRolledUp)) throw error;
    return attempt(true);
  }
}

/** The same clicks in the same order. */
function sameClicks(a: readonly ClickRecord[], b: readonly ClickRecord[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.id !== b[i]!.id) return false;
  return true;
}

export { GRAIN_MS };
