import { expect } from 'chai';
import { MongoBulkWriteError, MongoServerError } from 'mongodb';
import { startHarness, type Harness } from './harness.ts';
import { Index } from '../../src/devdb/indexes.ts';
import { plan } from '../../src/devdb/planner.ts';

async function rejection(p: Promise<unknown>): Promise<MongoServerError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the operation to fail').to.be.instanceOf(MongoServerError);
  return err as MongoServerError;
}

describe('devdb indexes through the driver', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  it('creates, lists and drops single and compound indexes', async () => {
    const coll = h.db.collection('idx');
    expect(await coll.createIndex({ a: 1 })).to.equal('a_1');
    expect(await coll.createIndex({ b: 1, c: -1 }, { name: 'bc', unique: true })).to.equal('bc');
    const listed = await coll.listIndexes().toArray();
    expect(listed.map((i) => i.name as string)).to.deep.equal(['_id_', 'a_1', 'bc']);
    expect(listed[2]).to.deep.include({ key: { b: 1, c: -1 }, unique: true });
    await coll.dropIndex('a_1');
    expect((await coll.listIndexes().toArray()).map((i) => i.name as string)).to.deep.equal(['_id_', 'bc']);
    await coll.dropIndexes();
    expect((await coll.listIndexes().toArray()).map((i) => i.name as string)).to.deep.equal(['_id_']);
  });

  it('treats re-creating an identical index as a no-op and conflicting options as errors 85/86', async () => {
    const coll = h.db.collection('idx_conflict');
    await coll.createIndex({ a: 1 }, { name: 'a', unique: true });
    expect(await coll.createIndex({ a: 1 }, { name: 'a', unique: true })).to.equal('a');
    expect((await rejection(coll.createIndex({ a: 1 }, { name: 'a', sparse: true }))).code).to.equal(85);
    expect((await rejection(coll.createIndex({ b: 1 }, { name: 'a' }))).code).to.equal(86);
  });

  it('rejects a duplicate on a unique index with code 11000, keyPattern and keyValue', async () => {
    const coll = h.db.collection('uniq');
    await coll.createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
    await coll.insertOne({ email: 'a@x' });
    const err = await rejection(coll.insertOne({ email: 'a@x' }));
    expect(err.code).to.equal(11000);
    expect(err.message).to.match(/^E11000 duplicate key error collection: devdb_test\.uniq index: email_unique dup key: \{ email: "a@x" \}/);
    expect(err.keyPattern).to.deep.equal({ email: 1 });
    expect(err.keyValue).to.deep.equal({ email: 'a@x' });
  });

  it('rejects a duplicate on a compound unique index with code 11000', async () => {
    const coll = h.db.collection('uniq_compound');
    await coll.createIndex({ domain_id: 1, slug: 1 }, { unique: true });
    await coll.insertMany([
      { domain_id: 1, slug: 'a' },
      { domain_id: 2, slug: 'a' },
    ]);
    const err = await coll.insertOne({ domain_id: 1, slug: 'a' }).catch((e: unknown) => e);
    expect((err as MongoServerError).code).to.equal(11000);
    expect((err as MongoServerError).keyValue).to.deep.equal({ domain_id: 1, slug: 'a' });
  });

  it('enforces unique indexes on update, upsert and findAndModify', async () => {
    const coll = h.db.collection('uniq_writes');
    await coll.createIndex({ k: 1 }, { unique: true });
    await coll.insertMany([{ k: 1 }, { k: 2 }]);
    expect((await rejection(coll.updateOne({ k: 2 }, { $set: { k: 1 } }))).code).to.equal(11000);
    expect((await rejection(coll.updateOne({ other: true }, { $set: { k: 1 } }, { upsert: true }))).code).to.equal(11000);
    expect((await rejection(coll.findOneAndUpdate({ k: 2 }, { $set: { k: 1 } }))).code).to.equal(11000);
    expect((await rejection(coll.findOneAndUpdate({ k: 7 }, { $set: { k: 1 } }, { upsert: true }))).code).to.equal(11000);
    const bulk = await coll.bulkWrite([{ insertOne: { document: { k: 3 } } }, { insertOne: { document: { k: 3 } } }]).catch((e: unknown) => e);
    expect(bulk).to.be.instanceOf(MongoBulkWriteError);
    expect((bulk as MongoBulkWriteError).code).to.equal(11000);
    expect(await coll.countDocuments()).to.equal(3);
  });

  it('keeps _id unique', async () => {
    const coll = h.db.collection('uniq_id');
    await coll.insertOne({ _id: 'x' as never });
    const err = await rejection(coll.insertOne({ _id: 'x' as never }));
    expect(err.code).to.equal(11000);
    expect(err.keyPattern).to.deep.equal({ _id: 1 });
  });

  it('indexes missing fields as null unless the index is sparse or partial', async () => {
    const plain = h.db.collection('missing_plain');
    await plain.createIndex({ code: 1 }, { unique: true });
    await plain.insertOne({ name: 'first' });
    expect((await rejection(plain.insertOne({ name: 'second' }))).code).to.equal(11000);

    const sparse = h.db.collection('missing_sparse');
    await sparse.createIndex({ code: 1 }, { unique: true, sparse: true });
    await sparse.insertMany([{ name: 'first' }, { name: 'second' }]);
    expect(await sparse.countDocuments()).to.equal(2);

    const partial = h.db.collection('missing_partial');
    await partial.createIndex({ code: 1 }, { unique: true, partialFilterExpression: { code: { $exists: true } } });
    await partial.insertMany([{ name: 'first' }, { name: 'second' }, { code: 'c' }]);
    expect((await rejection(partial.insertOne({ code: 'c' }))).code).to.equal(11000);
    const active = h.db.collection('partial_eq');
    await active.createIndex({ slug: 1 }, { unique: true, partialFilterExpression: { active: true } });
    await active.insertMany([
      { slug: 's', active: false },
      { slug: 's', active: true },
    ]);
    expect((await rejection(active.insertOne({ slug: 's', active: true }))).code).to.equal(11000);
  });

  it('fails to create a unique index over existing duplicates', async () => {
    const coll = h.db.collection('late_unique');
    await coll.insertMany([{ k: 1 }, { k: 1 }]);
    expect((await rejection(coll.createIndex({ k: 1 }, { unique: true }))).code).to.equal(11000);
    expect((await coll.listIndexes().toArray()).map((i) => i.name as string)).to.deep.equal(['_id_']);
  });

  it('answers listIndexes on a missing collection with NamespaceNotFound', async () => {
    const err = await rejection(h.db.collection('nope').listIndexes().toArray());
    expect(err.code).to.equal(26);
  });

  it('finds by indexed equality in a large collection without scanning it', async function () {
    this.timeout(60_000);
    const coll = h.db.collection('big');
    await coll.createIndex({ key_hash: 1 }, { unique: true });
    await coll.createIndex({ domain_id: 1, slug: 1 });
    const docs = Array.from({ length: 100_000 }, (_, i) => ({ key_hash: `h${i}`, domain_id: i % 10, slug: `s${i}`, payload: 'x'.repeat(20) }));
    for (let i = 0; i < docs.length; i += 20_000) await coll.insertMany(docs.slice(i, i + 20_000));
    for (let i = 0; i < 300; i++) {
      const n = (i * 331) % 100_000;
      const byHash = await coll.findOne({ key_hash: `h${n}` });
      expect(byHash?.slug).to.equal(`s${n}`);
      const bySlug = await coll.findOne({ domain_id: n % 10, slug: `s${n}` });
      expect(bySlug?.key_hash).to.equal(`h${n}`);
    }
    // Not scanned: the planner answers both lookups from an index (a statement about the plan, not the clock).
    const hash = new Index({ name: 'key_hash_1', key: { key_hash: 1 }, unique: true });
    const slug = new Index({ name: 'domain_id_1_slug_1', key: { domain_id: 1, slug: 1 } });
    const byHash = plan({ key_hash: 'h5' }, [hash, slug]);
    expect(byHash.kind === 'index' && byHash.index).to.equal(hash);
    const bySlug = plan({ domain_id: 5, slug: 's5' }, [hash, slug]);
    expect(bySlug.kind === 'index' && bySlug.index).to.equal(slug);
    expect(bySlug.kind === 'index' && bySlug.lookups).to.deep.equal([[5, 's5']]);
  });

  it('answers an $in of thousands of values from the index, combining a second field only within bounds', async () => {
    const coll = h.db.collection<{ r: string; k: number }>('many_in');
    await coll.createIndex({ r: 1, k: 1 });
    await coll.insertMany(Array.from({ length: 5000 }, (_, i) => ({ r: `r${i}`, k: i % 3 })));
    const wanted = Array.from({ length: 2000 }, (_, i) => `r${i * 2}`);
    const found = await coll.find({ r: { $in: wanted } }).toArray();
    expect(found.map((d) => d.r).sort()).to.deep.equal([...wanted].sort());
    // A statement about the plan: one lookup per value of the first field, the second field's list left to the filter.
    const index = new Index({ name: 'r_1_k_1', key: { r: 1, k: 1 } });
    const p = plan({ r: { $in: wanted }, k: { $in: [0, 1, 2] } }, [index]);
    expect(p.kind === 'index' && p.lookups.length).to.equal(2000);
    const small = plan({ r: { $in: ['r1', 'r2'] }, k: { $in: [0, 1] } }, [index]);
    expect(small.kind === 'index' && small.lookups).to.deep.equal([['r1', 0], ['r1', 1], ['r2', 0], ['r2', 1]]);
    // One value, then hundreds (a bulk create's slugs on one domain): a lookup for each, not every entry of the first.
    const slugs = Array.from({ length: 500 }, (_, i) => `s${i}`);
    const bySlug = plan({ d: 'dom', s: { $in: slugs } }, [new Index({ name: 'd_1_s_1', key: { d: 1, s: 1 }, unique: true })]);
    expect(bySlug.kind === 'index' && bySlug.lookups.length).to.equal(500);
  });
});
