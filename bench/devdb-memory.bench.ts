// devdb memory per stored click: clicks shaped as the click store writes them (toClickDoc, with the `clicks`
// collection's own indexes from ClickStore.ensureIndexes) are inserted through the driver up to each size of
// BENCH_DEVDB_SIZES (default 100k, 500k, 1M); at each, after a full garbage collection, the heap, the buffers outside
// it and the process's RSS, and their growth per click. Then devdb is started again on that data folder: the time to
// replay it and the memory it then holds, in a process of its own (bench/devdb-start.ts). BENCH_DEVDB_HEAP_SNAPSHOT=<file>
// writes a heap snapshot at the first size; BENCH_DEVDB_DATA_DIR=<empty folder> keeps the data folder there.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MongoClient } from 'mongodb';
import { ClickStore, toClickDoc } from '../src/clicks/click.store.ts';
import { startDevDb } from '../src/devdb/index.ts';
import { aClick } from './devdb.bench.ts';
import type { BenchOptions } from './foundation.bench.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Memory {
  heap: number;
  buffers: number;
  rss: number;
}

function memory(): Memory {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers, rss: m.rss };
}

const MB = 1024 * 1024;

function perClick(now: Memory, base: Memory, clicks: number): Record<string, number> {
  return {
    clicks,
    heap_mb: Math.round(now.heap / MB),
    buffers_mb: Math.round(now.buffers / MB),
    rss_mb: Math.round(now.rss / MB),
    heap_bytes_per_click: Math.round((now.heap - base.heap) / clicks),
    heap_and_buffers_bytes_per_click: Math.round((now.heap + now.buffers - base.heap - base.buffers) / clicks),
    rss_bytes_per_click: Math.round((now.rss - base.rss) / clicks),
  };
}

export async function devdbMemoryBench(_options: BenchOptions): Promise<Record<string, unknown>> {
  const sizes = (process.env.BENCH_DEVDB_SIZES ?? '100000,500000,1000000').split(',').map(Number);
  const snapshotFile = process.env.BENCH_DEVDB_HEAP_SNAPSHOT;
  const dataDir = process.env.BENCH_DEVDB_DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'linkplane-devdb-memory-'));
  const now = Date.now();
  const expireAt = new Date(now + 30 * 86_400_000);
  try {
    const base = memory();
    const devdb = await startDevDb({ port: 0, dataDir });
    const client = new MongoClient(devdb.uri);
    await client.connect();
    const store = new ClickStore(client.db('linkplane'));
    await store.ensureIndexes();
    const stored: Record<string, number>[] = [];
    let done = 0;
    const started = performance.now();
    for (const size of sizes) {
      while (done < size) {
        const n = Math.min(2000, size - done);
        await store.clicks.insertMany(Array.from({ length: n }, (_, k) => toClickDoc(aClick(done + k, now), expireAt)));
        done += n;
      }
      const m = perClick(memory(), base, done);
      stored.push({ ...m, seconds: Math.round((performance.now() - started) / 1000) });
      console.error(`devdb-memory: ${JSON.stringify(stored.at(-1))}`);
      if (snapshotFile && stored.length === 1) console.error(`devdb-memory: heap snapshot ${writeHeapSnapshot(snapshotFile)}`);
    }
    await client.close();
    await devdb.stop();

    const journalMb = fs.readdirSync(dataDir).reduce((n, f) => n + fs.statSync(path.join(dataDir, f)).size, 0) / MB;
    // In a process of its own: this one still holds what the first devdb and the driver allocated.
    const child = spawnSync(process.execPath, [fileURLToPath(new URL('./devdb-start.ts', import.meta.url)), dataDir], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`devdb-start: ${child.stderr}`);
    const restart: Record<string, unknown> = { journal_mb: Math.round(journalMb), ...(JSON.parse(child.stdout) as Record<string, unknown>) };
    if (restart.clicks !== done || restart.latest_50 !== 50) throw new Error(`after restart: ${JSON.stringify(restart)}`);
    console.error(`devdb-memory: restart ${JSON.stringify(restart)}`);
    return { base_rss_mb: Math.round(base.rss / MB), stored, restart };
  } finally {
    if (!process.env.BENCH_DEVDB_DATA_DIR) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
