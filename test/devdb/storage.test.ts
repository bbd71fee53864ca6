// Stored documents are kept in the journal file and read back from it (src/devdb/storage.ts): what is read after
// writes, restarts and compactions must be what was written, with no cache in between.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { Catalog } from '../../src/devdb/catalog.ts';
import { setBytesCacheSize, type Entry } from '../../src/devdb/collection.ts';
import { startDevDb } from '../../src/devdb/index.ts';
import { Persistence } from '../../src/devdb/persistence.ts';
import { BytesCache } from '../../src/devdb/storage.ts';

function journals(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.lpj'));
}

describe('devdb documents read back from the journal file', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devdb-storage-'));
  });
  afterEach(() => {
    setBytesCacheSize(64 * 1024 * 1024);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers queries from the file without a cache, across writes, compactions and a restart', async () => {
    const devdb = await startDevDb({ port: 0, dataDir: dir, cacheMb: 0, journal: { compactMinBytes: 64 * 1024 } });
    const client = new MongoClient(devdb.uri);
    const expected = new Map<number, number>();
    try {
      await client.connect();
      const coll = client.db('t').collection<{ _id: number; v: number; tag: string; pad: string }>('docs');
      await coll.createIndex({ tag: 1, v: -1 }, { name: 'tag_v' });
      for (let round = 0; round < 60; round++) {
        await Promise.all(
          Array.from({ length: 40 }, (_, id) => {
            expected.set(id, round);
            return id % 2 === 0 || round % 3 === 0
              ? coll.replaceOne({ _id: id }, { v: round, tag: `t${id % 4}`, pad: 'p'.repeat(300 + id) }, { upsert: true })
              : coll.updateOne({ _id: id }, { $set: { v: round } }); // a raw update: the same index keys
          }),
        );
      }
      expect(Math.max(...journals(dir).map((f) => Number(/\d+/.exec(f)![0])))).to.be.greaterThan(2);
      const docs = await coll.find({}).sort({ _id: 1 }).toArray();
      expect(docs.map((d) => [d._id, d.v, d.pad.length])).to.deep.equal([...expected].sort((a, b) => a[0] - b[0]).map(([id, v]) => [id, v, 300 + id]));
      const tagged = await coll.find({ tag: 't1' }).sort({ v: -1, _id: 1 }).toArray();
      expect(tagged.map((d) => d._id)).to.deep.equal(
        [...expected]
          .filter(([id]) => id % 4 === 1)
          .sort((a, b) => b[1] - a[1] || a[0] - b[0])
          .map(([id]) => id),
      );
      await coll.deleteMany({ _id: { $gte: 30 } });
    } finally {
      await client.close();
      await devdb.stop();
    }
    const again = await startDevDb({ port: 0, dataDir: dir, cacheMb: 0 });
    const reader = new MongoClient(again.uri);
    try {
      await reader.connect();
      const docs = await reader.db('t').collection<{ _id: number; v: number }>('docs').find({}).sort({ _id: 1 }).toArray();
      expect(docs.map((d) => [d._id, d.v])).to.deep.equal([...expected].filter(([id]) => id < 30).sort((a, b) => a[0] - b[0]));
    } finally {
      await reader.close();
      await again.stop();
    }
  });

  it('keeps versions replaced before a compaction readable from the file it removed', async () => {
    setBytesCacheSize(0);
    const journal = new Persistence(dir, () => {}, { compactMinBytes: 1024 ** 3 });
    const catalog = new Catalog((change) => journal.record(change));
    journal.load(catalog);
    try {
      const coll = catalog.create('t', 'c');
      for (let i = 0; i < 500; i++) coll.insert({ _id: i, v: 'old', pad: 'p'.repeat(200) });
      journal.commit();
      // Held as a cursor or a snapshot read holds them.
      const held: Entry[] = [...coll.docs.values()];
      for (let i = 0; i < 500; i++) coll.replace(coll.get(`n${i}`)!, { _id: i, v: 'new' });
      journal.commit();
      await journal.compact();
      expect(journals(dir)).to.deep.equal(['journal-000002.lpj']);
      expect(held.map((e) => e.doc.v)).to.deep.equal(Array.from({ length: 500 }, () => 'old'));
      expect([...coll.docs.values()].map((e) => e.doc.v)).to.deep.equal(Array.from({ length: 500 }, () => 'new'));
      // Written after the switch, and appended to the new file.
      coll.insert({ _id: 'after', v: 'after' });
      journal.commit();
      expect(coll.get('"after"')!.doc.v).to.equal('after');
    } finally {
      journal.close();
    }
  });
});

describe('devdb cache of stored bytes', () => {
  const bytesOf = (n: number, fill: number) => new Uint8Array(n).fill(fill);

  it('keeps copies in memory of its own, used again generation after generation, and gives out copies', () => {
    // Generations of 100 bytes: each holds three of these 30-byte values.
    const cache = new BytesCache<string>(200);
    const a = bytesOf(30, 1);
    cache.set('a', a);
    a.fill(9); // the caller's buffer is the caller's: the cache kept a copy
    const hit = cache.get('a')!;
    expect([...hit]).to.deep.equal([...bytesOf(30, 1)]);
    hit.fill(7); // and so is a hit
    expect([...cache.get('a')!]).to.deep.equal([...bytesOf(30, 1)]);
    // A hit is not a view of the cache's memory (a slab of a generation's size).
    expect(cache.get('a')!.buffer.byteLength).to.not.equal(100);

    for (let round = 0; round < 50; round++) {
      // 'a' read once per round stays: each hit in the old generation copies it into the young one, whose slab was
      // the old generation's before; a value written over it there would show here.
      for (let i = 0; i < 3; i++) cache.set(`k${round}-${i}`, bytesOf(30, (round * 3 + i) % 250));
      expect([...cache.get('a')!], `round ${round}`).to.deep.equal([...bytesOf(30, 1)]);
      // The two generations hold what was written lately, each value as it was written.
      const last = `k${round}-2`;
      expect([...cache.get(last)!]).to.deep.equal([...bytesOf(30, (round * 3 + 2) % 250)]);
    }
    // Older values are gone: at most two generations are kept.
    expect(cache.get('k0-0')).to.equal(undefined);
    // Larger than a generation: not kept.
    cache.set('big', bytesOf(101, 3));
    expect(cache.get('big')).to.equal(undefined);
  });

  it('keeps nothing when its size is 0', () => {
    const cache = new BytesCache<string>(0);
    cache.set('a', bytesOf(10, 1));
    expect(cache.get('a')).to.equal(undefined);
  });
});
