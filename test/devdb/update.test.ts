import { expect } from 'chai';
import { Binary, Double, Long, MongoServerError } from 'mongodb';
import { startHarness, type Harness } from './harness.ts';

describe('devdb updates through the driver', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  it('applies $set, $unset, $inc, $push with $each, $pull, $addToSet, $min, $max and $currentDate', async () => {
    const coll = h.db.collection('ops');
    const { insertedId } = await coll.insertOne({ a: 1, b: 'gone', n: 5, list: [1, 2], set: ['x'], lo: 10, hi: 10 });
    const res = await coll.updateOne(
      { _id: insertedId },
      {
        $set: { a: 2, 'nested.deep': true },
        $unset: { b: '' },
        $inc: { n: 3 },
        $push: { list: { $each: [3, 4] } } as never,
        $addToSet: { set: { $each: ['x', 'y'] } },
        $min: { lo: 5 },
        $max: { hi: 20 },
        $currentDate: { touched: true },
      },
    );
    expect(res.matchedCount).to.equal(1);
    expect(res.modifiedCount).to.equal(1);
    await coll.updateOne({ _id: insertedId }, { $pull: { list: { $gte: 3 } } as never });
    const doc = await coll.findOne({ _id: insertedId });
    expect(doc).to.include({ a: 2, n: 8, lo: 5, hi: 20 });
    expect(doc).to.not.have.property('b');
    expect(doc!.nested).to.deep.equal({ deep: true });
    expect(doc!.list).to.deep.equal([1, 2]);
    expect(doc!.set).to.deep.equal(['x', 'y']);
    expect(doc!.touched).to.be.instanceOf(Date);
  });

  it('reports no modification when an update changes nothing', async () => {
    const coll = h.db.collection('noop');
    await coll.insertOne({ k: 1, v: 1 });
    const res = await coll.updateOne({ k: 1 }, { $set: { v: 1 } });
    expect(res.matchedCount).to.equal(1);
    expect(res.modifiedCount).to.equal(0);
  });

  it('updates many documents and replaces one while keeping its _id', async () => {
    const coll = h.db.collection('many');
    await coll.insertMany([{ g: 1 }, { g: 1 }, { g: 2 }]);
    const res = await coll.updateMany({ g: 1 }, { $set: { seen: true } });
    expect([res.matchedCount, res.modifiedCount]).to.deep.equal([2, 2]);
    const before = await coll.findOne({ g: 2 });
    await coll.replaceOne({ g: 2 }, { g: 3, replaced: true });
    const after = await coll.findOne({ g: 3 });
    expect(after).to.deep.equal({ _id: before!._id, g: 3, replaced: true });
  });

  it('upserts from the filter equality fields and applies $setOnInsert only on insert', async () => {
    const coll = h.db.collection('upserts');
    const first = await coll.updateOne({ slug: 'a', domain: 'd' }, { $set: { hits: 1 }, $setOnInsert: { created: 'first' } }, { upsert: true });
    expect(first.upsertedCount).to.equal(1);
    expect(first.upsertedId).to.not.equal(null);
    const second = await coll.updateOne({ slug: 'a', domain: 'd' }, { $set: { hits: 2 }, $setOnInsert: { created: 'second' } }, { upsert: true });
    expect(second.upsertedCount).to.equal(0);
    expect(second.matchedCount).to.equal(1);
    const doc = await coll.findOne({ slug: 'a' });
    expect(doc).to.include({ slug: 'a', domain: 'd', hits: 2, created: 'first' });
  });

  it('keeps a Long a Long across $inc', async () => {
    const coll = h.db.collection('longs');
    const { insertedId } = await coll.insertOne({ counter: Long.fromNumber(1), other: Long.fromNumber(5) });
    await coll.updateOne({ _id: insertedId }, { $inc: { counter: 2 } });
    const doc = await coll.findOne({ _id: insertedId }, { promoteLongs: false });
    expect(doc!.counter).to.be.instanceOf(Long);
    expect((doc!.counter as Long).toNumber()).to.equal(3);
    expect(doc!.other).to.be.instanceOf(Long);
  });

  it('refuses to change _id', async () => {
    const coll = h.db.collection('immutable');
    await coll.insertOne({ _id: 'one' as never, v: 1 });
    const err = await coll.updateOne({ _id: 'one' as never }, { $set: { _id: 'two' } }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect((err as MongoServerError).code).to.equal(66);
  });

  it('rejects unknown update operators', async () => {
    const err = await h.db
      .collection('bad')
      .updateOne({}, { $frob: { a: 1 } }, { upsert: true })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(MongoServerError);
  });

  it('supports pipeline-style updates', async () => {
    const coll = h.db.collection('pipeline');
    await coll.insertOne({ k: 1, a: 2, b: 3 });
    await coll.updateOne({ k: 1 }, [{ $set: { sum: { $add: ['$a', '$b'] } } }]);
    expect((await coll.findOne({ k: 1 }))!.sum).to.equal(5);
  });

  describe('findAndModify', () => {
    it('returns the document before or after the update, honoring sort and projection', async () => {
      const coll = h.db.collection('fam');
      await coll.insertMany([
        { q: 1, rank: 2, v: 'b' },
        { q: 1, rank: 1, v: 'a' },
      ]);
      const before = await coll.findOneAndUpdate({ q: 1 }, { $set: { v: 'changed' } }, { sort: { rank: 1 }, returnDocument: 'before', projection: { _id: 0, v: 1 } });
      expect(before).to.deep.equal({ v: 'a' });
      const after = await coll.findOneAndUpdate({ q: 1 }, { $set: { v: 'again' } }, { sort: { rank: -1 }, returnDocument: 'after', projection: { _id: 0, v: 1, rank: 1 } });
      expect(after).to.deep.equal({ rank: 2, v: 'again' });
    });

    it('reports lastErrorObject for updates and upserts', async () => {
      const coll = h.db.collection('fam_meta');
      const missing = await coll.findOneAndUpdate({ k: 'x' }, { $set: { v: 1 } }, { includeResultMetadata: true });
      expect(missing.value).to.equal(null);
      expect(missing.lastErrorObject).to.deep.include({ n: 0, updatedExisting: false });
      const upserted = await coll.findOneAndUpdate({ k: 'x' }, { $set: { v: 1 } }, { upsert: true, returnDocument: 'after', includeResultMetadata: true });
      expect(upserted.lastErrorObject?.n).to.equal(1);
      expect(upserted.lastErrorObject?.updatedExisting).to.equal(false);
      expect(upserted.lastErrorObject?.upserted).to.deep.equal(upserted.value!._id);
      const updated = await coll.findOneAndUpdate({ k: 'x' }, { $inc: { v: 1 } }, { includeResultMetadata: true });
      expect(updated.lastErrorObject).to.deep.include({ n: 1, updatedExisting: true });
      expect(updated.value!.v).to.equal(1);
    });

    it('replaces and deletes with findOneAndReplace and findOneAndDelete', async () => {
      const coll = h.db.collection('fam_rd');
      await coll.insertOne({ k: 1, v: 'old' });
      const replaced = await coll.findOneAndReplace({ k: 1 }, { k: 1, v: 'new' }, { returnDocument: 'after' });
      expect(replaced!.v).to.equal('new');
      const deleted = await coll.findOneAndDelete({ k: 1 });
      expect(deleted!.v).to.equal('new');
      expect(await coll.countDocuments()).to.equal(0);
      expect(await coll.findOneAndDelete({ k: 1 })).to.equal(null);
    });
  });

  describe('bulkWrite', () => {
    it('counts inserted, matched, modified, deleted and upserted documents', async () => {
      const coll = h.db.collection('bulk');
      await coll.insertMany([{ k: 1 }, { k: 2 }]);
      const res = await coll.bulkWrite([
        { insertOne: { document: { k: 3 } } },
        { updateOne: { filter: { k: 1 }, update: { $set: { x: 1 } } } },
        { updateMany: { filter: { k: { $gte: 2 } }, update: { $set: { x: 2 } } } },
        { updateOne: { filter: { k: 9 }, update: { $set: { x: 9 } }, upsert: true } },
        { replaceOne: { filter: { k: 1 }, replacement: { k: 1, x: 1 } } },
        { deleteOne: { filter: { k: 2 } } },
      ]);
      expect(res.insertedCount).to.equal(1);
      expect(res.matchedCount).to.equal(4);
      expect(res.modifiedCount).to.equal(3);
      expect(res.upsertedCount).to.equal(1);
      expect(Object.keys(res.upsertedIds)).to.deep.equal(['3']);
      expect(res.deletedCount).to.equal(1);
      expect(await coll.countDocuments()).to.equal(3);
    });
  });
});

