import { expect } from 'chai';
import { MongoServerError, type ClientSession } from 'mongodb';
import { startHarness, type Harness } from './harness.ts';

describe('devdb sessions and transactions', () => {
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

  it('commits all writes of withTransaction together', async () => {
    const a = h.db.collection('tx_a');
    const b = h.db.collection('tx_b');
    await inSession((s) =>
      s.withTransaction(async () => {
        await a.insertOne({ k: 1 }, { session: s });
        await b.insertOne({ k: 2 }, { session: s });
        await a.updateOne({ k: 1 }, { $set: { v: 'set' } }, { session: s });
      }),
    );
    expect(await a.findOne({ k: 1 }, { projection: { _id: 0 } })).to.deep.equal({ k: 1, v: 'set' });
    expect(await b.countDocuments()).to.equal(1);
  });

  it('hides uncommitted writes from other sessions but shows them inside the transaction', async () => {
    const coll = h.db.collection('tx_visibility');
    await coll.insertOne({ k: 'existing', v: 0 });
    await inSession(async (s) => {
      s.startTransaction();
      await coll.insertOne({ k: 'new' }, { session: s });
      await coll.updateOne({ k: 'existing' }, { $set: { v: 1 } }, { session: s });
      expect(await coll.countDocuments({}, { session: s })).to.equal(2);
      expect((await coll.findOne({ k: 'existing' }, { session: s }))!.v).to.equal(1);
      expect(await coll.countDocuments()).to.equal(1);
      expect((await coll.findOne({ k: 'existing' }))!.v).to.equal(0);
      await s.commitTransaction();
    });
    expect(await coll.countDocuments()).to.equal(2);
    expect((await coll.findOne({ k: 'existing' }))!.v).to.equal(1);
  });

  it('finds one document by _id among the transaction\'s own writes and the committed ones', async () => {
    const coll = h.db.collection<{ _id: string; v: number }>('tx_by_id');
    await coll.insertMany([{ _id: 'a', v: 0 }, { _id: 'b', v: 0 }]);
    await inSession(async (s) => {
      s.startTransaction();
      await coll.insertOne({ _id: 'c', v: 1 }, { session: s });
      await coll.updateOne({ _id: 'a' }, { $set: { v: 1 } }, { session: s });
      expect(await coll.find({ _id: 'c' }, { session: s }).toArray()).to.deep.equal([{ _id: 'c', v: 1 }]);
      expect(await coll.find({ _id: 'a' }, { session: s }).toArray()).to.deep.equal([{ _id: 'a', v: 1 }]);
      expect(await coll.find({ _id: 'b' }, { session: s }).toArray()).to.deep.equal([{ _id: 'b', v: 0 }]);
      expect(await coll.find({ _id: 'z' }, { session: s }).toArray()).to.deep.equal([]);
      await s.abortTransaction();
    });
  });

  it('leaves no trace when the transaction callback throws', async () => {
    const coll = h.db.collection('tx_throw');
    await coll.insertOne({ k: 'keep' });
    const err = await inSession((s) =>
      s.withTransaction(async () => {
        await coll.insertOne({ k: 'ghost' }, { session: s });
        await coll.deleteOne({ k: 'keep' }, { session: s });
        throw new Error('boom');
      }),
    ).catch((e: unknown) => e);
    expect((err as Error).message).to.equal('boom');
    expect((await coll.find({}).toArray()).map((d) => d.k as string)).to.deep.equal(['keep']);
  });

  it('aborts everything when a duplicate key error happens inside the transaction', async () => {
    const coll = h.db.collection('tx_dup');
    await coll.createIndex({ email: 1 }, { unique: true });
    await coll.insertOne({ email: 'taken' });
    const err = await inSession((s) =>
      s.withTransaction(async () => {
        await coll.insertOne({ email: 'fresh' }, { session: s });
        await coll.insertOne({ email: 'taken' }, { session: s });
      }),
    ).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect((err as MongoServerError).code).to.equal(11000);
    expect(await coll.countDocuments({ email: 'fresh' })).to.equal(0);
  });

  it('rejects a duplicate of a document written earlier in the same transaction', async () => {
    const coll = h.db.collection('tx_dup_inner');
    await coll.createIndex({ slug: 1 }, { unique: true });
    const err = await inSession(async (s) => {
      s.startTransaction();
      await coll.insertOne({ slug: 'x' }, { session: s });
      try {
        await coll.insertOne({ slug: 'x' }, { session: s });
      } finally {
        await s.abortTransaction().catch(() => undefined);
      }
    }).catch((e: unknown) => e);
    expect((err as MongoServerError).code).to.equal(11000);
    expect(await coll.countDocuments()).to.equal(0);
  });

  it('discards writes on abortTransaction', async () => {
    const coll = h.db.collection('tx_abort');
    await inSession(async (s) => {
      s.startTransaction();
      await coll.insertOne({ k: 1 }, { session: s });
      await s.abortTransaction();
    });
    expect(await coll.countDocuments()).to.equal(0);
  });

  it('fails the second of two transactions writing the same document with a retryable WriteConflict', async () => {
    const coll = h.db.collection('tx_conflict');
    const { insertedId } = await coll.insertOne({ n: 0 });
    const s1 = h.client.startSession();
    const s2 = h.client.startSession();
    try {
      s1.startTransaction();
      s2.startTransaction();
      await coll.updateOne({ _id: insertedId }, { $inc: { n: 1 } }, { session: s1 });
      const err = await coll.updateOne({ _id: insertedId }, { $inc: { n: 10 } }, { session: s2 }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(MongoServerError);
      expect((err as MongoServerError).code).to.equal(112);
      expect((err as MongoServerError).hasErrorLabel('TransientTransactionError')).to.equal(true);
      await s2.abortTransaction();
      await s1.commitTransaction();
    } finally {
      await s1.endSession();
      await s2.endSession();
    }
    expect((await coll.findOne({ _id: insertedId }))!.n).to.equal(1);
  });

  it('retries withTransaction until concurrent increments all apply', async () => {
    const coll = h.db.collection('tx_retry');
    const { insertedId } = await coll.insertOne({ n: 0 });
    await Promise.all(
      Array.from({ length: 5 }, () =>
        inSession((s) =>
          s.withTransaction(async () => {
            const doc = await coll.findOne({ _id: insertedId }, { session: s });
            await new Promise((r) => setTimeout(r, 5));
            await coll.updateOne({ _id: insertedId }, { $set: { n: (doc!.n as number) + 1 } }, { session: s });
          }),
        ),
      ),
    );
    expect((await coll.findOne({ _id: insertedId }))!.n).to.equal(5);
  });

  it('aborts a transaction older than transactionLifetimeLimitSeconds when another needs its documents (its client died)', async () => {
    const coll = h.db.collection<{ _id: string; n: number }>('tx_lifetime');
    await coll.insertOne({ _id: 'x', n: 0 });
    const admin = h.client.db('admin');
    expect(await admin.command({ setParameter: 1, transactionLifetimeLimitSeconds: 1 })).to.include({ was: 60 });
    try {
      // A transaction that writes and is then abandoned, as by a client killed before it could commit or abort.
      const abandoned = h.client.startSession();
      abandoned.startTransaction();
      await coll.updateOne({ _id: 'x' }, { $inc: { n: 100 } }, { session: abandoned });
      // While it is young it holds the document: a second transaction conflicts.
      const young = await inSession(async (s) => {
        s.startTransaction();
        try {
          await coll.updateOne({ _id: 'x' }, { $inc: { n: 1 } }, { session: s });
          return null;
        } catch (error) {
          return error;
        } finally {
          await s.abortTransaction().catch(() => undefined);
        }
      });
      expect(young).to.be.instanceOf(MongoServerError).with.property('codeName', 'WriteConflict');
      await new Promise((r) => setTimeout(r, 1100));
      await inSession((s) => s.withTransaction(() => coll.updateOne({ _id: 'x' }, { $inc: { n: 1 } }, { session: s })));
      expect((await coll.findOne({ _id: 'x' }))!.n, 'the abandoned write never lands').to.equal(1);
      expect(await abandoned.commitTransaction().then(() => null, (e: unknown) => e), 'the abandoned transaction was aborted').to.be.instanceOf(MongoServerError);
      await abandoned.endSession();
    } finally {
      await admin.command({ setParameter: 1, transactionLifetimeLimitSeconds: 60 });
    }
    expect(await admin.command({ getParameter: 1, transactionLifetimeLimitSeconds: 1 })).to.include({ transactionLifetimeLimitSeconds: 60 });
  });
});
