// MongoDB's integer widening: 32-bit integers whose sum leaves the int32 range give a 64-bit integer (BSON long),
// not a double, in $inc and in $sum. Read back with promoteLongs: false to see the stored type.
import { expect } from 'chai';
import { Double, Long } from 'mongodb';
import { startHarness, type Harness } from './harness.ts';

const INT32_MAX = 2147483647;

describe('devdb int32 overflow becomes a long, as in MongoDB', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  it('$inc of an int32 past 2^31-1 stores a long (top-level, dotted, through the general updater, and a new field)', async () => {
    const coll = h.db.collection('int64');
    await coll.insertOne({ _id: 1, n: INT32_MAX, sub: { n: INT32_MAX }, list: [1], m: 5 } as never);
    await coll.updateOne({ _id: 1 } as never, { $inc: { n: 1 } });
    await coll.updateOne({ _id: 1 } as never, { $inc: { 'sub.n': 2 } });
    await coll.updateOne({ _id: 1 } as never, { $inc: { m: INT32_MAX }, $push: { list: 2 } } as never);
    await coll.updateOne({ _id: 1 } as never, { $inc: { fresh: INT32_MAX } });
    await coll.updateOne({ _id: 1 } as never, { $inc: { fresh: INT32_MAX } });
    const doc = await coll.findOne({ _id: 1 } as never, { promoteLongs: false });
    expect(doc!.n).to.be.instanceOf(Long);
    expect((doc!.n as Long).toString()).to.equal('2147483648');
    expect(doc!.sub.n).to.be.instanceOf(Long);
    expect((doc!.sub.n as Long).toString()).to.equal('2147483649');
    expect(doc!.m).to.be.instanceOf(Long);
    expect((doc!.m as Long).toString()).to.equal('2147483652');
    expect((doc!.fresh as Long).toString()).to.equal('4294967294');
    // A long stays a long as it grows.
    await coll.updateOne({ _id: 1 } as never, { $inc: { n: 1 } });
    expect(((await coll.findOne({ _id: 1 } as never, { promoteLongs: false }))!.n as Long).toString()).to.equal('2147483649');
  });

  it('$inc of an int32 by a double stays a double, and a sum within the int32 range stays an int32', async () => {
    const coll = h.db.collection('int64_double');
    await coll.insertOne({ _id: 1, n: INT32_MAX, k: 1 } as never);
    await coll.updateOne({ _id: 1 } as never, { $inc: { n: new Double(1) } });
    await coll.updateOne({ _id: 1 } as never, { $inc: { k: 1 } });
    const doc = await coll.findOne({ _id: 1 } as never, { promoteLongs: false, promoteValues: false });
    expect(doc!.n).to.be.instanceOf(Double);
    expect(doc!.k).to.not.be.instanceOf(Long);
    expect(Number(doc!.k)).to.equal(2);
  });

  it('$sum of int32 values past 2^31-1 answers a long', async () => {
    const coll = h.db.collection('int64_sum');
    await coll.insertMany([{ v: INT32_MAX }, { v: INT32_MAX }, { v: 2 }]);
    const [out] = await coll.aggregate([{ $group: { _id: null, total: { $sum: '$v' }, small: { $sum: 1 } } }], { promoteLongs: false }).toArray();
    expect(out!.total).to.be.instanceOf(Long);
    expect((out!.total as Long).toString()).to.equal('4294967296');
    expect(out!.small).to.equal(3);
  });
});