describe('devdb many-path $set/$inc updates (the direct path) behave as MongoDB', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  it('upserts counters on dotted and numeric-named paths into sub-documents, keeping $setOnInsert for the insert only', async () => {
    const coll = h.db.collection<{ _id: string }>('counters');
    const update = { $setOnInsert: { kind: 'rollup' }, $inc: { 'v.country.US.c': 2, 'v.asn.15169.c': 1, 'v.ab.0.b': 0 }, $set: { 's.x': 'a' } };
    await coll.updateOne({ _id: 'r1' }, update, { upsert: true });
    await coll.updateOne({ _id: 'r1' }, { ...update, $setOnInsert: { kind: 'changed' } }, { upsert: true });
    const doc = await coll.findOne({ _id: 'r1' });
    expect(doc).to.deep.equal({ _id: 'r1', kind: 'rollup', v: { country: { US: { c: 4 } }, asn: { '15169': { c: 2 } }, ab: { '0': { b: 0 } } }, s: { x: 'a' } });
    const same = await coll.updateOne({ _id: 'r1' }, { $set: { 's.x': 'a' }, $inc: { 'v.country.US.c': 0 } });
    expect(same.modifiedCount, 'nothing changed').to.equal(0);
  });

  it('still updates through arrays (mingo\'s path)', async () => {
    const coll = h.db.collection<{ _id: string; list?: Array<{ n: number }>; text?: string }>('counters2');
    await coll.insertOne({ _id: 'a', list: [{ n: 1 }, { n: 2 }], text: 'x' });
    await coll.updateOne({ _id: 'a' }, { $inc: { 'list.1.n': 5 } });
    expect((await coll.findOne({ _id: 'a' }))!.list).to.deep.equal([{ n: 1 }, { n: 7 }]);
  });

  it('$incs counters of a stored document in place without touching its other fields or wrapped numbers', async () => {
    const coll = h.db.collection('counters3');
    const big = Long.fromNumber(5);
    const { insertedId: _id } = await coll.insertOne({ v: { city: { Paris: { c: 1 } } }, big, whole: new Double(2), s: { h: new Binary(Buffer.from([1, 10, 0, 1, 3])) }, t: new Date(0) });
    // Counters only (the in-place path): existing ones grow, missing ones and their sub-documents appear.
    await coll.updateOne({ _id }, { $setOnInsert: { w: 'x' }, $inc: { 'v.city.Paris.c': 2, 'v.city.Lyon.c': 1, 'v.country.FR.b': 1 } }, { upsert: true });
    // A wrapped number on the way takes the general path and stays of its type.
    await coll.updateOne({ _id }, { $inc: { big: 1, 'v.city.Paris.c': 1 } });
    await coll.updateOne({ _id }, { $inc: { whole: 1 } });
    const raw = await h.client.db(h.db.databaseName).collection('counters3').findOne({ _id }, { promoteLongs: false, promoteValues: false });
    expect(raw!.big).to.be.instanceOf(Long);
    expect(String(raw!.big)).to.equal('6');
    expect(raw!.whole).to.be.instanceOf(Double);
    const doc = await coll.findOne({ _id });
    expect(doc).to.deep.include({ v: { city: { Paris: { c: 4 }, Lyon: { c: 1 } }, country: { FR: { b: 1 } } }, t: new Date(0) });
    expect(doc).to.not.have.property('w');
    expect(Buffer.from((doc as unknown as { s: { h: Binary } }).s.h.buffer)).to.deep.equal(Buffer.from([1, 10, 0, 1, 3]));
  });
});
