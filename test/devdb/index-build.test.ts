import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// devdb's own bson: the documents here go to a collection directly, not over the wire.
import { ObjectId } from 'bson';
import { MongoServerError } from 'mongodb';
import { Collection } from '../../src/devdb/collection.ts';
import { compileFilter } from '../../src/devdb/engine.ts';
import type { IndexSpec } from '../../src/devdb/indexes.ts';
import type { Doc } from '../../src/devdb/values.ts';
import { pick, seeded } from '../helpers/analytics-clicks.ts';
import { previewRoundFilters } from '../../src/links/preview-fetch.ts';
import { startHarness, type Harness } from './harness.ts';

const SPECS: IndexSpec[] = [
  { name: 'ws_time', key: { ws: 1, ts: -1 } },
  { name: 'tags', key: { tags: 1 } },
  { name: 'nested', key: { 'visitor.country': 1, n: -1 } },
  { name: 'through_array', key: { 'items.sku': 1 } },
  { name: 'code_unique', key: { code: 1 }, unique: true, sparse: true },
  { name: 'flag_partial', key: { flag: 1, ws: 1 }, partialFilterExpression: { flag: { $exists: true }, level: { $gt: 3 } } },
];

/** Documents of every shape an index key meets: missing fields, arrays (empty, repeated values), nested documents, mixed types. */
function aDocument(rand: () => number, i: number): Doc {
  const doc: Doc = { _id: rand() < 0.1 ? new ObjectId() : rand() < 0.1 ? i : `d${i}`, ws: pick(rand, ['a', 'b', 'c']), n: Math.floor(rand() * 8) };
  if (rand() < 0.9) doc.ts = new Date(1_700_000_000_000 + Math.floor(rand() * 1e6));
  if (rand() < 0.5) doc.tags = rand() < 0.2 ? [] : Array.from({ length: Math.floor(rand() * 4) }, () => pick(rand, ['x', 'y', 'z', 'x']));
  else if (rand() < 0.3) doc.tags = pick<unknown>(rand, ['x', 1, null]);
  if (rand() < 0.7) doc.visitor = { country: pick<unknown>(rand, ['US', 'DE', null, 3]) };
  if (rand() < 0.4) doc.items = Array.from({ length: Math.floor(rand() * 3) }, () => ({ sku: pick(rand, ['k1', 'k2', 'k3']) }));
  if (rand() < 0.3) doc.code = `c${i}`;
  if (rand() < 0.5) doc.flag = rand() < 0.5;
  if (rand() < 0.8) doc.level = Math.floor(rand() * 8);
  return doc;
}

/** Every index's owners in its order, and its multikey flag. */
function contents(coll: Collection): Record<string, { owners: string[]; multikey: boolean }> {
  const indexes = coll.indexes;
  return Object.fromEntries(indexes.map((index) => [index.spec.name, { owners: [...index.walk([], false)], multikey: index.multikey }]));
}

