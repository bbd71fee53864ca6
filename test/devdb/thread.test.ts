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

  it('runs below normal priority when asked (the all-in-one), and at the process priority otherwise', async () => {
    const own = os.getPriority();
    const low = await startDevDbThread({ port: 0, lowerPriority: true });
    try {
      expect(devdbThreadNices()).to.deep.equal([os.constants.priority.PRIORITY_BELOW_NORMAL]);
      // The lowered thread still answers.
      const client = new MongoClient(low.uri);
      try {
        await client.connect();
        await client.db('t').collection('p').insertOne({ n: 1 });
        expect(await client.db('t').collection('p').countDocuments()).to.equal(1);
      } finally {
        await client.close();
      }
    } finally {
      await low.stop();
    }
    expect(os.getPriority()).to.equal(own);
    const normal = await startDevDbThread({ port: 0 });
    try {
      expect(devdbThreadNices()).to.deep.equal([own]);
    } finally {
      await normal.stop();
    }
  });

  it('fails to start with the reason when the options are refused', async () => {
    const err = await startDevDbThread({ port: 0, host: '0.0.0.0' }).catch((e: unknown) => e);
    expect((err as Error).message).to.match(/only binds loopback/);
  });
});

/** The nice value of each live thread named `devdb` in this process (Linux: /proc/self/task/<tid>/stat, field 19). */
function devdbThreadNices(): number[] {
  const nices: number[] = [];
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== 'devdb') continue;
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      nices.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return nices;
}
