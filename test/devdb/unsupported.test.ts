// What devdb refuses before running a command: what MongoDB refuses too (a write concern one node cannot satisfy, a
// hint naming no index) with MongoDB's code, and what devdb does not implement (collation, validators, capped and
// other collection options) with NotImplemented (238) rather than accepting and ignoring it.
import { expect } from 'chai';
import { refusal, startHarness, type Harness } from './harness.ts';

describe('devdb refuses loudly what it cannot honour', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await h.db.collection('hinted').insertMany([{ a: 1, b: 1 }, { a: 2, b: 2 }]);
    await h.db.collection('hinted').createIndex({ a: 1 }, { name: 'by_a' });
  });
  after(async () => {
    await h.stop();
  });

  it('writeConcern w: 10 on a one-node set: 100 UnsatisfiableWriteConcern "Not enough data-bearing nodes", nothing written', async () => {
    const coll = h.db.collection('wc');
    const err = await refusal(coll.insertOne({ x: 1 }, { writeConcern: { w: 10 } }));
    expect(err.code).to.equal(100);
    expect(err.codeName).to.equal('UnsatisfiableWriteConcern');
    expect(err.message).to.equal('Not enough data-bearing nodes');
    expect(await coll.countDocuments({})).to.equal(0);
    // w: 1 and w: 'majority' are what one node satisfies.
    await coll.insertOne({ x: 1 }, { writeConcern: { w: 1 } });
    await coll.insertOne({ x: 2 }, { writeConcern: { w: 'majority' } });
    expect(await coll.countDocuments({})).to.equal(2);
  });

  it('a hint naming no index (find, aggregate, update, delete, findAndModify, count): 2 BadValue "hint provided does not correspond to an existing index"', async () => {
    const coll = h.db.collection('hinted');
    const attempts: Array<() => Promise<unknown>> = [
      () => coll.find({ a: 1 }, { hint: 'no_such_index' }).toArray(),
      () => coll.find({ a: 1 }, { hint: { b: 1 } }).toArray(),
      () => coll.aggregate([{ $match: { a: 1 } }], { hint: { b: 1 } }).toArray(),
      () => coll.updateOne({ a: 1 }, { $set: { c: 1 } }, { hint: 'no_such_index' }),
      () => coll.deleteOne({ a: 1 }, { hint: { b: 1 } }),
      () => coll.findOneAndUpdate({ a: 1 }, { $set: { c: 1 } }, { hint: { b: 1 } }),
      () => h.db.command({ count: 'hinted', query: { a: 1 }, hint: 'no_such_index' }),
    ];
    for (const attempt of attempts) {
      const err = await refusal(attempt());
      expect(err.code).to.equal(2);
      expect(err.message).to.equal('hint provided does not correspond to an existing index');
    }
    expect(await coll.countDocuments({ c: 1 })).to.equal(0);
    expect(await coll.countDocuments({})).to.equal(2);
  });

  it('a hint naming an existing index, by name or key, or $natural, is accepted', async () => {
    const coll = h.db.collection('hinted');
    expect(await coll.find({ a: 1 }, { hint: 'by_a' }).toArray()).to.have.length(1);
    expect(await coll.find({ a: 1 }, { hint: { a: 1 } }).toArray()).to.have.length(1);
    expect(await coll.find({ a: 1 }, { hint: { _id: 1 } }).toArray()).to.have.length(1);
    expect(await coll.find({ a: 1 }, { hint: { $natural: 1 } }).toArray()).to.have.length(1);
  });

  it('a collation other than simple (find, update, createIndex, createCollection): 238 NotImplemented, never ignored', async () => {
    const coll = h.db.collection('hinted');
    const collation = { locale: 'en', strength: 2 };
    for (const attempt of [
      () => coll.find({ a: 1 }, { collation }).toArray(),
      () => coll.updateMany({ a: 1 }, { $set: { d: 1 } }, { collation }),
      () => coll.createIndex({ b: 1 }, { collation }),
      () => h.db.createCollection('collated', { collation }),
    ]) {
      const err = await refusal(attempt());
      expect(err.code).to.equal(238);
      expect(err.codeName).to.equal('NotImplemented');
      expect(err.message).to.match(/^devdb does not support collation/);
    }
    expect(await coll.find({ a: 1 }, { collation: { locale: 'simple' } }).toArray()).to.have.length(1);
    expect(await coll.countDocuments({ d: 1 })).to.equal(0);
  });

  it('a $jsonSchema validator: 238 NotImplemented, the collection not created', async () => {
    const err = await refusal(h.db.createCollection('validated', { validator: { $jsonSchema: { required: ['name'] } } }));
    expect(err.code).to.equal(238);
    expect(err.message).to.match(/^devdb does not support document validation/);
    expect(await h.db.listCollections({ name: 'validated' }).toArray()).to.have.length(0);
  });

  it('a capped collection: 238 NotImplemented', async () => {
    const err = await refusal(h.db.createCollection('capped', { capped: true, size: 4096 }));
    expect(err.code).to.equal(238);
    expect(err.message).to.match(/^devdb does not support capped collections/);
  });
});
