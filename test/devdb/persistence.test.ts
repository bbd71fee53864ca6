import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { MongoServerError } from 'mongodb';
import { Long, MongoClient } from 'mongodb';
import { startDevDb } from '../../src/devdb/index.ts';

describe('devdb persistence', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devdb-persist-'));
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function withServer<T>(dataDir: string | undefined, fn: (client: MongoClient) => Promise<T>): Promise<T> {
    const devdb = await startDevDb({ port: 0, dataDir });
    const client = new MongoClient(devdb.uri);
    try {
      await client.connect();
      return await fn(client);
    } finally {
      await client.close();
      await devdb.stop();
    }
  }

  it('keeps collections, documents and index definitions across a restart with the same folder', async () => {
    await withServer(dir, async (client) => {
      const links = client.db('app').collection('links');
      await links.createIndex({ slug: 1 }, { unique: true, name: 'slug_unique' });
      await links.createIndex({ expires_at: 1 }, { expireAfterSeconds: 3600 });
      await links.insertMany([
        { slug: 'a', hits: Long.fromNumber(1) },
        { slug: 'b', at: new Date(0) },
      ]);
      await client.db('other').collection('things').insertOne({ x: 1 });
      await client.db('app').collection('dropped').insertOne({ x: 1 });
      await client.db('app').collection('dropped').drop();
    });
    await withServer(dir, async (client) => {
      const links = client.db('app').collection('links');
      const docs = await links.find({}, { promoteLongs: false }).sort({ slug: 1 }).toArray();
      expect(docs.map((d) => d.slug as string)).to.deep.equal(['a', 'b']);
      expect(docs[0]!.hits).to.be.instanceOf(Long);
      expect(docs[1]!.at).to.be.instanceOf(Date);
      const indexes = await links.listIndexes().toArray();
      expect(indexes.map((i) => i.name as string)).to.deep.equal(['_id_', 'slug_unique', 'expires_at_1']);
      expect(indexes[2]!.expireAfterSeconds).to.equal(3600);
      const err = await links.insertOne({ slug: 'a' }).catch((e: unknown) => e);
      expect((err as MongoServerError).code).to.equal(11000);
      expect(await client.db('other').collection('things').countDocuments()).to.equal(1);
      const names = (await client.db('app').listCollections().toArray()).map((c) => c.name);
      expect(names).to.deep.equal(['links']);
    });
  });

  it('replays records larger and smaller than its read buffer, each read over the last, into what was written', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'devdb-replay-'));
    try {
      type Doc = { _id: number; tag: string; body?: string };
      const uuids = async (client: MongoClient) => Object.fromEntries((await client.db('app').listCollections().toArray()).map((c) => [c.name, ('info' in c ? (c.info as { uuid: { toString(e: string): string } }) : undefined)?.uuid.toString('hex')]));
      const pad = (n: number) => 'x'.repeat(n);
      const before = await withServer(folder, async (client) => {
        const first = client.db('app').collection<Doc>('first');
        await first.createIndex({ tag: 1 }, { partialFilterExpression: { tag: { $type: 'string' } } });
        // One record of about 6 MB (past the 4 MB buffer), then small ones written over its start.
        await first.insertMany(Array.from({ length: 60 }, (_, i) => ({ _id: i, tag: `big-${i}`, body: pad(100_000) })));
        for (let i = 0; i < 20; i++) await client.db('app').collection<Doc>(`c${i}`).insertOne({ _id: i, tag: `small-${i}` });
        await first.deleteOne({ _id: 3 });
        return uuids(client);
      });
      await withServer(folder, async (client) => {
        // Each collection keeps its uuid (a Binary decoded from a record whose bytes were read over since).
        expect(await uuids(client)).to.deep.equal(before);
        const first = client.db('app').collection<Doc>('first');
        const docs = await first.find({}, { projection: { body: 0 } }).sort({ _id: 1 }).toArray();
        expect(docs).to.have.length(59);
        expect(docs.every((d) => d.tag === `big-${d._id}`)).to.equal(true);
        expect((await first.findOne({ _id: 59 }))?.body).to.equal(pad(100_000));
        expect(await first.find({ tag: 'big-42' }).hint('tag_1').toArray()).to.have.length(1);
        for (let i = 0; i < 20; i++) expect(await client.db('app').collection<Doc>(`c${i}`).findOne({ _id: i })).to.deep.equal({ _id: i, tag: `small-${i}` });
      });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('persists committed transactions and leaves no temp files behind', async () => {
    await withServer(dir, async (client) => {
      const session = client.startSession();
      await session.withTransaction(async () => {
        await client.db('app').collection('tx').insertOne({ k: 1 }, { session });
      });
      await session.endSession();
    });
    await withServer(dir, async (client) => {
      expect(await client.db('app').collection('tx').countDocuments()).to.equal(1);
    });
    const files = fs.readdirSync(dir);
    expect(files.filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
  });

  it('keeps nothing without a data folder', async () => {
    await withServer(undefined, async (client) => {
      await client.db('mem').collection('c').insertOne({ x: 1 });
    });
    await withServer(undefined, async (client) => {
      expect(await client.db('mem').collection('c').countDocuments()).to.equal(0);
    });
  });
});
