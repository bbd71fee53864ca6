// Sorted, limited reads walk an index in order and stop at the limit: the planner picks the index for the list
// queries the product runs, and the answers equal a plain sort of every match, including pages after a cursor,
// descending walks, null prefixes and the cases that must fall back to sorting (multikey, mixed directions).
import { expect } from 'chai';
import type { Collection } from 'mongodb';
import { Index } from '../../src/devdb/indexes.ts';
import { orderedPlan, rangePlan } from '../../src/devdb/planner.ts';
import { startHarness, type Harness } from './harness.ts';

interface Row {
  _id: string;
  w: string;
  t: Date;
  published_at?: Date | null;
  tags?: string[];
}

/** A small deterministic generator, so a failure names a reproducible case. */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

function byTimeThenId(dir: 1 | -1) {
  return (a: Row, b: Row) => (a.t.getTime() - b.t.getTime() || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0)) * dir;
}

describe('devdb sorted, limited reads', () => {
  let h: Harness;
  let coll: Collection<Row>;
  const rows: Row[] = [];
  before(async () => {
    h = await startHarness();
    coll = h.db.collection<Row>('ordered');
    await coll.createIndexes([
      { key: { w: 1, t: -1, _id: -1 }, name: 'w_newest' },
      { key: { published_at: 1, t: 1, _id: 1 }, name: 'outbox' },
    ]);
    const r = rng(42);
    for (let i = 0; i < 600; i++) {
      const row: Row = { _id: `r${String(Math.floor(r() * 1e6)).padStart(6, '0')}-${i}`, w: ['a', 'b', 'c'][Math.floor(r() * 3)]!, t: new Date(1_700_000_000_000 + Math.floor(r() * 40) * 1000) };
      const p = r();
      if (p < 0.3) row.published_at = null;
      else if (p < 0.8) row.published_at = new Date(1_700_000_100_000);
      rows.push(row);
    }
    await coll.insertMany(rows);
  });
  after(async () => {
    await h.stop();
  });

  it('pages newest first through one workspace with (created_at, _id) cursors, as a full sort would', async () => {
    for (const w of ['a', 'b', 'c']) {
      const expected = rows.filter((x) => x.w === w).sort(byTimeThenId(-1));
      const got: Row[] = [];
      let after: Row | undefined;
      for (;;) {
        const filter = after ? { $and: [{ w }, { $or: [{ t: { $lt: after.t } }, { t: after.t, _id: { $lt: after._id } }] }] } : { w };
        const page = await coll.find(filter).sort({ t: -1, _id: -1 }).limit(7).toArray();
        got.push(...page);
        if (page.length < 7) break;
        after = page.at(-1);
      }
      expect(got.map((x) => x._id)).to.deep.equal(expected.map((x) => x._id));
    }
  });

  it('pages by (created_at, _id) cursors in both orders past values of other types, as MongoDB compares them', async () => {
    type Mixed = { _id: string | number; w: string; t?: unknown };
    const mixed = h.db.collection<Mixed>('keyset_mixed');
    await mixed.createIndex({ w: 1, t: -1, _id: -1 });
    const docs: Mixed[] = [];
    const r = rng(11);
    for (let i = 0; i < 300; i++) {
      const kind = r();
      // Mostly dates on few distinct seconds (many ties), some nulls, numbers, strings and missing times; some _ids numbers.
      const t = kind < 0.75 ? new Date(1_700_000_000_000 + Math.floor(r() * 12) * 1000) : kind < 0.8 ? null : kind < 0.85 ? 1_700_000_000_000 : kind < 0.9 ? '2023-11-14' : undefined;
      const doc: Mixed = { _id: r() < 0.85 ? `k${String(Math.floor(r() * 1e5)).padStart(5, '0')}-${i}` : i, w: r() < 0.5 ? 'a' : 'b', t };
      if (t === undefined) delete doc.t;
      docs.push(doc);
    }
    await mixed.insertMany(docs);
    const isDate = (t: unknown): t is Date => t instanceof Date;
    for (const dir of [-1, 1] as const) {
      const op = dir < 0 ? '$lt' : '$gt';
      // What the filter matches after a position (dates only for t, strings only for _id, per MongoDB's brackets).
      const past = (d: Mixed, at: Date, id: string) =>
        isDate(d.t) && ((d.t.getTime() - at.getTime()) * dir > 0 || (d.t.getTime() === at.getTime() && typeof d._id === 'string' && (d._id < id ? -1 : d._id > id ? 1 : 0) * dir > 0));
      // Numbers before strings, numbers by value.
      const byId = (x: string | number, y: string | number) => (typeof x !== typeof y ? (typeof x === 'number' ? -1 : 1) : x < y ? -1 : x > y ? 1 : 0);
      const order = (x: Mixed, y: Mixed) => ((x.t as Date).getTime() - (y.t as Date).getTime() || byId(x._id, y._id)) * dir;
      for (const start of docs.filter((d) => d.w === 'a' && isDate(d.t) && typeof d._id === 'string').slice(0, 40)) {
        const at = start.t as Date;
        const id = start._id as string;
        const expected = docs.filter((d) => d.w === 'a' && past(d, at, id)).sort(order).slice(0, 6);
        const got = await mixed
          .find({ $and: [{ w: 'a' }, { $or: [{ t: { [op]: at } }, { t: at, _id: { [op]: id } }] }] })
          .sort({ t: dir, _id: dir })
          .limit(6)
          .toArray();
        expect(got.map((d) => d._id), `${dir} after ${at.toISOString()} ${id}`).to.deep.equal(expected.map((d) => d._id));
      }
    }
  });

  it('walks backwards for the opposite order, and honours skip', async () => {
    const expected = rows.filter((x) => x.w === 'b').sort(byTimeThenId(1));
    const got = await coll.find({ w: 'b' }).sort({ t: 1, _id: 1 }).skip(5).limit(10).toArray();
    expect(got.map((x) => x._id)).to.deep.equal(expected.slice(5, 15).map((x) => x._id));
  });

  it('reads the oldest unpublished rows (null or missing published_at) in order', async () => {
    const expected = rows.filter((x) => x.published_at === null || x.published_at === undefined).sort(byTimeThenId(1));
    const got = await coll.find({ published_at: null }).sort({ t: 1, _id: 1 }).limit(25).toArray();
    expect(got.map((x) => x._id)).to.deep.equal(expected.slice(0, 25).map((x) => x._id));
  });

  it('falls back to sorting for mixed directions and once the index is multikey', async () => {
    const mixed = rows.filter((x) => x.w === 'c').sort((a, b) => b.t.getTime() - a.t.getTime() || (a._id < b._id ? -1 : 1));
    expect((await coll.find({ w: 'c' }).sort({ t: -1, _id: 1 }).limit(9).toArray()).map((x) => x._id)).to.deep.equal(mixed.slice(0, 9).map((x) => x._id));

    const multi = h.db.collection<{ _id: number; w: string; t: number[] | number }>('multikey');
    await multi.createIndex({ w: 1, t: 1 });
    await multi.insertMany([
      { _id: 1, w: 'x', t: 5 },
      { _id: 2, w: 'x', t: [9, 1] },
      { _id: 3, w: 'x', t: 3 },
    ]);
    // MongoDB sorts an array by its smallest element ascending and by its largest descending.
    expect((await multi.find({ w: 'x' }).sort({ t: 1 }).limit(2).toArray()).map((d) => d._id)).to.deep.equal([2, 3]);
    expect((await multi.find({ w: 'x' }).sort({ t: -1 }).limit(2).toArray()).map((d) => d._id)).to.deep.equal([2, 1]);
  });

  it('plans the list queries the product runs as index walks starting at the cursor', () => {
    const newest = new Index({ name: 'workspace_newest', key: { workspace_id: 1, created_at: -1, _id: -1 } });
    const outbox = new Index({ name: 'outbox', key: { published_at: 1, created_at: 1, _id: 1 } });
    const at = new Date(1000);
    const cursor = { $and: [{ workspace_id: 'ws_1' }, { $or: [{ created_at: { $lt: at } }, { created_at: at, _id: { $lt: 'lnk_9' } }] }] };
    const p = orderedPlan(cursor, { created_at: -1, _id: -1 }, [outbox, newest]);
    expect(p?.index).to.equal(newest);
    expect(p?.prefix).to.deep.equal(['ws_1']);
    expect(p?.reverse).to.equal(false);
    // The page starts just past the cursor's (created_at, _id), and the index answers the whole filter.
    expect(p?.after).to.deep.equal({ values: [at, 'lnk_9'], classes: ['date', 'string'] });
    expect(p?.covered).to.equal(true);
    // Anything more, or a position of another shape, leaves the filter to be checked on each document.
    const position = cursor.$and[1]!;
    expect(orderedPlan({ $and: [{ workspace_id: 'ws_1' }, position, { archived: false }] }, { created_at: -1, _id: -1 }, [newest])?.covered).to.equal(false);
    expect(orderedPlan({ $and: [{ workspace_id: 'ws_1' }, { workspace_id: 'ws_2' }, position] }, { created_at: -1, _id: -1 }, [newest])?.covered).to.equal(false);
    expect(orderedPlan({ $and: [{ workspace_id: 'ws_1' }, position] }, { created_at: 1, _id: 1 }, [newest])?.covered).to.equal(false);
    expect(orderedPlan({ $and: [{ workspace_id: 'ws_1' }, { $or: [{ created_at: { $lt: at } }, { created_at: at, _id: { $lt: 9 } }] }] }, { created_at: -1, _id: -1 }, [newest])?.covered).to.equal(false);
    expect(orderedPlan({ workspace_id: 'ws_1' }, { created_at: 1, _id: 1 }, [newest])?.reverse).to.equal(true);
    expect(orderedPlan({ published_at: null }, { created_at: 1, _id: 1 }, [newest, outbox])?.index).to.equal(outbox);
    expect(orderedPlan({ workspace_id: 'ws_1' }, { created_at: -1, _id: 1 }, [newest])).to.equal(undefined);
  });

  it('reads a time range of one workspace in either order as a full filter and sort would, other types of the field excluded', async () => {
    const mixed = h.db.collection<{ _id: string; w: string; t: unknown }>('time_ranges');
    await mixed.createIndex({ w: 1, t: -1 }, { name: 'w_time' });
    const docs: Array<{ _id: string; w: string; t: unknown }> = [];
    const r = rng(7);
    for (let i = 0; i < 400; i++) {
      const kind = r();
      // Mostly dates on whole seconds (so bounds fall on stored values), some numbers, strings and missing times.
      const t = kind < 0.8 ? new Date(1_700_000_000_000 + Math.floor(r() * 30) * 1000) : kind < 0.87 ? 1_700_000_010_000 : kind < 0.94 ? '2023-11-14' : undefined;
      const doc = { _id: `d${String(i).padStart(3, '0')}`, w: r() < 0.5 ? 'a' : 'b', t };
      if (t === undefined) delete (doc as { t?: unknown }).t;
      docs.push(doc);
    }
    await mixed.insertMany(docs);
    const lo = new Date(1_700_000_005_000);
    const hi = new Date(1_700_000_020_000);
    type Range = { $gte?: Date; $gt?: Date; $lt?: Date; $lte?: Date };
    const cases: Range[] = [{ $gte: lo, $lt: hi }, { $gt: lo, $lte: hi }, { $gte: lo, $lte: lo }, { $gt: hi, $lt: lo }, { $gte: hi }, { $lt: lo }];
    for (const range of cases) {
      const inRange = (t: unknown) =>
        t instanceof Date &&
        (range.$gte === undefined || t >= range.$gte) &&
        (range.$gt === undefined || t > range.$gt) &&
        (range.$lt === undefined || t < range.$lt) &&
        (range.$lte === undefined || t <= range.$lte);
      for (const dir of [1, -1] as const) {
        const expected = docs.filter((d) => d.w === 'a' && inRange(d.t)).map((d) => (d.t as Date).getTime() * dir);
        const got = await mixed.find({ w: 'a', t: range }).sort({ t: dir }).toArray();
        expect(got.every((d) => d.w === 'a' && inRange(d.t)), JSON.stringify(range)).to.equal(true);
        expect(got.map((d) => (d.t as Date).getTime() * dir), `${JSON.stringify(range)} ${dir}`).to.deep.equal(expected.sort((x, y) => x - y));
      }
    }
  });

  it('stops a walk at the far bound and says when the index answers the whole filter', () => {
    const index = new Index({ name: 'workspace_time', key: { workspace_id: 1, ts: -1 } });
    const lo = new Date(1000);
    const hi = new Date(2000);
    const p = orderedPlan({ workspace_id: 'ws_1', ts: { $gte: lo, $lt: hi } }, { ts: 1 }, [index]);
    expect(p?.reverse).to.equal(true);
    expect(p?.start).to.deep.equal({ value: lo, inclusive: true });
    expect(p?.stop).to.deep.equal({ value: hi, inclusive: false });
    expect(p?.covered).to.equal(true);
    const q = orderedPlan({ workspace_id: 'ws_1', ts: { $gte: lo, $lt: hi } }, { ts: -1 }, [index]);
    expect([q?.start, q?.stop]).to.deep.equal([{ value: hi, inclusive: false }, { value: lo, inclusive: true }]);
    // Anything the walk does not answer leaves the filter to be checked on each document.
    expect(orderedPlan({ workspace_id: 'ws_1', ts: { $gte: lo, $lt: hi }, link_id: 'lnk_1' }, { ts: 1 }, [index])?.covered).to.equal(false);
    expect(orderedPlan({ workspace_id: 'ws_1', ts: { $gte: lo } }, { ts: 1 }, [index])?.covered).to.equal(false);
    expect(orderedPlan({ workspace_id: 'ws_1', ts: { $gte: lo, $lt: 5 } }, { ts: 1 }, [index])?.covered).to.equal(false);
    expect(orderedPlan({ workspace_id: 'ws_1', ts: { $gte: lo, $lt: hi, $ne: lo } }, { ts: 1 }, [index])?.covered).to.equal(false);
    expect(orderedPlan({ workspace_id: { $in: ['ws_1'] }, ts: { $gte: lo, $lt: hi } }, { ts: 1 }, [index])?.covered).to.equal(false);
    expect(orderedPlan({ $and: [{ workspace_id: 'ws_1' }], ts: { $gte: lo, $lt: hi } }, { ts: 1 }, [index])?.covered).to.equal(false);
    expect(orderedPlan({ workspace_id: null, ts: { $gte: lo, $lt: hi } }, { ts: 1 }, [index])?.covered).to.equal(false);
  });

  it('answers ranges from an index: the attempts of one delivery by _id range, and ranges over arrays', async () => {
    const log = h.db.collection<{ _id: string }>('attempts');
    await log.insertMany(['dlv_a.1', 'dlv_a.2', 'dlv_ab.1', 'dlv_a', 'dlv_b.1', 'dlv_a/'].map((_id) => ({ _id })));
    expect(await log.countDocuments({ _id: { $gt: 'dlv_a.', $lt: 'dlv_a/' } })).to.equal(2);
    expect((await log.find({ _id: { $gte: 'dlv_ab' } }).toArray()).map((d) => d._id).sort()).to.deep.equal(['dlv_ab.1', 'dlv_b.1']);

    const arrays = h.db.collection<{ _id: number; t: number[] }>('ranges');
    await arrays.createIndex({ t: 1 });
    await arrays.insertMany([
      { _id: 1, t: [1, 20] },
      { _id: 2, t: [7] },
      { _id: 3, t: [30, 40] },
    ]);
    // Each end may be met by a different element: [1, 20] matches {$gt: 5, $lt: 10}, as in MongoDB.
    expect((await arrays.find({ t: { $gt: 5, $lt: 10 } }).sort({ _id: 1 }).toArray()).map((d) => d._id)).to.deep.equal([1, 2]);

    const id = new Index({ name: '_id_', key: { _id: 1 } });
    const r = rangePlan({ _id: { $gt: 'dlv_a.', $lt: 'dlv_a/' } }, [id]);
    expect(r?.index).to.equal(id);
    expect(r?.start).to.deep.equal({ value: 'dlv_a.', inclusive: false });
    expect(r?.stop).to.deep.equal({ value: 'dlv_a/', inclusive: false });
  });
});
