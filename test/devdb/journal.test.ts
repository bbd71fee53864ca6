// The journal under crashes: a devdb child process killed with SIGKILL in the middle of a write burst (while it
// compacts), torn and corrupted tail records, and compaction while writes go on.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { serialize } from 'bson';
import { MongoClient } from 'mongodb';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Catalog } from '../../src/devdb/catalog.ts';
import { startDevDb } from '../../src/devdb/index.ts';
import { Persistence } from '../../src/devdb/persistence.ts';
import { accepts, freePort, ROOT } from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';

function generations(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .map((f) => /^journal-(\d+)\.lpj$/.exec(f))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]));
}

function journalFile(dir: string): string {
  const [g] = generations(dir);
  return path.join(dir, `journal-${String(g).padStart(6, '0')}.lpj`);
}

/** Offsets of the records of a journal file. */
function recordOffsets(file: string): number[] {
  const buf = fs.readFileSync(file);
  const offsets: number[] = [];
  for (let off = 0; off < buf.length; off += 8 + buf.readUInt32LE(off)) offsets.push(off);
  return offsets;
}

async function startChild(dir: string, extra: string[] = []): Promise<{ child: ChildProcess; uri: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/devdb/main.ts', '--port', String(port), '--data', dir, ...extra], { cwd: ROOT, stdio: 'ignore' });
  await until(async () => (await accepts(port)) || false, 20_000, 'the devdb child to listen');
  return { child, uri: `mongodb://127.0.0.1:${port}/?replicaSet=devdb&directConnection=true` };
}

