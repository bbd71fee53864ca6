// All-in-one benchmark: the process `make run` starts (api, redirect and worker in one process, devdb on its own
// thread keeping its journal in a data folder), under redirect load for BENCH_AIO_SECONDS (60) with click capture
// and ingestion on, beside a bare Koa app answering the same 302 in the same run. Reported: throughput and p99 in
// the first and the last 10 s, clicks answered versus clicks stored once ingestion has caught up, RSS at the end.
// Then the same again after BENCH_AIO_STORED_CLICKS (1,000,000) clicks were added to the data folder, with the
// time the all-in-one took to start on it.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import { ROOT } from '../test/helpers/processes.ts';
import { Catalog } from '../src/devdb/catalog.ts';
import { Persistence } from '../src/devdb/persistence.ts';
import { freePort, startChild, stopChild, track } from './harness.ts';
import type { BenchOptions } from './foundation.bench.ts';

const WINDOW_SECONDS = 10;

interface Window {
  rps: number;
  p50: number;
  p99: number;
  answered: number;
  not_302: number;
}

async function window(url: string, host: string | undefined, seconds: number, connections: number): Promise<Window> {
  const r = await autocannon({ url, connections, duration: seconds, headers: host ? { Host: host } : {} });
  const redirects = (r as unknown as { '3xx': number })['3xx'];
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, answered: redirects, not_302: r.requests.total - redirects + r.errors + r.timeouts };
}

interface AllInOne {
  child: ChildProcess;
  key: string | null;
  startMs: number;
  devdb: Record<string, unknown> | null;
}

