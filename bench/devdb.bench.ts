// devdb benchmark, in this process: the memory one stored click costs (heap, and heap plus the buffers outside it,
// after a full garbage collection, divided by the clicks stored) with the `clicks` collection's own indexes, the
// time to start on that data folder (journal replay), and reads of one stored click by _id and of a workspace's 50
// latest clicks through the driver.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MongoClient } from 'mongodb';
import { ClickStore, toClickDoc } from '../src/clicks/click.store.ts';
import type { ClickRecord } from '../src/visitor/click-record.ts';
import { startDevDb } from '../src/devdb/index.ts';
import type { BenchOptions } from './foundation.bench.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function memory(): { heap: number; external: number } {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.arrayBuffers };
}

const COUNTRIES = ['FR', 'DE', 'US', 'GB', 'ES', 'IT', 'NL', 'CA'];
const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge'];

/** A click as the redirect publishes it: a few workspaces and links, visitors and times varying. */
export function aClick(i: number, now: number): ClickRecord {
  const link = i % 50;
  return {
    id: `clk_${String(i).padStart(10, '0')}${'x'.repeat(12)}`,
    ts: new Date(now - (i % 86_400) * 1000).toISOString(),
    workspace_id: `ws_bench${link % 5}aaaaaaaaaaaaaaa`,
    link_id: `lnk_bench${String(link).padStart(2, '0')}aaaaaaaaaaaaa`,
    domain_id: 'dom_benchaaaaaaaaaaaaaaa',
    domain: 'go.example.com',
    slug: `s${link}`,
    outcome: 'redirect',
    destination: `https://example.com/landing/${link}`,
    decision: { step: 'url', ruleId: null, workspaceRule: false, targetingIndex: null, variantIndex: null, destinationId: null, rotatorFallback: false },
    visitor: {
      ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      device: 'desktop',
      os: 'windows',
      browser: BROWSERS[i % BROWSERS.length]!,
      language: 'en-US',
      country: COUNTRIES[i % COUNTRIES.length]!,
      region: null,
      city: null,
      asn: 3215,
      visitor_type: 'human',
      verified_bot: false,
      bot_name: null,
      proxy_type: null,
      quality: 90,
      referer: i % 3 === 0 ? 'https://news.example.org/' : null,
      visit: i % 4 === 0 ? 'first' : 'repeat',
      visitor_id: `v_${(i * 7919) % 1_000_003}`,
    },
  };
}

async function readRate(seconds: number, read: (i: number) => Promise<unknown>): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let n = 0;
  const workers = Array.from({ length: 8 }, async (_, w) => {
    for (let i = w; performance.now() < until; i += 8) {
      await read(i);
      n++;
    }
  });
  await Promise.all(workers);
  return Math.round(n / seconds);
}

export async function devdbBench(options: BenchOptions): Promise<Record<string, unknown>> {
  const count = Number(process.env.BENCH_DEVDB_CLICKS ?? 200_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'linkplane-devdb-bench-'));
  const now = Date.now();
  try {
    let devdb = await startDevDb({ port: 0, dataDir });
    let client = new MongoClient(devdb.uri);
    await client.connect();
    const store = new ClickStore(client.db('linkplane'));
    await store.ensureIndexes();
    const before = memory();
    const insertStarted = performance.now();
    for (let done = 0; done < count; ) {
      const n = Math.min(2000, count - done);
      const expireAt = new Date(now + 30 * 86_400_000);
      await store.clicks.insertMany(Array.from({ length: n }, (_, k) => toClickDoc(aClick(done + k, now), expireAt)));
      done += n;
    }
    const insertSeconds = (performance.now() - insertStarted) / 1000;
    const after = memory();
    const heapPerClick = Math.round((after.heap - before.heap) / count);
    const totalPerClick = Math.round((after.heap + after.external - before.heap - before.external) / count);
    console.error(`devdb: ${count} clicks stored in ${insertSeconds.toFixed(1)} s; heap ${heapPerClick} bytes/click, heap + buffers ${totalPerClick} bytes/click`);

    const byId = await readRate(options.seconds, (i) => store.clicks.findOne({ _id: aClick((i * 7919) % count, now).id }));
    const latest = await readRate(options.seconds, (i) => store.clicks.find({ workspace_id: `ws_bench${i % 5}aaaaaaaaaaaaaaa` }).sort({ ts: -1 }).limit(50).toArray());
    console.error(`devdb: findOne by _id ${byId}/s, 50 latest of a workspace ${latest}/s`);
    await client.close();
    await devdb.stop();

    const journalMb = fs.readdirSync(dataDir).reduce((n, f) => n + fs.statSync(path.join(dataDir, f)).size, 0) / 1e6;
    const restartStarted = performance.now();
    let replay: Record<string, unknown> | undefined;
    devdb = await startDevDb({ port: 0, dataDir, log: (msg, fields) => msg === 'devdb: journal replayed' && (replay = fields) });
    const startMs = Math.round(performance.now() - restartStarted);
    client = new MongoClient(devdb.uri);
    const stored = await client.db('linkplane').collection('clicks').countDocuments();
    await client.close();
    await devdb.stop();
    console.error(`devdb: start-up on ${stored} stored clicks (${journalMb.toFixed(0)} MB of journal): ${startMs} ms; replay ${JSON.stringify(replay)}`);
    return {
      clicks: count,
      insert_clicks_per_s: Math.round(count / insertSeconds),
      heap_bytes_per_click: heapPerClick,
      heap_and_buffers_bytes_per_click: totalPerClick,
      find_one_by_id_per_s: byId,
      latest_50_of_workspace_per_s: latest,
      journal_mb: Math.round(journalMb),
      start_ms: startMs,
      replay,
      stored_after_restart: stored,
    };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
