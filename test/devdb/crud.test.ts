import { expect } from 'chai';
import { Binary, Decimal128, Double, Int32, Long, MongoBulkWriteError, ObjectId, type Document } from 'mongodb';
import { startHarness, type Harness } from './harness.ts';

describe('devdb CRUD through the driver', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  it('generates an ObjectId _id for documents inserted without one', async () => {
    const coll = h.db.collection('gen_id');
    await h.db.command({ insert: 'gen_id', documents: [{ name: 'raw' }] });
    const doc = await coll.findOne({ name: 'raw' });
    expect(doc?._id).to.be.instanceOf(ObjectId);
    expect(Object.keys(doc!)[0]).to.equal('_id');
  });

  it('round-trips exact BSON types', async () => {
    const coll = h.db.collection('types');
    const id = new ObjectId();
    const original = {
      _id: id,
      date: new Date('2024-05-06T07:08:09.010Z'),
      long: Long.fromString('9007199254740993'),
      smallLong: Long.fromNumber(7),
      int: new Int32(42),
      double: new Double(3),
      fraction: 2.5,
      decimal: Decimal128.fromString('12.345'),
      binary: new Binary(Buffer.from([1, 2, 3]), 0),
      nothing: null,
      nested: { deep: { list: [1, 'two', { three: 3 }] } },
    };
    await coll.insertOne(original);
    const back = await coll.findOne({ _id: id }, { promoteValues: false, promoteLongs: false });
    expect(back).to.not.equal(null);
    expect(back!.date).to.be.instanceOf(Date);
    expect(back!.long).to.be.instanceOf(Long);
    expect((back!.long as Long).toString()).to.equal('9007199254740993');
    expect(back!.smallLong).to.be.instanceOf(Long);
    expect(back!.int).to.be.instanceOf(Int32);
    expect(back!.double).to.be.instanceOf(Double);
    expect((back!.fraction as Double).value).to.equal(2.5);
    expect((back!.decimal as Decimal128).toString()).to.equal('12.345');
    expect(Buffer.from((back!.binary as Binary).buffer)).to.deep.equal(Buffer.from([1, 2, 3]));
    expect(back!.nothing).to.equal(null);
    const plain = await coll.findOne({ _id: id });
    expect(plain!.nested).to.deep.equal({ deep: { list: [1, 'two', { three: 3 }] } });
  });

  it('answers the same typed documents from a find, a projection, a getMore batch, an aggregation and findOneAndUpdate', async () => {
    const coll = h.db.collection<{ _id: number } & Document>('answers');
    const docs = Array.from({ length: 5 }, (_, i) => ({
      _id: i,
      long: Long.fromString('9007199254740993'),
      int: new Int32(i),
      double: new Double(i + 1),
      decimal: Decimal128.fromString(`${i}.5`),
      at: new Date(1_700_000_000_000 + i),
      nested: { list: [i, 'x', { y: [null, true] }] },
    }));
    await coll.insertMany(docs);
    const raw = { promoteValues: false, promoteLongs: false } as const;
    const expected = docs.map((d) => JSON.stringify(d));
    // batchSize 2: the first batch and two getMore batches.
    const found = await coll.find({}, { ...raw, batchSize: 2 }).sort({ _id: 1 }).toArray();
    expect(found.map((d) => JSON.stringify(d))).to.deep.equal(expected);
    expect(found[4]!.long).to.be.instanceOf(Long);
    expect(found[4]!.int).to.be.instanceOf(Int32);
    expect(found[4]!.double).to.be.instanceOf(Double);
    const aggregated = await coll.aggregate([{ $match: { _id: { $gte: 0 } } }], raw).toArray();
    expect(aggregated.map((d) => JSON.stringify(d))).to.deep.equal(expected);
    const projected = await coll.find({ _id: 3 }, { ...raw, projection: { nested: 1 } }).toArray();
    expect(projected).to.deep.equal([{ _id: new Int32(3), nested: { list: [new Int32(3), 'x', { y: [null, true] }] } }]);
    const before = await coll.findOneAndUpdate({ _id: 2 }, { $inc: { int: 1 } }, { ...raw, returnDocument: 'before' });
    expect(JSON.stringify(before)).to.equal(expected[2]);
    const after = await coll.findOne({ _id: 2 }, raw);
    expect(after!.int).to.be.instanceOf(Int32);
    expect((after!.int as Int32).value).to.equal(3);
    expect(after!.long).to.be.instanceOf(Long);
    expect(JSON.stringify({ ...after, int: new Int32(2) })).to.equal(expected[2]);
  });

  it('queries numeric wrappers by numeric value', async () => {
    const coll = h.db.collection('numeric');
    await coll.insertMany([{ n: Long.fromNumber(10) }, { n: new Double(20) }, { n: 30 }]);
    expect(await coll.countDocuments({ n: { $gte: 20 } })).to.equal(2);
    expect(await coll.countDocuments({ n: 10 })).to.equal(1);
  });

  it('counts without reading documents: filters, skip and limit, the count command, and a transaction\'s own writes', async () => {
    const coll = h.db.collection('counting');
    await coll.createIndex({ g: 1 });
    await coll.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i as never, g: i % 4, odd: i % 2 === 1 })));
    expect(await coll.countDocuments()).to.equal(100);
    expect(await coll.countDocuments({}, { skip: 95 })).to.equal(5);
    expect(await coll.countDocuments({}, { skip: 120 })).to.equal(0);
    expect(await coll.countDocuments({}, { limit: 7 })).to.equal(7);
    expect(await coll.countDocuments({}, { skip: 98, limit: 7 })).to.equal(2);
    // Through the index on g, and on the decoded documents.
    expect(await coll.countDocuments({ g: 1 })).to.equal(25);
    expect(await coll.countDocuments({ g: { $in: [1, 2] } }, { skip: 10, limit: 30 })).to.equal(30);
    expect(await coll.countDocuments({ g: { $in: [1, 2] } }, { skip: 45, limit: 30 })).to.equal(5);
    expect(await coll.countDocuments({ odd: true, g: { $gte: 2 } })).to.equal(25);
    expect(await coll.countDocuments({ g: 9 })).to.equal(0);
    // The count command (legacy count, estimatedDocumentCount).
    expect(await coll.estimatedDocumentCount()).to.equal(100);
    expect((await h.db.command({ count: 'counting', query: { g: 3 }, skip: 20 })).n).to.equal(5);
    expect((await h.db.command({ count: 'counting', limit: -3 })).n).to.equal(3);
    expect((await h.db.command({ count: 'no_such_collection' })).n).to.equal(0);
    // Inside a transaction: its inserts and deletes count, and nobody else sees them before the commit.
    const session = h.client.startSession();
    try {
      session.startTransaction();
      await coll.insertMany([{ _id: 100 as never, g: 1 }, { _id: 101 as never, g: 1 }], { session });
      await coll.deleteOne({ _id: 0 as never }, { session });
      expect(await coll.countDocuments({}, { session })).to.equal(101);
      expect(await coll.countDocuments({ g: 1 }, { session })).to.equal(27);
      expect(await coll.countDocuments({ g: 0 }, { session })).to.equal(24);
      expect(await coll.countDocuments()).to.equal(100);
      await session.commitTransaction();
    } finally {
      await session.endSession();
    }
    expect(await coll.countDocuments()).to.equal(101);
    expect(await coll.countDocuments({ g: 1 })).to.equal(27);
  });

  it('reports writeErrors for ordered and unordered inserts', async () => {
    const coll = h.db.collection('ordered');
    await coll.insertOne({ _id: 2 as never });
    const ordered = await coll.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }] as never[]).catch((e: unknown) => e);
    expect(ordered).to.be.instanceOf(MongoBulkWriteError);
    expect((ordered as MongoBulkWriteError).code).to.equal(11000);
    expect(await coll.countDocuments()).to.equal(2);
    const unordered = await coll.insertMany([{ _id: 4 }, { _id: 2 }, { _id: 5 }] as never[], { ordered: false }).catch((e: unknown) => e);
    expect(unordered).to.be.instanceOf(MongoBulkWriteError);
    expect((unordered as MongoBulkWriteError).insertedCount).to.equal(2);
    expect(await coll.countDocuments()).to.equal(4);
  });

  describe('find', () => {
    before(async () => {
      const docs = Array.from({ length: 250 }, (_, i) => ({ i, group: i % 3, name: `n${String(i).padStart(3, '0')}`, tags: i % 2 ? ['odd'] : ['even', 'x'] }));
      await h.db.collection('many').insertMany(docs);
    });

    it('filters, projects, sorts on several keys, skips and limits', async () => {
      const docs = await h.db
        .collection('many')
        .find({ i: { $lt: 20 } }, { projection: { _id: 0, i: 1, group: 1 } })
        .sort({ group: -1, i: 1 })
        .skip(2)
        .limit(3)
        .toArray();
      expect(docs).to.deep.equal([
        { i: 8, group: 2 },
        { i: 11, group: 2 },
        { i: 14, group: 2 },
      ]);
    });

    it('pages through a large result with batchSize and getMore until the cursor is exhausted', async () => {
      const cursor = h.db.collection('many').find({}, { batchSize: 7 }).sort({ i: 1 });
      const seen: number[] = [];
      for await (const doc of cursor) seen.push(doc.i as number);
      expect(seen).to.have.length(250);
      expect(seen[249]).to.equal(249);
      expect(cursor.closed).to.equal(true);
    });

    it('supports $in, $nin, $exists, $regex, $elemMatch, $ne, $and/$or/$nor and dotted paths', async () => {
      const coll = h.db.collection('ops');
      await coll.insertMany([
        { a: 1, b: { c: 'apple' }, arr: [{ k: 1, v: 'x' }] },
        { a: 2, b: { c: 'banana' }, arr: [{ k: 2, v: 'y' }] },
        { a: 3, arr: [] },
      ]);
      expect(await coll.countDocuments({ a: { $in: [1, 3] } })).to.equal(2);
      expect(await coll.countDocuments({ a: { $nin: [1, 3] } })).to.equal(1);
      expect(await coll.countDocuments({ b: { $exists: false } })).to.equal(1);
      expect(await coll.countDocuments({ 'b.c': { $regex: /^ban/ } })).to.equal(1);
      expect(await coll.countDocuments({ arr: { $elemMatch: { k: 2, v: 'y' } } })).to.equal(1);
      expect(await coll.countDocuments({ a: { $ne: 2 } })).to.equal(2);
      expect(await coll.countDocuments({ $and: [{ a: { $gt: 1 } }, { a: { $lte: 3 } }] })).to.equal(2);
      expect(await coll.countDocuments({ $or: [{ a: 1 }, { 'b.c': 'banana' }] })).to.equal(2);
      expect(await coll.countDocuments({ $nor: [{ a: 1 }, { a: 2 }] })).to.equal(1);
      expect(await coll.countDocuments({ 'arr.k': 1 })).to.equal(1);
    });

    it('pages by an $or of compound ranges over Dates and ObjectIds', async () => {
      const coll = h.db.collection('paging');
      const t0 = Date.UTC(2024, 0, 1);
      const docs = Array.from({ length: 30 }, (_, i) => ({ _id: new ObjectId(), created_at: new Date(t0 + Math.floor(i / 3) * 1000), i }));
      await coll.insertMany(docs);
      const sort = { created_at: -1, _id: -1 } as const;
      const all = await coll.find({}).sort(sort).toArray();
      const pages: number[] = [];
      let last: (typeof all)[number] | undefined;
      for (;;) {
        const filter = last ? { $or: [{ created_at: { $lt: last.created_at } }, { created_at: last.created_at, _id: { $lt: last._id } }] } : {};
        const page = await coll.find(filter).sort(sort).limit(4).toArray();
        if (page.length === 0) break;
        pages.push(...page.map((d) => d.i as number));
        last = page[page.length - 1];
      }
      expect(pages).to.deep.equal(all.map((d) => d.i as number));
      expect(new Set(pages).size).to.equal(30);
    });

    it('counts with countDocuments and estimatedDocumentCount, and returns distinct values', async () => {
      const coll = h.db.collection('many');
      expect(await coll.countDocuments({ group: 1 })).to.equal(83);
      expect(await coll.countDocuments({}, { skip: 10, limit: 5 })).to.equal(5);
      expect(await coll.estimatedDocumentCount()).to.equal(250);
      expect(await coll.distinct('group')).to.deep.equal([0, 1, 2]);
      expect(await coll.distinct('tags', { i: { $lt: 4 } })).to.deep.equal(['even', 'odd', 'x']);
    });
  });

  describe('delete', () => {
    it('deletes one or many matching documents', async () => {
      const coll = h.db.collection('deletes');
      await coll.insertMany([{ k: 1 }, { k: 1 }, { k: 1 }, { k: 2 }]);
      expect((await coll.deleteOne({ k: 1 })).deletedCount).to.equal(1);
      expect((await coll.deleteMany({ k: 1 })).deletedCount).to.equal(2);
      expect((await coll.deleteMany({ k: 9 })).deletedCount).to.equal(0);
      expect(await coll.countDocuments()).to.equal(1);
    });
  });
});