describe('devdb indexes built at once after a replay', () => {
  it('hold what indexing the documents one by one holds, over random documents, replacements and removals', () => {
    const rand = seeded(11);
    const changed = () => {};
    const incremental = new Collection('t', 'c', changed);
    const deferred = new Collection('t', 'c', changed);
    deferred.deferIndexes();
    // Half the indexes exist before the documents, half are created among them (as in a journal).
    for (const spec of SPECS.slice(0, 3)) {
      incremental.createIndex(spec);
      deferred.createIndex(spec);
    }
    for (let i = 0; i < 3000; i++) {
      if (i === 1000) for (const spec of SPECS.slice(3)) (incremental.createIndex(spec), deferred.createIndex(spec));
      const doc = aDocument(rand, i % 2500);
      const old = incremental.docs.get(incremental.docs.size > 0 && rand() < 0.1 ? [...incremental.docs.keys()][Math.floor(rand() * incremental.docs.size)]! : '');
      if (old && rand() < 0.5) {
        incremental.remove(old);
        deferred.detach(deferred.get(old.id)!);
        continue;
      }
      let entry;
      try {
        entry = old ? incremental.replace(old, { ...doc, _id: old.view._id }) : incremental.insert(doc);
      } catch (err) {
        expect((err as Error).message).to.match(/duplicate key/);
        continue;
      }
      const previous = deferred.get(entry.id);
      if (previous) deferred.detach(previous);
      deferred.attach(entry);
    }
    expect(deferred.size).to.equal(incremental.size);
    expect(deferred.indexes.every((index) => index.size === 0)).to.equal(true);
    deferred.buildIndexes();
    expect(contents(deferred)).to.deep.equal(contents(incremental));
    // Ranges on _id walk its own index.
    const ids = (c: Collection) => [...c.candidates({ _id: { $gte: 'd100', $lt: 'd200' } })].map((e) => e.id).sort();
    expect(ids(deferred)).to.deep.equal(ids(incremental));
    expect(ids(deferred).length).to.be.greaterThan(10);
    // The built indexes are kept up to date as usual afterwards, unique checks included.
    const taken = [...incremental.docs.values()].find((e) => typeof e.view.code === 'string')!;
    expect(() => deferred.insert({ _id: 'new', ws: 'a', code: taken.view.code })).to.throw(/duplicate key/);
    deferred.insert({ _id: 'new', ws: 'a', tags: ['w'], n: 5, flag: true, level: 6 });
    incremental.insert({ _id: 'new', ws: 'a', tags: ['w'], n: 5, flag: true, level: 6 });
    expect(contents(deferred)).to.deep.equal(contents(incremental));
  });

  it('answer the same queries after a restart of a data folder, unique indexes still enforced', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devdb-build-'));
    const rand = seeded(5);
    const docs = Array.from({ length: 2000 }, (_, i) => aDocument(rand, i));
    const queries: [Doc, Doc][] = [
      [{ ws: 'a' }, { ts: -1 }],
      [{ tags: 'x' }, { _id: 1 }],
      [{ 'visitor.country': 'US' }, { n: -1 }],
      [{ 'items.sku': 'k2' }, { _id: 1 }],
      [{ flag: true, level: { $gt: 3 } }, { ws: 1 }],
      [{ code: { $gte: 'c5' } }, { code: 1 }],
    ];
    const answers = (h: Harness) => {
      const c = h.client.db('t').collection('c');
      return Promise.all(queries.map(([filter, sort]) => c.find(filter).sort({ ...sort, _id: 1 }).toArray()));
    };
    let h = await startHarness({ dataDir: dir });
    let before;
    try {
      const c = h.client.db('t').collection('c');
      await c.createIndexes(SPECS as never);
      await c.insertMany(docs.filter((d) => !(d._id instanceof ObjectId)));
      await c.deleteMany({ n: 0 });
      before = await answers(h);
    } finally {
      await h.stop();
    }
    h = await startHarness({ dataDir: dir });
    try {
      expect(await answers(h)).to.deep.equal(before);
      expect(before.every((list) => list.length > 0)).to.equal(true);
      const error = await h.client.db('t').collection('c').insertOne({ _id: 'dup' as never, code: before[5]![0]!.code }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(MongoServerError);
      expect((error as MongoServerError).code).to.equal(11000);
    } finally {
      await h.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('devdb query plans', () => {
  it('walk only the range of an index whose equalities are the filter\'s and whose next field has a range in it', () => {
    const coll = new Collection('t', 'links', () => {});
    coll.createIndex({ name: 'ws_newest', key: { ws: 1, created: -1 } });
    coll.createIndex({ name: 'ws_total', key: { ws: 1, 'imported.total': 1 } });
    for (let i = 0; i < 1000; i++) {
      coll.insert({ _id: `l${i}`, ws: i % 2 === 0 ? 'a' : 'b', created: i, ...(i % 100 === 0 ? { imported: { total: i } } : {}) });
    }
    // Nine links of workspace a have an imported total over 0 (l100 … l900; l0's is 0): only they are walked, not the
    // workspace's 500 links.
    const walked = [...coll.candidates({ ws: 'a', 'imported.total': { $gt: 0 } })].map((e) => String(e.view._id)).sort();
    expect(walked).to.deep.equal(['l100', 'l200', 'l300', 'l400', 'l500', 'l600', 'l700', 'l800', 'l900']);
    // An equality alone still uses the equality index.
    expect([...coll.candidates({ ws: 'b' })]).to.have.length(500);
  });

  it('take a range or a non-null equality on a sparse index from that index, not from every document', () => {
    const coll = new Collection('t', 'analytics_parts', () => {});
    coll.createIndex({ name: 'unsettled', key: { u: 1 }, sparse: true });
    coll.createIndex({ name: 'code', key: { code: 1 }, sparse: true });
    const end = new Date('2026-06-01T00:00:00Z').getTime();
    for (let i = 0; i < 1000; i++) {
      // p0…p19 unsettled, their buckets ending an hour apart; the others settled (no `u`); every tenth has a code.
      coll.insert({ _id: `p${i}`, r: `r${i}`, ...(i < 20 ? { u: new Date(end + i * 3_600_000) } : {}), ...(i % 10 === 0 ? { code: `c${i}` } : {}) });
    }
    const ids = (filter: Doc) => [...coll.candidates(filter)].map((e) => String(e.view._id)).sort();
    // The settling job's query: the five parts whose buckets ended before the date, out of 1,000.
    expect(ids({ u: { $lt: new Date(end + 5 * 3_600_000) } })).to.deep.equal(['p0', 'p1', 'p2', 'p3', 'p4']);
    expect(ids({ u: { $gte: new Date(end + 18 * 3_600_000) } })).to.deep.equal(['p18', 'p19']);
    expect(ids({ code: 'c30' })).to.deep.equal(['p30']);
    expect(ids({ code: { $in: ['c40', 'c50', 'missing'] } })).to.deep.equal(['p40', 'p50']);
    // A null among the values matches the documents without the field, which the sparse index does not hold.
    expect(ids({ code: { $in: ['c40', null] } })).to.have.length(1000);
    expect(ids({ code: null })).to.have.length(1000);
  });

  it('answer the same documents from a sparse index as from every document, over random filters', () => {
    const rand = seeded(23);
    const coll = new Collection('t', 'c', () => {});
    coll.createIndex({ name: 'code_sparse', key: { code: 1 }, sparse: true });
    coll.createIndex({ name: 'ts_n_sparse', key: { ts: 1, n: 1 }, sparse: true });
    for (let i = 0; i < 2000; i++) {
      const doc = aDocument(rand, i);
      // Besides strings: a null, a number, an array (multikey) or nothing at all.
      if (rand() < 0.2) doc.code = pick<unknown>(rand, [null, 7, [`c${i}`, null], []]);
      coll.insert(doc);
    }
    const values: unknown[] = ['c5', 'c500', 7, null, new Date(1_700_000_500_000), 3];
    const conditions = [
      (v: unknown) => v,
      (v: unknown) => ({ $in: [v, pick(rand, values)] }),
      (v: unknown) => ({ $gt: v }),
      (v: unknown) => ({ $lte: v }),
      (v: unknown) => ({ $gte: v, $lt: pick(rand, values) }),
    ];
    let narrowed = 0;
    for (let round = 0; round < 300; round++) {
      const field = pick(rand, ['code', 'ts', 'n']);
      const filter: Doc = { [field]: pick(rand, conditions)(pick(rand, values)) };
      if (rand() < 0.3) filter.ws = pick(rand, ['a', 'b']);
      const matches = compileFilter(filter);
      const planned = [...coll.candidates(filter)];
      if (planned.length < coll.size) narrowed++;
      const expected = [...coll.docs.values()].filter((e) => matches(e.view)).map((e) => e.id).sort();
      expect(planned.filter((e) => matches(e.view)).map((e) => e.id).sort(), JSON.stringify(filter)).to.deep.equal(expected);
    }
    // The sparse indexes did narrow queries (else this compared a scan with itself).
    expect(narrowed).to.be.greaterThan(100);
  });
});

describe('the link preview round on devdb', () => {
  it('reads candidates from the preview_due index only: never-read links and due ones, not every link', () => {
    const coll = new Collection('t', 'links', () => {});
    coll.createIndex({ name: 'preview_due', key: { 'preview_fetched.due_at': 1 } });
    const now = new Date('2026-06-01T00:00:00Z');
    const day = 86_400_000;
    for (let i = 0; i < 1000; i++) {
      // l0…l9 never read (l5 without the field at all, the others null), l10…l19 due, the rest read and not due.
      const fetched = i < 10 ? (i === 5 ? undefined : null) : { due_at: new Date(now.getTime() + (i < 20 ? -day : day)), url: 'https://example.com' };
      coll.insert({ _id: `l${i}`, archived: i === 3, ...(fetched === undefined ? {} : { preview_fetched: fetched }) });
    }
    const [neverRead, due] = previewRoundFilters(now);
    const ids = (filter: Doc) => [...coll.candidates(filter)].map((e) => String(e.view._id)).sort();
    expect(ids(neverRead)).to.deep.equal(['l0', 'l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8', 'l9']);
    expect(ids(due)).to.deep.equal(['l10', 'l11', 'l12', 'l13', 'l14', 'l15', 'l16', 'l17', 'l18', 'l19']);
  });
});
