// The unique-visitor sketches of the rollups, apart from their counts. A rollup document's sketches are the union of
// the parts stored for it (`r`: the rollup document's id): each ingested batch inserts one part per rollup document it
// adds visitors to, holding only that batch's registers, so the hot path never reads nor rewrites a large sketch.
// Unions are idempotent, so a part may be merged into others at any time (compaction), read twice, or left behind by
// a compaction that died: the union stays the same. A part is deleted only after a part holding its registers was
// stored, so no register is ever lost, even with several workers compacting the same document at once.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Binary, type ClientSession, type Collection, type Db, type Document, type ObjectId } from 'mongodb';
import { unionBytes } from './hll.ts';

/** Serialised sketches of one cell: human and bot visitors. */
export interface CellSketches {
  h?: Binary;
  b?: Binary;
}

export type Sketches = Record<string, Record<string, CellSketches>>;

export interface SketchPartDoc {
  _id?: ObjectId;
  /** The rollup document (RollupDoc._id) these registers belong to. */
  r: string;
  s: Sketches;
}

/** Every part of a cell's sketches read for a query, merged only for the rows shown. */
export interface CellSketchParts {
  h: Uint8Array[];
  b: Uint8Array[];
}

/** Parts written for a rollup document by this process before it merges them (a few large reads, not one per batch). */
export const COMPACT_AFTER = 16;
/** Rollup ids per query on `r`, as the rollups themselves are read by id. */
const ID_CHUNK = 5000;

export class SketchStore {
  readonly parts: Collection<SketchPartDoc>;
  /** Parts this process wrote per rollup document since it last compacted it. */
  private readonly written = new Map<string, number>();
  private readonly due = new Set<string>();

  constructor(db: Db) {
    this.parts = db.collection<SketchPartDoc>('analytics_sketches');
  }

  async ensureIndexes(): Promise<void> {
    await this.parts.createIndexes([{ key: { r: 1 }, name: 'rollup' }]);
  }

  /** Stores the parts (in the caller's transaction when a session is given) and notes which documents to compact. */
  async insert(parts: readonly SketchPartDoc[], session?: ClientSession): Promise<void> {
    if (parts.length === 0) return;
    // A hundred parts per write (each holds a sketch per cell): a write is serialised at once, and the thread has other work.
    for (let i = 0; i < parts.length; i += 100) await this.parts.insertMany(parts.slice(i, i + 100), { ordered: false, session });
    for (const part of parts) {
      const n = (this.written.get(part.r) ?? 0) + 1;
      if (n >= COMPACT_AFTER) {
        this.written.delete(part.r);
        this.due.add(part.r);
      } else this.written.set(part.r, n);
    }
  }

  /** Compacts the documents that received COMPACT_AFTER parts from this process (after the writing transaction). */
  async compactDue(): Promise<void> {
    if (this.due.size === 0) return;
    const ids = [...this.due];
    this.due.clear();
    await this.compact(ids);
  }

  /** Replaces the parts of each rollup document by one holding their union: inserted first, the merged ones deleted after. */
  async compact(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const byRollup = new Map<string, SketchPartDoc[]>();
      for (const part of await this.parts.find({ r: { $in: ids.slice(i, i + ID_CHUNK) } }).toArray()) {
        const list = byRollup.get(part.r);
        if (list) list.push(part);
        else byRollup.set(part.r, [part]);
      }
      const merged: SketchPartDoc[] = [];
      const replaced: ObjectId[] = [];
      let unions = 0;
      for (const [r, list] of byRollup) {
        if (list.length < 2) continue;
        merged.push({ r, s: unionOf(list.map((part) => part.s)) });
        for (const part of list) replaced.push(part._id!);
        // Dense sketches take a while to merge: the thread gets a turn every few hundred.
        if (++unions % 200 === 0) await nextTurn();
      }
      if (merged.length === 0) continue;
      await this.parts.insertMany(merged, { ordered: false });
      await this.parts.deleteMany({ _id: { $in: replaced } });
    }
  }

  /**
   * The parts of the given rollup documents, cell by cell; `paths` picks the cells (paths under `s`). Parts are read
   * by rollup id through the `r` index.
   */
  async read(ids: readonly string[], paths: readonly string[] | null): Promise<Map<string, Record<string, Record<string, CellSketchParts>>>> {
    const out = new Map<string, Record<string, Record<string, CellSketchParts>>>();
    let projection: Document | undefined;
    if (paths) {
      projection = { _id: 0, r: 1 };
      for (const path of paths) projection[`s.${path}`] = 1;
    }
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      for await (const part of this.parts.find({ r: { $in: ids.slice(i, i + ID_CHUNK) } }, projection ? { projection } : {})) {
        let into = out.get(part.r);
        if (!into) out.set(part.r, (into = {}));
        addParts(into, part.s);
      }
    }
    return out;
  }

  /** Deletes the parts of one workspace's rollup documents (their ids start with the workspace id). */
  async deleteWorkspace(workspaceId: string): Promise<number> {
    // `|` (0x7C) ends the workspace id in a rollup id; `}` (0x7D) is the next code point.
    return (await this.parts.deleteMany({ r: { $gte: `${workspaceId}|`, $lt: `${workspaceId}}` } })).deletedCount;
  }

  async deleteAll(): Promise<number> {
    this.written.clear();
    this.due.clear();
    return (await this.parts.deleteMany({})).deletedCount;
  }
}

/** Adds every sketch of `s` to the cells' lists of parts. */
export function addParts(into: Record<string, Record<string, CellSketchParts>>, s: Sketches | undefined): void {
  if (!s) return;
  for (const dim of Object.keys(s)) {
    const cells = s[dim]!;
    const target = (into[dim] ??= {});
    for (const key of Object.keys(cells)) {
      const cell = cells[key]!;
      const parts = (target[key] ??= { h: [], b: [] });
      if (cell.h) parts.h.push(cell.h.buffer);
      if (cell.b) parts.b.push(cell.b.buffer);
    }
  }
}

/** The union of several parts' sketches, cell by cell. */
function unionOf(list: readonly Sketches[]): Sketches {
  const parts: Record<string, Record<string, CellSketchParts>> = {};
  for (const s of list) addParts(parts, s);
  const out: Sketches = {};
  for (const dim of Object.keys(parts)) {
    const cells = (out[dim] = {} as Record<string, CellSketches>);
    for (const key of Object.keys(parts[dim]!)) {
      const { h, b } = parts[dim]![key]!;
      const cell: CellSketches = {};
      if (h.length > 0) cell.h = new Binary(h.length === 1 ? h[0]! : unionBytes(h, h[0]![1]!));
      if (b.length > 0) cell.b = new Binary(b.length === 1 ? b[0]! : unionBytes(b, b[0]![1]!));
      cells[key] = cell;
    }
  }
  return out;
}
