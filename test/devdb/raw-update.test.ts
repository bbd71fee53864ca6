import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Double, Long, MongoClient, MongoServerError } from 'mongodb';
import { startDevDb } from '../../src/devdb/index.ts';
import { incRaw, setBooleansRaw } from '../../src/devdb/raw-update.ts';
import { computeUpdate } from '../../src/devdb/update.ts';
import { decodeDoc, decodeView, encodeDoc, type Doc } from '../../src/devdb/values.ts';
import { pick, seeded } from '../helpers/analytics-clicks.ts';
import { startHarness, type Harness } from './harness.ts';

/** The general path's answer, or the error it raises. */
function general(raw: Uint8Array, u: Doc): { doc: Doc; modified: boolean } | Error {
  try {
    return computeUpdate(decodeDoc(raw), decodeView(raw), u, undefined);
  } catch (err) {
    return err as Error;
  }
}

const NAMES = ['US', '15169', '0', 'é', 'a b', 'Paris', 'c', 'b', '%2E'];

/** A stored document like a rollup's, with a few fields of every kind a path may run into. */
function aDocument(rand: () => number): Doc {
  const v: Doc = {};
  for (let d = 0; d < 1 + Math.floor(rand() * 3); d++) {
    const cells: Doc = {};
    for (let k = 0; k < Math.floor(rand() * 4); k++) cells[pick(rand, NAMES)] = { c: Math.floor(rand() * 100), b: rand() < 0.3 ? 2_147_483_600 : 0 };
    v[pick(rand, ['country', 'city', 'asn', '_'])] = cells;
  }
  return { _id: 'r', w: 'ws', v, n: 5, d: 1.5, whole: new Double(2), s: 'text', list: [{ c: 1 }], big: Long.fromNumber(7), nothing: null };
}

/** A `$inc` of a few paths: counters present or not, and paths the fast path must leave to the general one. */
function anIncrement(rand: () => number, doc: Doc): Doc {
  const inc: Doc = {};
  const dims = Object.keys(doc.v as Doc);
  for (let i = 0; i < 1 + Math.floor(rand() * 5); i++) {
    const r = rand();
    const amount = r < 0.05 ? 0.5 : r < 0.1 ? 0 : r < 0.15 ? 100 : 1 + Math.floor(rand() * 3);
    const target = rand();
    const p =
      target < 0.5
        ? `v.${pick(rand, dims)}.${pick(rand, NAMES)}.${pick(rand, ['c', 'b'])}`
        : target < 0.7
          ? `v.${pick(rand, ['country', 'new', 'é'])}.${pick(rand, NAMES)}.c`
          : target < 0.75
            ? 'n'
            : pick(rand, ['d', 'whole', 's.x', 'list.0.c', 'big', 'nothing.x', 'v', '_id', 'v..c', 'fresh']);
    inc[p] = amount;
  }
  return inc;
}

