// Snapshot reads as MongoDB answers a snapshot session (readConcern snapshot with atClusterTime): every read of the
// session sees the documents as they were at its first read, whatever was written since.
import { expect } from 'chai';
import { MongoServerError, Timestamp } from 'mongodb';
import { startHarness, type Harness } from './harness.ts';

describe('devdb snapshot reads', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  it('a snapshot session reads the documents as they were at its first read (find, aggregate, distinct)', async () => {
    const coll = h.db.collection<{ _id: number; k: string; n: number }>('snap');
    await coll.createIndex({ k: 1 });
    await coll.insertMany([
      { _id: 1, k: 'a', n: 1 },
      { _id: 2, k: 'b', n: 2 },
      { _id: 3, k: 'c', n: 3 },
    ]);
    const session = h.client.startSession({ snapshot: true });
    try {
      expect(await coll.find({}, { session }).sort({ _id: 1 }).toArray()).to.have.length(3);
      await coll.updateOne({ _id: 1 }, { $set: { k: 'z', n: 10 } });
      await coll.deleteOne({ _id: 2 });
      await coll.insertOne({ _id: 4, k: 'd', n: 4 });
      await coll.updateOne({ _id: 3 }, { $inc: { n: 100 } });
      // By the indexed field's value at the snapshot, and whole.
      expect(await coll.find({ k: 'a' }, { session }).toArray()).to.deep.equal([{ _id: 1, k: 'a', n: 1 }]);
      expect(await coll.find({ k: 'z' }, { session }).toArray()).to.deep.equal([]);
      const all = await coll.find({}, { session }).toArray();
      expect(all.sort((x, y) => x._id - y._id)).to.deep.equal([
        { _id: 1, k: 'a', n: 1 },
        { _id: 2, k: 'b', n: 2 },
        { _id: 3, k: 'c', n: 3 },
      ]);
      const [sum] = await coll.aggregate([{ $group: { _id: null, n: { $sum: '$n' } } }], { session }).toArray();
      expect(sum!.n).to.equal(6);
      expect((await coll.distinct('k', {}, { session })).sort()).to.deep.equal(['a', 'b', 'c']);
      // Batches after the first (getMore) and a cursor closed early (killCursors) within the snapshot.
      expect(await coll.find({}, { session, batchSize: 1 }).toArray()).to.have.length(3);
      const cursor = coll.find({}, { session, batchSize: 1 });
      await cursor.next();
      await cursor.close();
    } finally {
      await session.endSession();
    }
    // Outside the snapshot: the latest data.
    expect((await coll.find({}).toArray()).map((d) => d.n).sort((x, y) => x - y)).to.deep.equal([4, 10, 103]);
  });

  it('a snapshot no read has taken: 239 SnapshotTooOld', async () => {
    try {
      await h.db.command({ find: 'snap', readConcern: { level: 'snapshot', atClusterTime: new Timestamp({ t: 0, i: 1 }) } });
      expect.fail('the read was answered');
    } catch (err) {
      expect(err).to.be.instanceOf(MongoServerError);
      expect((err as MongoServerError).code).to.equal(239);
      expect((err as MongoServerError).codeName).to.equal('SnapshotTooOld');
    }
  });
});
