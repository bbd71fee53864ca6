// MongoDB's 16 MiB document limit (BSONObjMaxUserSize = 16777216 bytes): every write that would store a larger
// document is refused with the code MongoDB answers for that write, and nothing of it is stored.
import { expect } from 'chai';
import { BSON, MongoServerError, type Collection, type Document } from 'mongodb';
import { refusal, startHarness, type Harness } from './harness.ts';

const MiB = 1024 * 1024;
const LIMIT = 16 * MiB;

describe('devdb document size limit (16 MiB, as MongoDB)', () => {
  let h: Harness;
  let coll: Collection<Document>;
  const nearlyFull = 'x'.repeat(15 * MiB);
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    coll = h.db.collection('big');
    await coll.deleteMany({});
    await coll.insertOne({ _id: 'doc' as never, s: nearlyFull, list: [] });
  });

  async function unchanged(): Promise<void> {
    // The whole collection still reads back, and the document is as it was.
    const all = await coll.find({}).toArray();
    expect(all).to.have.length(1);
    expect(all[0]!.s).to.have.length(15 * MiB);
    expect(all[0]!.list).to.deep.equal([]);
  }

  it('stores a document just under the limit', async () => {
    await coll.updateOne({ _id: 'doc' as never }, { $set: { t: 'y'.repeat(MiB - 100) } });
    const doc = await coll.findOne({ _id: 'doc' as never });
    expect(doc!.t).to.have.length(MiB - 100);
  });

  it('refuses an update ($push) growing a document past 16 MiB: 10334 BSONObjectTooLarge "Resulting document after update is larger than 16777216"', async () => {
    const err = await refusal(coll.updateOne({ _id: 'doc' as never }, { $push: { list: 'y'.repeat(2 * MiB) } as never }));
    expect(err.code).to.equal(10334);
    expect(err.message).to.equal(`Resulting document after update is larger than ${LIMIT}`);
    await unchanged();
  });

  it('refuses a pipeline update ($set of a computed value) past 16 MiB: 10334 BSONObjectTooLarge', async () => {
    const err = await refusal(coll.updateOne({ _id: 'doc' as never }, [{ $set: { t: { $concat: ['$s', 'more'] } } }]));
    expect(err.code).to.equal(10334);
    await unchanged();
  });

  it('refuses a pipeline update past bson\'s 17 MiB encoding buffer: 10334 BSONObjectTooLarge, not bytes cut short', async () => {
    const err = await refusal(coll.updateOne({ _id: 'doc' as never }, [{ $set: { t: { $concat: ['$s', '$s'] } } }]));
    expect(err.code).to.equal(10334);
    await unchanged();
  });

  it('refuses a findAndModify growing a document past 16 MiB: 10334 BSONObjectTooLarge', async () => {
    const err = await refusal(coll.findOneAndUpdate({ _id: 'doc' as never }, { $set: { t: 'y'.repeat(2 * MiB) } }));
    expect(err.code).to.equal(10334);
    await unchanged();
  });

  it('refuses a replacement past 16 MiB: 10334 BSONObjectTooLarge', async () => {
    const err = await refusal(h.db.command({ update: 'big', updates: [{ q: { _id: 'doc' }, u: { s: nearlyFull, t: 'y'.repeat(MiB + 100) } }] }).then((r) => {
      if (r.writeErrors) throw new MongoServerError(r.writeErrors[0]);
    }));
    expect(err.code).to.equal(10334);
    await unchanged();
  });

  it('refuses an upsert inserting a document past 16 MiB: 17420 "Document to upsert is larger than 16777216"', async () => {
    // Built by the server: the command itself must stay within what the driver can send.
    const err = await refusal(coll.updateOne({ _id: 'other' as never }, [{ $set: { s: 'y'.repeat(9 * MiB) } }, { $set: { t: '$s' } }], { upsert: true }));
    expect(err.code).to.equal(17420);
    expect(await coll.countDocuments({ _id: 'other' as never })).to.equal(0);
  });

  it('refuses an $inc of the stored bytes that would grow a document past 16 MiB: 10334 BSONObjectTooLarge', async () => {
    // 40 bytes of room: one more int32 field of a 26-character name (32 bytes) fits, two do not.
    const doc = { _id: 'doc', s: nearlyFull, list: [], t: '' };
    const padding = LIMIT - 40 - BSON.calculateObjectSize(doc);
    await coll.updateOne({ _id: 'doc' as never }, { $set: { t: 'y'.repeat(padding) } });
    await coll.updateOne({ _id: 'doc' as never }, { $inc: { counter_with_a_long_name_0: 1 } });
    const err = await refusal(coll.updateOne({ _id: 'doc' as never }, { $inc: { counter_with_a_long_name_1: 1, counter_with_a_long_name_2: 1 } }));
    expect(err.code).to.equal(10334);
    const stored = await coll.findOne({ _id: 'doc' as never });
    expect(stored).to.include({ counter_with_a_long_name_0: 1 });
    expect(stored).to.not.have.property('counter_with_a_long_name_1');
  });

  it('refuses an insert past 16 MiB: 2 BadValue "object to insert too large"', async () => {
    const reply = await h.db.command({ insert: 'big', documents: [{ _id: 'huge', s: 'z'.repeat(LIMIT) }] });
    expect(reply.writeErrors).to.have.length(1);
    expect(reply.writeErrors[0].code).to.equal(2);
    expect(reply.writeErrors[0].errmsg).to.match(/^object to insert too large\. size in bytes: \d+, max size: 16777216$/);
    expect(await coll.countDocuments({})).to.equal(1);
  });
});