describe('devdb raw updates (counters and flags changed in the stored bytes)', () => {
  it('give the document the general path gives, or leave the update to it, over random documents and $incs', () => {
    const rand = seeded(7);
    let done = 0;
    const cases = 3000;
    for (let i = 0; i < cases; i++) {
      const doc = aDocument(rand);
      const inc = anIncrement(rand, doc);
      const u: Doc = rand() < 0.3 ? { $inc: inc, $setOnInsert: { w: 'other' } } : { $inc: inc };
      const raw = encodeDoc(doc);
      const fast = incRaw(raw, inc);
      if (!fast) continue;
      done++;
      const expected = general(raw, u);
      if (expected instanceof Error) expect.fail(`the fast path applied ${JSON.stringify(inc)}, which the general path refuses: ${expected.message}`);
      expect(decodeDoc(fast.raw), JSON.stringify(inc)).to.deep.equal(expected.doc);
      expect(fast.modified, JSON.stringify(inc)).to.equal(expected.modified);
      expect([...fast.fields].sort()).to.deep.equal([...new Set(Object.keys(inc).map((p) => p.split('.')[0]!))].sort());
    }
    // Most increments are plain counters: the fast path must have taken them (a path that never applies tests nothing).
    expect(done).to.be.greaterThan(cases / 4);
  });

  it('leave to the general path what would change a type or go through a non-document', () => {
    const raw = encodeDoc({ _id: 'r', n: 2_147_483_647, d: 1.5, whole: new Double(2), s: 'x', list: [{ c: 1 }], big: Long.fromNumber(1), nothing: null, v: { c: 1 } });
    for (const inc of [{ n: 1 }, { d: 1 }, { whole: 1 }, { 's.x': 1 }, { 'list.0.c': 1 }, { big: 1 }, { 'nothing.x': 1 }, { v: 1 }, { 'v.c': 0.5 }, { 'v.c': 1, v: 1 }, { 'v.c': Long.fromNumber(1) }, { _id: 1 }]) {
      expect(incRaw(raw, inc), JSON.stringify(inc)).to.equal(undefined);
    }
    // A new field takes the type the general path would give it.
    const grown = incRaw(raw, { 'v.x': 3_000_000_000, 'v.y': 0.25, 'w.z': -1, 'w.m': -0 })!;
    expect(decodeView(grown.raw)).to.deep.include({ v: { c: 1, x: 3_000_000_000, y: 0.25 }, w: { z: -1, m: 0 } });
    const expected = general(raw, { $inc: { 'v.x': 3_000_000_000, 'v.y': 0.25, 'w.z': -1, 'w.m': -0 } }) as { doc: Doc };
    expect(Buffer.from(grown.raw)).to.deep.equal(Buffer.from(encodeDoc(expected.doc)));
  });

  it('set top-level booleans as the general path does', () => {
    const raw = encodeDoc({ _id: 'c', counted: false, rolled_up: true, s: 'x' });
    for (const set of [{ counted: true }, { counted: false }, { rolled_up: false, fresh: true }, { counted: true, rolled_up: true }]) {
      const fast = setBooleansRaw(raw, set)!;
      const expected = general(raw, { $set: set }) as { doc: Doc; modified: boolean };
      expect(decodeDoc(fast.raw), JSON.stringify(set)).to.deep.equal(expected.doc);
      expect(fast.modified, JSON.stringify(set)).to.equal(expected.modified);
    }
    for (const set of [{ s: true }, { counted: 1 }, { 'a.b': true }, { _id: true }]) expect(setBooleansRaw(raw, set), JSON.stringify(set)).to.equal(undefined);
    // Names are compared as bytes: a name of the same length, a prefix, a longer name, and names beyond ASCII.
    const named = encodeDoc({ _id: 'n', count: 1, counter: false, countedX: true, vérifié: false, 'ü': true });
    for (const set of [{ counted: true }, { counte: true }, { counter: true }, { vérifié: true }, { verifie: true }, { ü: false, u: true }, { countedX: false, count_: true }]) {
      const fast = setBooleansRaw(named, set)!;
      const expected = general(named, { $set: set }) as { doc: Doc; modified: boolean };
      expect(decodeDoc(fast.raw), JSON.stringify(set)).to.deep.equal(expected.doc);
      expect(Buffer.from(fast.raw), JSON.stringify(set)).to.deep.equal(Buffer.from(encodeDoc(expected.doc)));
      expect(fast.modified, JSON.stringify(set)).to.equal(expected.modified);
    }
    expect(setBooleansRaw(named, { count: true }), 'a number named as a flag').to.equal(undefined);
  });

  describe('through the server', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(async () => {
      await h.stop();
    });

    it('keep the indexes right: a flag that is indexed is re-keyed, the others are left alone', async () => {
      const clicks = h.db.collection<{ _id: number; w: string; rolled_up: boolean; counted: boolean }>('raw_flags');
      await clicks.createIndex({ rolled_up: 1, w: 1 });
      await clicks.createIndex({ w: 1 });
      await clicks.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, w: i % 2 ? 'a' : 'b', rolled_up: false, counted: false })));
      await clicks.updateMany({ _id: { $lt: 10 } }, { $set: { counted: true } });
      await clicks.updateMany({ _id: { $lt: 5 } }, { $set: { rolled_up: true } });
      expect(await clicks.countDocuments({ rolled_up: false })).to.equal(15);
      expect((await clicks.find({ rolled_up: true, w: 'b' }).toArray()).map((d) => d._id)).to.deep.equal([0, 2, 4]);
      expect(await clicks.countDocuments({ w: 'a', counted: true })).to.equal(5);
      expect(await clicks.countDocuments({ w: 'a' })).to.equal(10);
    });

    it('check a unique index they re-key, as the general path does', async () => {
      const seats = h.db.collection<{ _id: number; taken?: boolean }>('raw_unique');
      await seats.createIndex({ taken: 1 }, { unique: true, partialFilterExpression: { taken: true } });
      await seats.insertMany([{ _id: 1, taken: false }, { _id: 2, taken: false }]);
      await seats.updateOne({ _id: 1 }, { $set: { taken: true } });
      const err = await seats.updateOne({ _id: 2 }, { $set: { taken: true } }).catch((e: unknown) => e);
      expect((err as MongoServerError).code).to.equal(11000);
      expect(await seats.find({}).sort({ _id: 1 }).toArray()).to.deep.equal([{ _id: 1, taken: true }, { _id: 2, taken: false }]);
      expect(await seats.countDocuments({ taken: true })).to.equal(1);
    });

    it('commit with their transaction, are undone with it, and are put back when the commit fails', async () => {
      const rollups = h.db.collection<{ _id: string; v?: Doc; k?: string }>('raw_txn');
      await rollups.createIndex({ k: 1 }, { unique: true, sparse: true });
      await rollups.insertOne({ _id: 'r', v: { US: { c: 1 } } });
      const cell = async () => ((await rollups.findOne({ _id: 'r' }))!.v as { US: { c: number } }).US.c;

      const session = h.client.startSession();
      await session.withTransaction(async () => {
        await rollups.updateOne({ _id: 'r' }, { $inc: { 'v.US.c': 2 } }, { session });
        await rollups.updateOne({ _id: 'r' }, { $inc: { 'v.US.c': 3, 'v.FR.c': 1 } }, { session });
      });
      expect(await cell()).to.equal(6);

      session.startTransaction();
      await rollups.updateOne({ _id: 'r' }, { $inc: { 'v.US.c': 100 } }, { session });
      await session.abortTransaction();
      expect(await cell()).to.equal(6);

      // A commit that fails on another document's unique key after the raw update took its place puts it back.
      session.startTransaction();
      await rollups.updateOne({ _id: 'r' }, { $inc: { 'v.US.c': 100 } }, { session });
      await rollups.insertOne({ _id: 'mine', k: 'taken' }, { session });
      await rollups.insertOne({ _id: 'theirs', k: 'taken' });
      const err = await session.commitTransaction().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(MongoServerError);
      await session.endSession();
      expect(await cell()).to.equal(6);
      expect(await rollups.countDocuments({ _id: 'mine' })).to.equal(0);
      await rollups.updateOne({ _id: 'r' }, { $inc: { 'v.US.c': 1 } });
      expect(await cell()).to.equal(7);
    });
  });

  it('are kept by the journal across a restart', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devdb-raw-'));
    try {
      for (const round of [1, 2]) {
        const devdb = await startDevDb({ port: 0, dataDir: dir });
        const client = new MongoClient(devdb.uri);
        try {
          await client.connect();
          const coll = client.db('app').collection<{ _id: string; v?: Doc; counted?: boolean }>('rollups');
          if (round === 1) {
            await coll.insertOne({ _id: 'r', counted: false });
            for (let i = 0; i < 10; i++) await coll.updateOne({ _id: 'r' }, { $inc: { [`v.n${i % 3}.c`]: 1 } });
            await coll.updateOne({ _id: 'r' }, { $set: { counted: true } });
          }
          expect(await coll.findOne({ _id: 'r' })).to.deep.equal({ _id: 'r', counted: true, v: { n0: { c: 4 }, n1: { c: 3 }, n2: { c: 3 } } });
        } finally {
          await client.close();
          await devdb.stop();
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