/** Starts `node src/main/run.ts all-in-one` as `make run` does, on the given ports and data folder. */
async function startAllInOne(env: Record<string, string>, apiPort: number): Promise<AllInOne> {
  const started = performance.now();
  // BENCH_AIO_NODE_ARGS: flags for the all-in-one's Node.js (e.g. `--trace-gc`); BENCH_AIO_LOG: a file that
  // receives everything it prints.
  const args = (process.env.BENCH_AIO_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = track(spawn(process.execPath, [...args, 'src/main/run.ts', 'all-in-one'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  const log = process.env.BENCH_AIO_LOG ? fs.createWriteStream(process.env.BENCH_AIO_LOG, { flags: 'a' }) : null;
  if (log) {
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
  }
  let out = '';
  // Only the start-up banner is kept; the access log is read and dropped so the pipe never fills. V8's own lines
  // (`--trace-gc`: `[pid:0x…] 123 ms: Scavenge …`) would fill the kept part before the banner: they are skipped.
  const keep = (d: Buffer) => {
    if (out.length >= 10_000) return;
    out += d
      .toString()
      .split('\n')
      .filter((line) => !/^\[\d+:0x[0-9a-f]+\]/.test(line))
      .join('\n');
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const deadline = Date.now() + 600_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`all-in-one exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) throw new Error(`all-in-one did not become ready:\n${out}`);
    try {
      if ((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const startMs = Math.round(performance.now() - started);
  // The banner follows readiness, after the demo tenants are seeded (a password hashed among them): wait for it.
  for (const until = Date.now() + 30_000; !out.includes('Linkplane is running') && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
  return { child, key: /workspace \S+ +key: (\S+)/.exec(out)?.[1] ?? null, startMs, devdb: devdbLoad(out) };
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

async function metric(ports: number[], name: string): Promise<number> {
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text().catch(() => '');
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'm').exec(text);
    if (m) return Number(m[1]);
  }
  return -1;
}

/** Clicks in the store once ingestion has caught up with `published` (or stopped moving for 20 s). */
async function storedClicks(uri: string, published: number): Promise<{ stored: number; caughtUpMs: number }> {
  const client = new MongoClient(uri);
  await client.connect();
  const started = performance.now();
  try {
    let last = -1;
    let still = performance.now();
    for (;;) {
      const n = await client.db('linkplane').collection('clicks').countDocuments();
      if (n >= published) return { stored: n, caughtUpMs: Math.round(performance.now() - started) };
      if (n !== last) {
        last = n;
        still = performance.now();
      } else if (performance.now() - still > 20_000) return { stored: n, caughtUpMs: -1 };
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await client.close();
  }
}

/**
 * Adds `count` clicks shaped like a stored one (new ids, spread over the last 30 days) to a stopped data folder,
 * through devdb's own catalog and journal (the writes a server makes, without the wire between): 5,000 per record.
 */
function addClicks(dataDir: string, count: number): number {
  const started = performance.now();
  const journal = new Persistence(dataDir, () => {});
  const catalog = new Catalog((change) => journal.record(change));
  journal.load(catalog);
  try {
    const clicks = catalog.get('linkplane', 'clicks');
    const template = clicks?.docs.values().next().value?.doc;
    if (!clicks || !template) throw new Error('no click stored to copy');
    const now = Date.now();
    for (let i = 0; i < count; i++) {
      clicks.insert({ ...template, _id: `bench_${i}`, ts: new Date(now - Math.floor((i / count) * 30 * 86_400_000)), counted: true, rolled_up: true });
      if (i % 5000 === 4999) journal.commit();
    }
  } finally {
    journal.close();
  }
  return Math.round((performance.now() - started) / 1000);
}

/** devdb's own account of its start on the data folder (journal replay), from the all-in-one's log. */
function devdbLoad(out: string): Record<string, unknown> | null {
  const m = /devdb: journal replayed (\{.*\})/.exec(out);
  return m ? (JSON.parse(m[1]!) as Record<string, unknown>) : null;
}

export async function allInOneBench(options: BenchOptions): Promise<Record<string, unknown>> {
  const seconds = Number(process.env.BENCH_AIO_SECONDS ?? 60);
  const storedTarget = Number(process.env.BENCH_AIO_STORED_CLICKS ?? 1_000_000);
  const [apiPort, redirectPort, workerPort, devdbPort, koaPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'linkplane-aio-'));
  const prefix = natsPrefix();
  const shortHost = `127.0.0.1:${redirectPort}`;
  const env = {
    API_PORT: String(apiPort),
    REDIRECT_PORT: String(redirectPort),
    WORKER_PORT: String(workerPort),
    DEVDB_PORT: String(devdbPort),
    DEVDB_DATA_DIR: dataDir,
    NATS_URL,
    NATS_PREFIX: prefix,
    SHORT_LINK_BASE_URL: `http://${shortHost}`,
  };
  const devdbUri = `mongodb://127.0.0.1:${devdbPort}/?directConnection=true`;
  const koa = await startChild('bench/servers/bare-redirect-koa.ts', [], { PORT: String(koaPort) }, `http://127.0.0.1:${koaPort}/ready`);
  let aio: AllInOne | undefined;
  const phases: Record<string, unknown>[] = [];
  try {
    aio = await startAllInOne(env, apiPort);
    if (!aio.key) throw new Error('the all-in-one printed no demo key');
    const created = await fetch(`http://127.0.0.1:${apiPort}/v1/links`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${aio.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/landing', slug: 'plain' }),
    });
    if (created.status !== 201) throw new Error(`creating the bench link: ${created.status} ${await created.text()}`);

    const phase = async (name: string, started: AllInOne): Promise<void> => {
      const ports = [apiPort, redirectPort, workerPort];
      const publishedBefore = await metric(ports, 'linkplane_clicks_published_total');
      const storedBefore = (await storedClicks(devdbUri, 0)).stored;
      await window(`http://127.0.0.1:${koaPort}/plain`, undefined, 1, options.connections); // warm-up
      const koaBefore = await window(`http://127.0.0.1:${koaPort}/plain`, undefined, WINDOW_SECONDS, options.connections);
      console.error(`${name}: koa ${koaBefore.rps} req/s p99 ${koaBefore.p99} ms`);
      const windows: Window[] = [];
      for (let s = 0; s < seconds; s += WINDOW_SECONDS) {
        const w = await window(`http://${shortHost}/plain`, shortHost, Math.min(WINDOW_SECONDS, seconds - s), options.connections);
        windows.push(w);
        console.error(`${name}: all-in-one ${s}-${s + WINDOW_SECONDS} s: ${w.rps} req/s p50 ${w.p50} ms p99 ${w.p99} ms${w.not_302 ? ` (not 302: ${w.not_302})` : ''}`);
      }
      const published = (await metric(ports, 'linkplane_clicks_published_total')) - publishedBefore;
      const { stored, caughtUpMs } = await storedClicks(devdbUri, storedBefore + published);
      // Koa again once ingestion has caught up: while it catches up, the all-in-one takes the cores Koa would use.
      const koaAfter = await window(`http://127.0.0.1:${koaPort}/plain`, undefined, WINDOW_SECONDS, options.connections);
      console.error(`${name}: koa ${koaAfter.rps} req/s p99 ${koaAfter.p99} ms (after ingestion caught up, ${caughtUpMs} ms after the load)`);
      const first = windows[0]!;
      const last = windows.at(-1)!;
      const koaRps = (koaBefore.rps + koaAfter.rps) / 2;
      const row = {
        phase: name,
        start_ms: started.startMs,
        devdb_start: started.devdb,
        koa_rps_before_after: [koaBefore.rps, koaAfter.rps],
        first_10s: first,
        last_10s: last,
        last_vs_koa: Math.round((last.rps / koaRps) * 100) / 100,
        windows_vs_koa: windows.map((w) => Math.round((w.rps / koaRps) * 100) / 100),
        clicks_answered_received_by_client: windows.reduce((n, w) => n + w.answered, 0),
        clicks_answered_by_server: published,
        clicks_stored: stored - storedBefore,
        ingestion_caught_up_ms_after_load: caughtUpMs,
        rss_mb_end: rssMb(aio!.child.pid!),
      };
      console.error(`${name}: ${JSON.stringify(row)}`);
      phases.push(row);
    };

    await phase('empty data folder', aio);
    await stopChild(aio.child);
    aio = undefined;

    if (storedTarget > 0) {
      const addSeconds = addClicks(dataDir, storedTarget);
      console.error(`added ${storedTarget} clicks to the data folder in ${addSeconds} s`);
      aio = await startAllInOne(env, apiPort);
      console.error(`all-in-one ready on ${storedTarget} stored clicks after ${aio.startMs} ms; devdb: ${JSON.stringify(aio.devdb)}`);
      await phase(`${storedTarget} clicks stored`, aio);
    }
    const journal = fs.readdirSync(dataDir).filter((f) => f.endsWith('.lpj')).map((f) => ({ file: f, mb: Math.round(fs.statSync(path.join(dataDir, f)).size / 1e6) }));
    return {
      configuration: '`make run` defaults (all-in-one, devdb on its thread with a journal in a data folder), ports and NATS prefix of its own',
      window_seconds: WINDOW_SECONDS,
      seconds,
      phases,
      journal,
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
      target: 'last 10 s ≥ 50 % of koa and p99 < 20 ms; clicks answered = clicks stored',
    };
  } finally {
    if (aio) await stopChild(aio.child);
    await stopChild(koa);
    // BENCH_AIO_KEEP=<dir>: the data folder is kept there, to start an all-in-one on it again by hand.
    if (process.env.BENCH_AIO_KEEP) fs.renameSync(dataDir, process.env.BENCH_AIO_KEEP);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
