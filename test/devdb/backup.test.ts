// The backup docs/chart-operations.md describes: `cp` of the newest journal file while devdb runs and takes writes
// (and compacts), restored into an empty folder, gives a state devdb had at one instant: every write acknowledged
// before the copy started, no transaction in half, and the writes as a prefix of their order.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { startDevDb } from '../../src/devdb/index.ts';
import { accepts, freePort, ROOT } from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';

const run = promisify(execFile);

function newestJournal(dir: string): string {
  const names = fs.readdirSync(dir).filter((f) => /^journal-\d+\.lpj$/.test(f)).sort();
  return path.join(dir, names.at(-1)!);
}

describe('devdb backup by copying the journal while it runs', function () {
  this.timeout(120_000);
  let dir: string;
  let child: ChildProcess | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devdb-backup-'));
  });
  afterEach(() => {
    child?.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('restores every write acknowledged before the copy, whole transactions only, in order', async () => {
    const port = await freePort();
    // A small compaction threshold: the journal is rewritten several times while the writes and copies go on.
    child = spawn(process.execPath, ['src/devdb/main.ts', '--port', String(port), '--data', path.join(dir, 'live'), '--compact-min-bytes', '65536'], { cwd: ROOT, stdio: 'ignore' });
    await until(async () => (await accepts(port)) || false, 20_000, 'the devdb child to listen');
    const client = new MongoClient(`mongodb://127.0.0.1:${port}/?replicaSet=devdb&directConnection=true`);
    await client.connect();
    const db = client.db('shop');
    let acknowledged = 0;
    let writing = true;
    // Each step is one transaction writing the same sequence number to two collections, with a payload that makes
    // the journal grow (and compact).
    const writer = (async () => {
      const payload = 'x'.repeat(2_000);
      for (let seq = 0; writing; seq++) {
        await client.withSession((session) => session.withTransaction(async () => {
          await db.collection('orders').insertOne({ _id: seq as never, payload }, { session });
          await db.collection('ledger').insertOne({ _id: seq as never, payload }, { session });
        }));
        acknowledged = seq + 1;
      }
    })();

    const backups: Array<{ file: string; before: number }> = [];
    try {
      for (let i = 0; i < 4; i++) {
        await until(() => acknowledged >= (i + 1) * 150, 60_000, 'writes to go on');
        const before = acknowledged;
        const file = path.join(dir, `backup-${i}.lpj`);
        await run('cp', [newestJournal(path.join(dir, 'live')), file]);
        backups.push({ file, before });
      }
    } finally {
      writing = false;
      await writer;
      await client.close();
    }

    for (const { file, before } of backups) {
      const restored = path.join(dir, `restore-${path.basename(file, '.lpj')}`);
      fs.mkdirSync(restored);
      fs.copyFileSync(file, path.join(restored, 'journal-000001.lpj'));
      const copy = await startDevDb({ port: 0, dataDir: restored });
      const reader = new MongoClient(`${copy.uri.replace(/\/\?.*$/, '')}/?directConnection=true`);
      try {
        await reader.connect();
        const ids = async (name: string) => (await reader.db('shop').collection(name).find({}, { projection: { _id: 1 } }).sort({ _id: 1 }).toArray()).map((d) => d._id as unknown as number);
        const [orders, ledger] = [await ids('orders'), await ids('ledger')];
        expect(orders.length, file).to.be.at.least(before);
        expect(orders, 'whole transactions only').to.deep.equal(ledger);
        expect(orders, 'a prefix of the writes').to.deep.equal(Array.from({ length: orders.length }, (_, i) => i));
      } finally {
        await reader.close();
        await copy.stop();
      }
    }
  });
});