describe('devdb journal', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devdb-journal-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write, and no part of an unacknowledged transaction, after SIGKILL in a write burst', async () => {
    const { child, uri } = await startChild(dir, ['--compact-min-bytes', '262144']);
    const client = new MongoClient(uri, { retryWrites: false, serverSelectionTimeoutMS: 1000, maxPoolSize: 20 });
    await client.connect();
    const db = client.db('crash');
    const acked = new Set<string>();
    const counters = new Map<string, number>();
    const txns = new Set<number>();
    let running = true;
    const swallow = () => {
      running = false;
    };
    const inserters = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; running; i++) {
        const _id = `w${w}-${i}`;
        await db.collection<{ _id: string; w: number; i: number; pad: string }>('docs').insertOne({ _id, w, i, pad: 'x'.repeat(300) });
        acked.add(_id);
      }
    });
    const incrementers = Array.from({ length: 4 }, async (_, k) => {
      const _id = `counter-${k}`;
      for (let n = 1; running; n++) {
        await db.collection<{ _id: string }>('counters').updateOne({ _id }, { $inc: { n: 1 }, $set: { pad: 'y'.repeat(500) } }, { upsert: true });
        counters.set(_id, n);
      }
    });
    const transactions = (async () => {
      for (let i = 0; running; i++) {
        const session = client.startSession();
        try {
          await session.withTransaction(async () => {
            await db.collection<{ _id: number }>('a').insertOne({ _id: i }, { session });
            await db.collection<{ _id: number }>('b').insertOne({ _id: i }, { session });
          });
          txns.add(i);
        } finally {
          await session.endSession().catch(() => {});
        }
      }
    })();
    const all = Promise.all([...inserters, ...incrementers, transactions].map((p) => p.catch(swallow)));
    // Kill once the journal has been compacted at least once and writes are in full flow.
    await until(() => (generations(dir).some((g) => g >= 2) && acked.size >= 3000) || running === false ? true : false, 40_000, 'a compaction during the burst');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    running = false;
    await all;
    await client.close(true);
    expect(acked.size).to.be.greaterThan(3000);

    const restarted = await startChild(dir);
    const reader = new MongoClient(restarted.uri);
    try {
      await reader.connect();
      const rdb = reader.db('crash');
      const stored = new Set((await rdb.collection<{ _id: string }>('docs').find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
      const missing = [...acked].filter((id) => !stored.has(id));
      expect(missing, 'acknowledged inserts missing after the crash').to.deep.equal([]);
      for (const doc of await rdb.collection<{ _id: string; n: number; pad: string }>('counters').find({}).toArray()) {
        expect(doc.n, doc._id).to.be.at.least(counters.get(doc._id) ?? 0);
        expect(doc.n, doc._id).to.be.at.most((counters.get(doc._id) ?? 0) + 1);
        expect(doc.pad).to.have.length(500);
      }
      const a = new Set((await rdb.collection<{ _id: number }>('a').find({}).toArray()).map((d) => d._id));
      const b = new Set((await rdb.collection<{ _id: number }>('b').find({}).toArray()).map((d) => d._id));
      expect([...a].sort(), 'a transaction applied in part').to.deep.equal([...b].sort());
      expect([...txns].filter((i) => !a.has(i)), 'acknowledged transactions missing').to.deep.equal([]);
    } finally {
      await reader.close();
      restarted.child.kill('SIGTERM');
      await new Promise((resolve) => restarted.child.once('exit', resolve));
    }
  });

  async function writeTwoRecords(): Promise<void> {
    const devdb = await startDevDb({ port: 0, dataDir: dir });
    const client = new MongoClient(devdb.uri);
    await client.connect();
    await client.db('t').collection('c').insertOne({ _id: 'a' } as never);
    await client.db('t').collection('c').insertOne({ _id: 'b', big: 'z'.repeat(1000) } as never);
    await client.close();
    await devdb.stop();
  }

  async function idsAfterRestart(): Promise<string[]> {
    const devdb = await startDevDb({ port: 0, dataDir: dir });
    const client = new MongoClient(devdb.uri);
    try {
      await client.connect();
      return (await client.db('t').collection<{ _id: string }>('c').find({}).sort({ _id: 1 }).toArray()).map((d) => d._id);
    } finally {
      await client.close();
      await devdb.stop();
    }
  }

  it('drops a record cut short by a crash, keeps everything before it, and appends after it', async () => {
    await writeTwoRecords();
    const file = journalFile(dir);
    const last = recordOffsets(file).at(-1)!;
    const size = fs.statSync(file).size;
    fs.truncateSync(file, last + Math.floor((size - last) / 2));
    expect(await idsAfterRestart()).to.deep.equal(['a']);
    expect(fs.statSync(file).size).to.equal(last);
    expect(fs.readdirSync(dir).some((f) => f.includes('.torn-'))).to.equal(true);
    // The next write lands after the last good record and survives another restart.
    const devdb = await startDevDb({ port: 0, dataDir: dir });
    const client = new MongoClient(devdb.uri);
    await client.connect();
    await client.db('t').collection('c').insertOne({ _id: 'c' } as never);
    await client.close();
    await devdb.stop();
    expect(await idsAfterRestart()).to.deep.equal(['a', 'c']);
  });

  it('never loads a record whose checksum does not match', async () => {
    await writeTwoRecords();
    const file = journalFile(dir);
    const last = recordOffsets(file).at(-1)!;
    const buf = fs.readFileSync(file);
    // A byte inside the document, past the record's header: the length still fits, only the checksum can tell.
    buf[buf.length - 100] = buf[buf.length - 100]! ^ 0xff;
    fs.writeFileSync(file, buf);
    expect(await idsAfterRestart()).to.deep.equal(['a']);
    expect(fs.statSync(file).size).to.equal(last);
  });

  it('compacts in the background while writes continue, and the compacted journal replays to the same data', async () => {
    const devdb = await startDevDb({ port: 0, dataDir: dir, journal: { compactMinBytes: 64 * 1024 } });
    const client = new MongoClient(devdb.uri);
    const expected = new Map<number, number>();
    try {
      await client.connect();
      const coll = client.db('t').collection<{ _id: number; v: number; pad: string }>('hot');
      await coll.createIndex({ v: 1 }, { name: 'by_v' });
      // Each round overwrites the same 20 documents: the journal grows, the live data does not.
      for (let round = 0; round < 300; round++) {
        await Promise.all(
          Array.from({ length: 20 }, (_, id) => {
            expected.set(id, round);
            return coll.replaceOne({ _id: id }, { v: round, pad: 'p'.repeat(400) }, { upsert: true });
          }),
        );
      }
      expect(Math.max(...generations(dir))).to.be.greaterThan(2);
      expect(generations(dir)).to.have.length(1);
      // Live data is about 20 × 430 bytes; the journal never gets much beyond the compaction threshold.
      expect(fs.statSync(journalFile(dir)).size).to.be.below(3 * 64 * 1024);
    } finally {
      await client.close();
      await devdb.stop();
    }
    const again = await startDevDb({ port: 0, dataDir: dir });
    const reader = new MongoClient(again.uri);
    try {
      await reader.connect();
      const coll = reader.db('t').collection<{ _id: number; v: number }>('hot');
      const docs = await coll.find({}).sort({ _id: 1 }).toArray();
      expect(docs.map((d) => [d._id, d.v])).to.deep.equal([...expected].sort((x, y) => x[0] - y[0]));
      expect((await coll.listIndexes().toArray()).map((i) => i.name as string)).to.deep.equal(['_id_', 'by_v']);
    } finally {
      await reader.close();
      await again.stop();
    }
  });

  it('keeps every write committed while a compaction writes and flushes the new journal, its last turn included', async () => {
    const journal = new Persistence(dir, () => {}, { compactMinBytes: 1024 ** 3 });
    const catalog = new Catalog((change) => journal.record(change));
    journal.load(catalog);
    const coll = catalog.create('t', 'c');
    for (let i = 0; i < 3000; i++) coll.insert({ _id: `early${i}`, pad: 'p'.repeat(300) });
    journal.commit();
    let finished = false;
    const done = journal.compact().then(() => (finished = true));
    // A write in every turn until the compaction is over: some land while the snapshot is written, some while it is
    // flushed, and one in the turn that switches files.
    let late = 0;
    while (!finished) {
      coll.insert({ _id: `late${late++}` });
      journal.commit();
      await nextTurn();
    }
    await done;
    coll.insert({ _id: 'after' });
    journal.commit();
    journal.close();
    expect(journal.stats().compactions).to.equal(1);
    expect(late).to.be.greaterThan(3);

    const again = new Persistence(dir, () => {});
    const reloaded = new Catalog((change) => again.record(change));
    again.load(reloaded);
    try {
      const ids = new Set(reloaded.get('t', 'c')!.docs.keys());
      expect(ids.size).to.equal(3000 + late + 1);
      for (let i = 0; i < late; i++) expect(ids.has(JSON.stringify(`late${i}`)), `late${i}`).to.equal(true);
    } finally {
      again.close();
    }
  });

  it('converts a data folder of the previous one-file-per-collection format', async () => {
    fs.mkdirSync(path.join(dir, 'app'));
    const header = serialize({ db: 'app', name: 'links', indexes: [{ v: 2, key: { slug: 1 }, name: 'slug_1', unique: true }] });
    fs.writeFileSync(path.join(dir, 'app', 'links.bson'), Buffer.concat([header, serialize({ _id: 'l1', slug: 'a' }), serialize({ _id: 'l2', slug: 'b' })]));
    const devdb = await startDevDb({ port: 0, dataDir: dir });
    const client = new MongoClient(devdb.uri);
    try {
      await client.connect();
      const links = client.db('app').collection<{ _id: string; slug: string }>('links');
      expect((await links.find({}).sort({ _id: 1 }).toArray()).map((d) => d.slug)).to.deep.equal(['a', 'b']);
      expect((await links.listIndexes().toArray()).map((i) => i.name as string)).to.deep.equal(['_id_', 'slug_1']);
    } finally {
      await client.close();
      await devdb.stop();
    }
    expect(fs.existsSync(path.join(dir, 'app', 'links.bson'))).to.equal(false);
    expect(generations(dir)).to.deep.equal([1]);
  });
});
