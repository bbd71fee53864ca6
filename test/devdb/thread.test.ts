// The all-in-one's devdb runs on a worker thread: the same server, reached by the driver over loopback, its
// journal committed when it is stopped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { startDevDbThread } from '../../src/devdb/thread.ts';

describe('devdb on a worker thread', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devdb-thread-'));
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the driver, forwards its log lines, and keeps its data across a restart', async () => {
    expect(isMainThread).to.equal(true);
    const lines: string[] = [];
    const first = await startDevDbThread({ port: 0, dataDir: dir, log: (msg) => lines.push(msg) });
    let client = new MongoClient(first.uri);
    await client.connect();
    await client.db('t').collection('c').insertMany([{ n: 1 }, { n: 2 }]);
    await client.close();
    await first.stop();
    expect(lines).to.include('devdb listening');

    const second = await startDevDbThread({ port: 0, dataDir: dir });
    client = new MongoClient(second.uri);
    try {
      await client.connect();
      expect(await client.db('t').collection('c').countDocuments()).to.equal(2);
    } finally {
      await client.close();
      await second.stop();
    }
  });

  it('grows its heap up to the limit it is given, and tells it in serverStatus', async () => {
    const status = async (options: Parameters<typeof startDevDbThread>[0]) => {
      const devdb = await startDevDbThread({ port: 0, ...options });
      const client = new MongoClient(devdb.uri);
      try {
        await client.connect();
        return ((await client.db('admin').command({ serverStatus: 1 })) as { devdb: { heap: { usedMB: number; limitMB: number } } }).devdb.heap;
      } finally {
        await client.close();
        await devdb.stop();
      }
    };
    // The limit holds the old generation given and the young one beside it.
    const given = await status({ heapMb: 6144, youngGenerationMb: 64 });
    expect(given.limitMB).to.be.within(6144 + 64, 6144 + 4 * 64);
    expect(given.usedMB).to.be.above(0).and.below(given.limitMB);
    // Without one, V8's own limit: near 4 GB, whatever the machine has.
    const own = await status({ youngGenerationMb: 64 });
    expect(own.limitMB).to.be.below(6144);
  });

  it('fails to start with the reason when the options are refused', async () => {
    const err = await startDevDbThread({ port: 0, host: '0.0.0.0' }).catch((e: unknown) => e);
    expect((err as Error).message).to.match(/only binds loopback/);
  });
});
