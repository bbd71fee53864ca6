// Rollups stored before they were kept as parts: one document per rollup in analytics_rollups, counts at
// `v.<dimension>.<cell key>` ({c, b, cv, rev}) and sketches at `s.<dimension>.<cell key>` ({h, b}), with more sketches in
// analytics_sketches ({r: rollup id, s}). Each such document, with its sketches, becomes one settled part (of the same
// rollup, the same cells), in transactions that insert the parts and delete what they replace: run twice, or by
// two processes at once, nothing is counted twice. The worker runs it when it starts; once they are gone it reads
// one empty page and stops.
import type { Binary, Db } from 'mongodb';
import { inTransaction } from '../platform/mongo.ts';
import { newCell, type CellBuilder, type Revenue } from './cells.ts';
import { GRAIN_MS, SETTLE_AFTER_MS, packCells, rollupId, type RollupPartDoc, type RollupStore } from './rollup.store.ts';
import { bucketStart, type Grain } from './time.ts';

type LegacySketches = Record<string, Record<string, { h?: Binary; b?: Binary }>>;

interface LegacyRollupDoc {
  _id: string;
  w: string;
  l: string;
  g: Grain;
  t: Date;
  d: string;
  v?: Record<string, Record<string, { c?: number; b?: number; cv?: number; rev?: Revenue }>>;
  s?: LegacySketches;
}

interface LegacySketchPart {
  r: string;
  s?: LegacySketches;
}

/** Rollups per transaction. */
const PAGE = 200;

/** Turns every legacy rollup into a part; answers how many were turned. */
export async function migrateLegacyRollups(db: Db, store: RollupStore, now = Date.now()): Promise<number> {
  const rollups = db.collection<LegacyRollupDoc>('analytics_rollups');
  const sketches = db.collection<LegacySketchPart>('analytics_sketches');
  let migrated = 0;
  for (;;) {
    const page = await rollups.find({}, { projection: { _id: 1 } }).limit(PAGE).toArray();
    if (page.length === 0) return migrated;
    const ids = page.map((doc) => doc._id);
    migrated += await inTransaction(db.client, async (session) => {
      const docs = await rollups.find({ _id: { $in: ids } }, { session }).toArray();
      if (docs.length === 0) return 0;
      const found = docs.map((doc) => doc._id);
      const parts = new Map<string, LegacySketches[]>();
      for (const part of await sketches.find({ r: { $in: found } }, { session }).toArray()) {
        if (!part.s) continue;
        const list = parts.get(part.r);
        if (list) list.push(part.s);
        else parts.set(part.r, [part.s]);
      }
      const converted: RollupPartDoc[] = [];
      for (const doc of docs) {
        const part = toPart(doc, [...(doc.s ? [doc.s] : []), ...(parts.get(doc._id) ?? [])], now);
        converted.push(part);
        // The earlier layout had no six-hour rollups: each hour is also a part of its six hours, settled next round.
        if (doc.g === 'h' && doc.l === '') {
          const t = bucketStart(doc.t.getTime(), 's');
          converted.push({ ...part, r: rollupId(doc.w, '', 's', t, doc.d), u: new Date(t + GRAIN_MS.s) });
        }
      }
      await store.parts.insertMany(converted, { session });
      await sketches.deleteMany({ r: { $in: found } }, { session });
      await rollups.deleteMany({ _id: { $in: found } }, { session });
      return docs.length;
    });
  }
}

function toPart(doc: LegacyRollupDoc, sketchSets: readonly LegacySketches[], now: number): RollupPartDoc {
  const dims = new Map<string, Map<string, CellBuilder>>();
  const cellOf = (dim: string, key: string): CellBuilder => {
    let cells = dims.get(dim);
    if (!cells) dims.set(dim, (cells = new Map<string, CellBuilder>()));
    let cell = cells.get(key);
    if (!cell) cells.set(key, (cell = newCell()));
    return cell;
  };
  for (const [dim, cells] of Object.entries(doc.v ?? {})) {
    for (const [key, counts] of Object.entries(cells)) {
      const cell = cellOf(dim, key);
      cell.c += counts.c ?? 0;
      cell.b += counts.b ?? 0;
      cell.cv += counts.cv ?? 0;
      if (counts.rev && Object.keys(counts.rev).length > 0) cell.rev = { ...counts.rev };
    }
  }
  for (const set of sketchSets) {
    for (const [dim, cells] of Object.entries(set)) {
      for (const [key, sketch] of Object.entries(cells)) {
        const cell = cellOf(dim, key);
        if (sketch.h) (cell.humanParts ??= []).push(sketch.h.buffer);
        if (sketch.b) (cell.botParts ??= []).push(sketch.b.buffer);
      }
    }
  }
  const end = doc.t.getTime() + GRAIN_MS[doc.g];
  const part: RollupPartDoc = { r: rollupId(doc.w, doc.l, doc.g, doc.t.getTime(), doc.d), ...packCells(dims) };
  // A bucket still open is settled later with the parts written after it.
  if (end > now - SETTLE_AFTER_MS) part.u = new Date(end);
  return part;
}
