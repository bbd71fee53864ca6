// Transactions as MongoDB runs them: what a transaction may not run, what others see of it before commit, the read
// concern devdb cannot honour, and a write outside the transaction to a document it has written waiting for it.
import { expect } from 'chai';
import type { ClientSession } from 'mongodb';
import { refusal, startHarness, type Harness } from './harness.ts';

describe('devdb transactions follow MongoDB\'s rules', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  async function inSession<T>(fn: (s: ClientSession) => Promise<T>): Promise<T> {
    const session = h.client.startSession();
    try {
      return await fn(session);
    } finally {
      await session.endSession();
    }
  }

  it('count inside a transaction: 263 OperationNotSupportedInTransaction, and the transaction is aborted', async () => {
    const coll = h.db.collection('txr_count');
    await coll.insertOne({ k: 1 });
    await inSession(async (s) => {
      s.startTransaction();
      await coll.insertOne({ k: 2 }, { session: s });
      const err = await refusal(h.db.command({ count: 'txr_count' }, { session: s }));
      expect(err.code).to.equal(263);
      expect(err.codeName).to.equal('OperationNotSupportedInTransaction');
      expect(err.message).to.equal("Cannot run 'count' in a multi-document transaction.");
      await s.abortTransaction();
    });
    expect(await coll.countDocuments({})).to.equal(1);
  });

  it('a collection created inside a transaction (with an index) is not visible to others before commit', async () => {
    await inSession(async (s) => {
      s.startTransaction();
      await h.db.createCollection('txr_created', { session: s });
      await h.db.collection('txr_created').createIndex({ k: 1 }, { session: s, name: 'by_k' });
      await h.db.collection('txr_created').insertOne({ k: 1 }, { session: s });
      expect(await h.db.listCollections({ name: 'txr_created' }).toArray()).to.have.length(0);
      await s.commitTransaction();
    });
    expect(await h.db.listCollections({ name: 'txr_created' }).toArray()).to.have.length(1);
    const indexes = await h.db.collection('txr_created').listIndexes().toArray();
    expect(indexes.map((i) => String(i.name))).to.deep.equal(['_id_', 'by_k']);
    expect(await h.db.collection('txr_created').countDocuments({})).to.equal(1);
  });

  it('a collection created inside an aborted transaction never appears', async () => {
    await inSession(async (s) => {
      s.startTransaction();
      await h.db.createCollection('txr_never', { session: s });
      await s.abortTransaction();
    });
    expect(await h.db.listCollections({ name: 'txr_never' }).toArray()).to.have.length(0);
  });

  it('createIndexes on an existing collection inside a transaction: 263 OperationNotSupportedInTransaction', async () => {
    await h.db.collection('txr_existing').insertOne({ k: 1 });
    await inSession(async (s) => {
      s.startTransaction();
      const err = await refusal(h.db.collection('txr_existing').createIndex({ k: 1 }, { session: s }));
      expect(err.code).to.equal(263);
    });
  });

  it('snapshot read concern inside a transaction (its reads see the latest committed data): 238 NotImplemented', async () => {
    const coll = h.db.collection('txr_snapshot');
    await coll.insertOne({ k: 1 });
    await inSession(async (s) => {
      s.startTransaction({ readConcern: { level: 'snapshot' } });
      const err = await refusal(coll.findOne({}, { session: s }));
      expect(err.code).to.equal(238);
      expect(err.message).to.match(/^devdb does not support snapshot read concern in transactions/);
    });
    const err = await refusal(h.db.command({ count: 'txr_snapshot', readConcern: { level: 'snapshot' } }));
    expect(err.code).to.equal(238);
  });

  it('a write outside the transaction to a document it wrote waits for its commit, and the commit succeeds', async () => {
    const coll = h.db.collection<{ _id: number; n: number; by?: string }>('txr_wait');
    await coll.insertOne({ _id: 1, n: 0 });
    await inSession(async (s) => {
      s.startTransaction();
      await coll.updateOne({ _id: 1 }, { $set: { by: 'txn' } }, { session: s });
      let settled = false;
      const outside = coll.updateOne({ _id: 1 }, { $inc: { n: 1 } }).finally(() => {
        settled = true;
      });
      // Round trips on other connections go on meanwhile; the waiting write has not run.
      expect(await coll.findOne({ _id: 1 })).to.deep.equal({ _id: 1, n: 0 });
      await coll.insertOne({ _id: 2, n: 0 });
      expect(settled).to.equal(false);
      await s.commitTransaction();
      expect((await outside).modifiedCount).to.equal(1);
    });
    expect(await coll.findOne({ _id: 1 })).to.deep.equal({ _id: 1, n: 1, by: 'txn' });
  });

  it('a write outside the transaction waits for its abort, then runs on the committed document', async () => {
    const coll = h.db.collection<{ _id: number; n: number; by?: string }>('txr_wait_abort');
    await coll.insertOne({ _id: 1, n: 0 });
    await inSession(async (s) => {
      s.startTransaction();
      await coll.deleteOne({ _id: 1 }, { session: s });
      let settled = false;
      const outside = coll.updateOne({ _id: 1 }, { $inc: { n: 5 } }).finally(() => {
        settled = true;
      });
      expect(await coll.countDocuments({ _id: 1 })).to.equal(1);
      expect(settled).to.equal(false);
      await s.abortTransaction();
      expect((await outside).modifiedCount).to.equal(1);
    });
    expect(await coll.findOne({ _id: 1 })).to.deep.equal({ _id: 1, n: 5 });
  });

  it('an insert outside the transaction of an _id the transaction inserted waits, then fails as a duplicate (11000)', async () => {
    const coll = h.db.collection<{ _id: string }>('txr_wait_insert');
    await inSession(async (s) => {
      s.startTransaction();
      await coll.insertOne({ _id: 'same' }, { session: s });
      const outside = refusal(coll.insertOne({ _id: 'same' }));
      await s.commitTransaction();
      expect((await outside).code).to.equal(11000);
    });
  });
});
