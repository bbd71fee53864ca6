// Analytics benchmark, on devdb (its own process), in one run:
// 1. ingestion through the worker (real NATS, raw clicks stored) with rollups off, then on: clicks per second;
// 2. BENCH_ANALYTICS_CLICKS (10,000,000) clicks over 90 days rolled up through the ingester's own rollup code
//    (RollupStore.apply, the function the ingester's transaction calls). Their raw documents are NOT stored: devdb
//    keeps everything in memory, and the queries under test never read raw clicks. Then summary, time series and a
//    90-day country breakdown against the api: p50 and p99;
// 3. CSV export of BENCH_EXPORT_ROWS (1,000,000) raw clicks: rows per second, and the api process's RSS growth.
// BENCH_ANALYTICS_PHASES (default `ingest,queries,export`) runs only the named phases, e.g. `export` alone.
// BENCH_ANALYTICS_DATA=<dir>: devdb keeps its data in that folder. The first run fills and settles the rollups as
//   above and notes the workspace, its key and the fill's figures there (bench-analytics.json); a later run with the
//   same folder and the same BENCH_ANALYTICS_CLICKS starts devdb from it (replaying its journal) and goes straight to
//   the queries, so a change to the read path is measured again in minutes rather than 25 at 10 M clicks. The 90 days
//   are those of the first run: the queries' window (`interval=90d`, up to now) slides by the time elapsed since.
// BENCH_GC_PAUSES_MS=<ms>: the api logs each garbage-collection pause of at least that long (servers/gc-on-message.ts).
// BENCH_ANALYTICS_QUERY_ROUNDS (1): rounds of the queries without part cache, each with a fresh api; the medians of
//   the rounds are reported. BENCH_ANALYTICS_COMPARE=<checkout>: each round also runs them against an api started from
//   that checkout of Linkplane (e.g. main in another worktree), so two versions of the read path meet the same data.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { load } from 'js-yaml';
import { MongoClient, type Db } from 'mongodb';
import { pino } from 'pino';
import { benchDatabase, startChild, stopChild } from './harness.ts';
import { freePort } from '../test/helpers/processes.ts';
import { NATS_URL, natsPrefix } from '../test/helpers/env.ts';
import { seeded, pick } from '../test/helpers/analytics-clicks.ts';
import { connectNats, provisionStreams } from '../src/platform/nats.ts';
import { encodeClicks } from '../src/clicks/click-wire.ts';
import { ClickIds } from '../src/clicks/click-id.ts';
import { toClickDoc } from '../src/clicks/click.store.ts';
import type { ClickRecord } from '../src/visitor/click-record.ts';
import { RollupStore, SETTLE_AFTER_MS } from '../src/analytics/rollup.store.ts';

interface BenchOptions {
  rounds: number;
  seconds: number;
  connections: number;
}

const ids = new ClickIds('bench-secret-key-of-at-least-32-characters!');
const COUNTRIES = ['US', 'US', 'US', 'IN', 'DE', 'GB', 'FR', 'BR', 'JP', 'CA', 'ES', 'IT', 'NL', 'MX', 'AU', 'PL', 'SE', 'TR', 'ID', 'NG'];
const CITIES = Array.from({ length: 300 }, (_, i) => `City ${i}`);
const REFERERS = [null, null, 'https://www.google.com/', 'https://t.co/x', 'https://news.ycombinator.com/', ...Array.from({ length: 200 }, (_, i) => `https://site${i}.example/page`)];
const BROWSERS = ['Chrome', 'Chrome', 'Mobile Safari', 'Firefox', 'Edge', 'Samsung Internet', null];
const TYPES = ['human', 'human', 'human', 'human', 'human', 'human', 'human', 'vpn', 'search_bot', 'ai_crawler'] as const;

/** A generator of plausible clicks: 1,000 links, 300 cities, 205 referers, 2,000,000 visitors. */
export function clickFactory(workspaceId: string, seed: number) {
  const rand = seeded(seed);
  const links = Array.from({ length: 1000 }, (_, i) => ({ id: `lnk_b${i}`, dest: i % 5 === 0 ? `https://shop.example/p/${i}?utm_source=news&utm_medium=email&utm_campaign=c${i % 7}` : `https://shop.example/p/${i}` }));
  return (ts: number): ClickRecord => {
    // A skewed link choice: the first links get most clicks.
    const link = links[Math.floor(links.length * rand() ** 3)]!;
    return {
      id: ids.issue(workspaceId),
      ts: new Date(ts).toISOString(),
      workspace_id: workspaceId,
      link_id: link.id,
      domain_id: 'dom_bench',
      domain: 'go.bench.example',
      slug: link.id.slice(5),
      outcome: 'redirect',
      destination: link.dest,
      decision: { step: 'url', ruleId: null, workspaceRule: false, targetingIndex: null, variantIndex: rand() < 0.1 ? Math.floor(rand() * 2) : null, destinationId: null, rotatorFallback: false },
      visitor: {
        ip: '203.0.113.0',
        device: pick(rand, ['desktop', 'mobile', 'mobile', 'tablet'] as const),
        os: pick(rand, ['ios', 'android', 'windows', 'macos', 'linux'] as const),
        browser: pick(rand, BROWSERS),
        language: pick(rand, ['en', 'en', 'de', 'fr', 'es', 'pt-br', 'ja']),
        country: pick(rand, COUNTRIES),
        region: null,
        city: pick(rand, CITIES),
        asn: 1000 + Math.floor(rand() * 200),
        visitor_type: pick(rand, TYPES),
        verified_bot: false,
        bot_name: null,
        proxy_type: null,
        quality: 90,
        referer: pick(rand, REFERERS),
        visit: 'first',
        visitor_id: `v${Math.floor(rand() * 2_000_000)}`,
      },
    };
  };
}

async function metricValue(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  // `name{labels} value` or `name value`
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** CPU seconds (user + system) a child process has used so far. */
function cpuOf(child: ChildProcess): number {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssOf(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024;
}

const mb = (bytes: number) => Math.round(bytes / 1_048_576);

/** Has the api (started with the gc-on-message preload) collect its garbage; answers its memory usage after. */
function forcedGc(child: ChildProcess): Promise<NodeJS.MemoryUsage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the api did not answer the gc request')), 10_000);
    const onMessage = (message: unknown) => {
      const usage = (message as { gcDone?: NodeJS.MemoryUsage } | null)?.gcDone;
      if (!usage) return;
      if (process.env.BENCH_HEAP_SPACES) {
        console.error('api heap spaces (MB):', JSON.stringify((message as { spaces: unknown }).spaces));
        // Resident memory per kind of mapping: malloc's heap, anonymous maps (V8's pages, large buffers), files.
        const rss: Record<string, number> = {};
        let name = '';
        for (const line of readFileSync(`/proc/${child.pid}/smaps`, 'utf8').split('\n')) {
          const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
          if (head) name = head[1]!.startsWith('/') ? 'file' : head[1] || 'anon';
          else if (line.startsWith('Rss:')) rss[name] = (rss[name] ?? 0) + Number(line.split(/\s+/)[1]) / 1024;
        }
        console.error('api rss by mapping (MB):', JSON.stringify(Object.fromEntries(Object.entries(rss).map(([k, v]) => [k, Math.round(v)]))));
      }
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(usage);
    };
    child.on('message', onMessage);
    child.send('gc');
  });
}

export async function analyticsBench(options: BenchOptions): Promise<Record<string, unknown>> {
  // BENCH_PROFILE=<dir>: devdb, the worker and the api write CPU profiles there when they stop.
  const dataDir = process.env.BENCH_ANALYTICS_DATA;
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const database = await benchDatabase(process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` } : {}, dataDir);
  const children: ChildProcess[] = [database.child];
  const baseEnv = { NODE_ENV: 'test', MONGODB_URI: database.uri, HOST: '127.0.0.1', NATS_URL, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn' };
  const result: Record<string, unknown> = {};
  const phases = new Set((process.env.BENCH_ANALYTICS_PHASES ?? 'ingest,queries,export').split(',').map((p) => p.trim()));
  try {
    // 1. Ingestion, rollups off then on (alternating rounds), each into a database of its own.
    const ingestClicks = Number(process.env.BENCH_ANALYTICS_INGEST ?? 100_000);
    const rates: Record<'off' | 'on', number[]> = { off: [], on: [] };
    const cpuPerClick: Record<'off' | 'on', Array<{ worker_us: number; database_us: number }>> = { off: [], on: [] };
    const rounds = phases.has('ingest') ? Math.max(1, Math.min(options.rounds, 3)) : 0;
    // BENCH_INGEST_MODES=on measures (or profiles) one mode alone.
    const modes = (process.env.BENCH_INGEST_MODES ?? 'off,on').split(',').filter((m): m is 'off' | 'on' => m === 'off' || m === 'on');
    for (let round = 0; round < rounds; round++) {
      for (const mode of modes) {
        const prefix = natsPrefix();
        const dbName = `bench_ingest_${mode}_${round}`;
        const nats = await connectNats({ url: NATS_URL, prefix, name: 'bench-analytics', logger: pino({ level: 'silent' }) });
        await provisionStreams(nats, 3_600_000);
        const make = clickFactory('ws_ingest', 1 + round);
        const now = Date.now();
        for (let i = 0; i < ingestClicks; i += 200) {
          const part = Array.from({ length: Math.min(200, ingestClicks - i) }, (_, k) => make(now - 3_600_000 + Math.floor(((i + k) / ingestClicks) * 3_600_000)));
          await nats.js.publish(nats.subjects.click('ws_ingest'), encodeClicks('ws_ingest', part));
        }
        await nats.drain();
        const port = await freePort();
        const started = performance.now();
        const dbCpuBefore = cpuOf(database.child);
        const profile: Record<string, string> = process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` } : {};
        const worker = await startChild('src/main/run.ts', ['worker'], { ...baseEnv, ...profile, MONGODB_DB: dbName, NATS_PREFIX: prefix, WORKER_PORT: String(port), ANALYTICS_ROLLUPS: String(mode === 'on') }, `http://127.0.0.1:${port}/readyz`);
        const metrics = `http://127.0.0.1:${port}/metrics`;
        // Timed from the first batch written to the last, so the worker's start (module loading, a second or two of
        // CPU that varies from run to run) weighs on neither mode.
        let first: { at: number; clicks: number; workerCpu: number; dbCpu: number } | null = null;
        // Done when every click is stored, and with rollups on, rolled up (the last step before a batch's ack).
        const done = mode === 'on' ? 'linkplane_clicks_rolled_up_total' : 'linkplane_clicks_ingested_total';
        for (;;) {
          const ingested = await metricValue(metrics, 'linkplane_clicks_ingested_total');
          if (ingested > 0 && !first) first = { at: performance.now(), clicks: ingested, workerCpu: cpuOf(worker), dbCpu: cpuOf(database.child) };
          if ((done === 'linkplane_clicks_ingested_total' ? ingested : await metricValue(metrics, done)) >= ingestClicks) break;
          // Each scrape costs the worker a little (the consumer's pending count is asked of NATS): not too often.
          await new Promise((r) => setTimeout(r, 200));
        }
        const ended = performance.now();
        const workerCpu = cpuOf(worker);
        // Stopping waits for the merges the last batches started: devdb's CPU is read after them.
        await stopChild(worker);
        const timed = ingestClicks - first!.clicks;
        const rate = Math.round(timed / ((ended - first!.at) / 1000));
        rates[mode].push(rate);
        const perClick = { worker: ((workerCpu - first!.workerCpu) / timed) * 1e6, db: ((cpuOf(database.child) - first!.dbCpu) / timed) * 1e6 };
        cpuPerClick[mode].push({ worker_us: Math.round(perClick.worker), database_us: Math.round(perClick.db) });
        console.error(
          `ingestion, rollups ${mode}: ${rate} clicks/s (${timed} clicks from the first batch written; ${Math.round(ingestClicks / ((ended - started) / 1000))}/s worker start included), CPU per click: worker ${Math.round(perClick.worker)} µs, devdb ${Math.round(perClick.db)} µs (devdb ${Math.round(((cpuOf(database.child) - dbCpuBefore) / ingestClicks) * 1e6)} µs start included); load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
        );
        // Dropped once measured: devdb holds every database in memory, and rounds run beside the ones before them got
        // slower round after round (devdb's CPU per click +30 % with the rollups off and +55 % on by the third round).
        await database.db.client.db(dbName).dropDatabase();
      }
    }
    const best = (list: number[]) => Math.max(...list);
    const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor((list.length - 1) / 2)]!;
    if (rounds > 0 && rates.off.length > 0 && rates.on.length > 0) result.ingestion = {
      clicks: ingestClicks,
      rollups_off_clicks_per_second: best(rates.off),
      rollups_on_clicks_per_second: best(rates.on),
      rollups_cost_share: Number((1 - best(rates.on) / best(rates.off)).toFixed(3)),
      // Rounds alternate the modes; on a machine shared with neighbours the best of each is the least disturbed.
      rollups_cost_share_of_medians: Number((1 - median(rates.on) / median(rates.off)).toFixed(3)),
      rounds: rates,
      cpu_per_click: cpuPerClick,
    };

    // 2. The big workspace: clicks over 90 days through the rollup code, raw documents not stored.
    const total = phases.has('queries') ? Number(process.env.BENCH_ANALYTICS_CLICKS ?? 10_000_000) : 0;
    const client = new MongoClient(database.uri);
    await client.connect();
    const db = client.db('linkplane_bench');
    const rollups = new RollupStore(db);
    await rollups.ensureIndexes();
    // A filled folder of a run before (BENCH_ANALYTICS_DATA): its workspace, key and fill figures.
    const kept = dataDir ? path.join(dataDir, 'bench-analytics.json') : null;
    const reused = kept && existsSync(kept) ? (JSON.parse(readFileSync(kept, 'utf8')) as { workspaceId: string; key: string; end: number; fill: Record<string, unknown> }) : null;
    if (reused && reused.fill.clicks !== total) throw new Error(`${dataDir} holds ${String(reused.fill.clicks)} clicks, not ${total}: use another folder`);
    const { id: workspaceId, key } = reused ? { id: reused.workspaceId, key: reused.key } : await database.aWorkspace('bench-analytics');
    const make = clickFactory(workspaceId, 42);
    const end = reused?.end ?? Date.now();
    const start = end - 90 * 86_400_000;
    if (reused) {
      result.fill = { ...reused.fill, reused_from: dataDir, database_rss_mb_after_replay: mb(rssOf(database.child)) };
      console.error(`${total} clicks reused from ${dataDir} (filled ${Math.round((Date.now() - end) / 60_000)} min ago)`);
    }
    const batch = Number(process.env.BENCH_ANALYTICS_BATCH ?? 5000);
    const fillStarted = performance.now();
    for (let i = 0; !reused && i < total; i += batch) {
      const clicks: ClickRecord[] = [];
      for (let k = 0; k < batch && i + k < total; k++) clicks.push(make(start + Math.floor(((i + k) / total) * (end - start))));
      await rollups.apply(clicks);
      if (i % 50_000 === 0) console.error(`  ${i} clicks rolled up (${Math.round(i / ((performance.now() - fillStarted) / 1000 || 1))}/s)`);
    }
    if (!reused) {
      const fillSeconds = (performance.now() - fillStarted) / 1000;
      // The bench's database holds this workspace's rollups alone: the collection's count is theirs (counting them by
      // workspace would have devdb read every one of them, gigabytes at 10 M clicks).
      const partsAfterFill = await rollups.parts.estimatedDocumentCount();
      // What the worker's settling job does as buckets end (settler.ts): every bucket over by now is merged into one part.
      const settleStarted = performance.now();
      const settled = await rollups.settle(new Date(Date.now() - SETTLE_AFTER_MS));
      const settleSeconds = (performance.now() - settleStarted) / 1000;
      const parts = await rollups.parts.estimatedDocumentCount();
      const databaseRss = mb(rssOf(database.child));
      console.error(
        `${total} clicks rolled up in ${Math.round(fillSeconds)} s (${Math.round(total / fillSeconds)}/s), ${partsAfterFill} rollup parts; ${settled} rollups settled in ${Math.round(settleSeconds)} s, ${parts} parts left; devdb RSS ${databaseRss} MB`,
      );
      result.fill = {
        clicks: total,
        seconds: Math.round(fillSeconds),
        clicks_per_second: Math.round(total / fillSeconds),
        rollup_parts_after_fill: partsAfterFill,
        rollups_settled: settled,
        settle_seconds: Math.round(settleSeconds),
        rollup_parts: parts,
        database_rss_mb: databaseRss,
        raw_documents_stored: false,
      };
      if (kept) writeFileSync(kept, JSON.stringify({ workspaceId, key, end, fill: result.fill }));
    }

    // The api collects garbage when the export phase asks (see forcedGc); BENCH_PROFILE=<dir> also has it write a CPU
    // profile there when it stops.
    // The api runs with the Node options the chart gives it (api.nodeOptions), unless BENCH_API_NODE_FLAGS says otherwise.
    const chartValues = load(readFileSync(new URL('../charts/linkplane/values.yaml', import.meta.url), 'utf8')) as { api: { nodeOptions: string } };
    const gcHook = `${process.env.BENCH_API_NODE_FLAGS ?? chartValues.api.nodeOptions} --expose-gc --import=${new URL('./servers/gc-on-message.ts', import.meta.url).pathname}`;
    const nodeOptions = process.env.BENCH_PROFILE ? `${gcHook} --cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` : gcHook;
    const startApi = async (env: Record<string, string> = {}, checkout?: string) => {
      const apiPort = await freePort();
      const api = await startChild(checkout ? path.join(checkout, 'src/main/run.ts') : 'src/main/run.ts', ['api'], { ...baseEnv, NODE_OPTIONS: nodeOptions, MONGODB_DB: 'linkplane_bench', NATS_PREFIX: natsPrefix(), API_PORT: String(apiPort), ...env }, `http://127.0.0.1:${apiPort}/healthz`);
      return { api, base: `http://127.0.0.1:${apiPort}/v1/analytics` };
    };
    if (phases.has('queries')) {
      // First an api that keeps no rollup parts between queries (every part through devdb and the driver, as a query
      // of a range nobody asked for lately), then one with its part cache (the default, as a dashboard asking again).
      // BENCH_ANALYTICS_QUERY_ROUNDS rounds of it (a fresh api each), and with BENCH_ANALYTICS_COMPARE=<checkout>
      // the same from that checkout's api, in turn: two versions of the read path on the same data.
      const rounds = Number(process.env.BENCH_ANALYTICS_QUERY_ROUNDS ?? 1);
      const compare = process.env.BENCH_ANALYTICS_COMPARE;
      const runs: Record<string, Array<Record<string, Record<string, number>>>> = { this: [], compare: [] };
      for (let round = 0; round < rounds; round++) {
        for (const [which, checkout] of compare ? ([['this', undefined], ['compare', compare]] as const) : ([['this', undefined]] as const)) {
          const uncached = await startApi({ ANALYTICS_PART_CACHE_MB: '0' }, checkout);
          try {
            const label = `without part cache${compare ? `, ${which === 'this' ? 'this checkout' : compare}` : ''}, round ${round + 1}`;
            runs[which]!.push((await queryLatencies(uncached.base, key, options.seconds, label, { api: uncached.api, database: database.child })) as Record<string, Record<string, number>>);
          } finally {
            await stopChild(uncached.api);
          }
        }
      }
      result.queries_without_part_cache = medianOfRounds(runs.this!);
      if (compare) result[`queries_without_part_cache_of_${compare}`] = medianOfRounds(runs.compare!);
    }
    const { api, base } = await startApi();
    children.push(api);
    if (phases.has('queries')) result.queries = await queryLatencies(base, key, options.seconds, 'with part cache', { api, database: database.child });

    // 3. CSV export of raw clicks.
    if (phases.has('export')) result.export = await exportPhase(database, db, api, base, end);
    await client.close();
    result.load_average = readFileSync('/proc/loadavg', 'utf8').trim();
    return result;
  } finally {
    await database.close();
    for (const child of children.reverse()) await stopChild(child);
  }
}

/** Each query's figures, the median of the rounds' (the rounds' own when there is one). */
function medianOfRounds(rounds: Array<Record<string, Record<string, number>>>): Record<string, Record<string, number>> {
  if (rounds.length === 1) return rounds[0]!;
  const mid = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const m = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
  };
  const out: Record<string, Record<string, number>> = {};
  for (const name of Object.keys(rounds[0]!)) {
    const figures: Record<string, number> = Object.fromEntries(Object.keys(rounds[0]![name]!).map((figure) => [figure, mid(rounds.map((r) => r[name]![figure]!))]));
    figures.rounds = rounds.length;
    out[name] = figures;
  }
  return out;
}

/**
 * p50 and p99 of each query, one connection, for `seconds` each; `first_ms` is the first request's time. On a machine
 * shared with other work the latencies move with the neighbours; the CPU the api and devdb spent per request
 * (`api_cpu_ms`, `database_cpu_ms`) moves much less.
 */
async function queryLatencies(base: string, key: string, seconds: number, label: string, servers: { api: ChildProcess; database: ChildProcess }): Promise<Record<string, unknown>> {
  const queries: Record<string, string> = {
    summary_90d_utc: `${base}/summary?interval=90d`,
    timeseries_90d_daily_utc: `${base}/timeseries?interval=90d&granularity=day`,
    timeseries_90d_daily_new_york: `${base}/timeseries?interval=90d&granularity=day&timezone=America/New_York`,
    breakdown_country_90d_utc: `${base}/breakdown?interval=90d&dimension=country`,
    breakdown_country_90d_kolkata: `${base}/breakdown?interval=90d&dimension=country&timezone=Asia/Kolkata`,
  };
  const latencies: Record<string, unknown> = {};
  for (const [name, url] of Object.entries(queries)) {
    const firstStarted = performance.now();
    const check = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
    if (check.status !== 200) throw new Error(`${name}: ${check.status} ${await check.text()}`);
    await check.arrayBuffer();
    const first = Math.round(performance.now() - firstStarted);
    const cpuBefore = { api: cpuOf(servers.api), db: cpuOf(servers.database) };
    const run = await autocannon({ url, connections: 1, duration: seconds, headers: { Authorization: `Bearer ${key}` } });
    const perRequest = (cpu: number) => Math.round((cpu * 1000 * 10) / Math.max(1, run.requests.total)) / 10;
    const cpu = { api: perRequest(cpuOf(servers.api) - cpuBefore.api), db: perRequest(cpuOf(servers.database) - cpuBefore.db) };
    latencies[name] = { p50_ms: run.latency.p50, p99_ms: run.latency.p99, first_ms: first, requests: run.requests.total, non2xx: run.non2xx, api_cpu_ms: cpu.api, database_cpu_ms: cpu.db };
    console.error(
      `${name} (${label}): p50 ${run.latency.p50} ms, p99 ${run.latency.p99} ms, max ${run.latency.max} ms, first ${first} ms (${run.requests.total} requests), CPU per request api ${cpu.api} ms, devdb ${cpu.db} ms`,
    );
  }
  return latencies;
}

/** Phase 3: BENCH_EXPORT_ROWS raw clicks stored in the day before `end`, then exported once as CSV. */
async function exportPhase(database: Awaited<ReturnType<typeof benchDatabase>>, db: Db, api: ChildProcess, base: string, end: number): Promise<Record<string, unknown>> {
  const rows = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
  const exporter = await database.aWorkspace('bench-export');
  const makeRaw = clickFactory(exporter.id, 7);
  const rawStart = end - 86_400_000;
  for (let i = 0; i < rows; i += 10_000) {
    const docs = Array.from({ length: Math.min(10_000, rows - i) }, (_, k) => toClickDoc(makeRaw(rawStart + Math.floor(((i + k) / rows) * 86_400_000))));
    await db.collection('clicks').insertMany(docs as never[], { ordered: false });
  }
  const memoryBefore = await forcedGc(api);
  const rssBefore = rssOf(api);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(api))), 100);
  const cpuBefore = { api: cpuOf(api), db: cpuOf(database.child) };
  const exportStarted = performance.now();
  const res = await fetch(`${base}/export.csv?interval=7d&bots=include`, { headers: { Authorization: `Bearer ${exporter.key}` } });
  if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
  // Line ends counted in the bytes (no cell of these clicks holds one): decoding them would load this process, which
  // shares the machine with the api.
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  const exportSeconds = (performance.now() - exportStarted) / 1000;
  clearInterval(sampler);
  const cpu = { api: cpuOf(api) - cpuBefore.api, db: cpuOf(database.child) - cpuBefore.db };
  // Peak RSS is what the machine had to have; RSS after a full collection is what the export kept (a leak shows there).
  const memoryAfter = await forcedGc(api);
  const rssAfterGc = rssOf(api);
  const usPerRow = (seconds: number) => Number(((seconds * 1e6) / (lines - 1)).toFixed(1));
  console.error(
    `export: ${lines - 1} rows in ${exportSeconds.toFixed(1)} s (${Math.round((lines - 1) / exportSeconds)}/s), api RSS +${mb(rssPeak - rssBefore)} MB peak, ` +
      `+${mb(rssAfterGc - rssBefore)} MB after GC, CPU api ${cpu.api.toFixed(1)} s (${usPerRow(cpu.api)} µs/row), database ${cpu.db.toFixed(1)} s (${usPerRow(cpu.db)} µs/row)`,
  );
  return {
    rows: lines - 1,
    seconds: Number(exportSeconds.toFixed(1)),
    rows_per_second: Math.round((lines - 1) / exportSeconds),
    // On a shared machine the wall clock depends on the neighbours; the CPU each process spent does much less.
    api_cpu_seconds: Number(cpu.api.toFixed(2)),
    database_cpu_seconds: Number(cpu.db.toFixed(2)),
    rows_per_api_cpu_second: Math.round((lines - 1) / cpu.api),
    api_cpu_us_per_row: usPerRow(cpu.api),
    database_cpu_us_per_row: usPerRow(cpu.db),
    api_rss_before_mb: mb(rssBefore),
    api_rss_peak_mb: mb(rssPeak),
    api_rss_growth_mb: mb(rssPeak - rssBefore),
    api_rss_after_gc_growth_mb: mb(rssAfterGc - rssBefore),
    // Where the memory kept after the collection is: the V8 heap, or buffers outside it.
    api_heap_used_mb: { before: mb(memoryBefore.heapUsed), after_gc: mb(memoryAfter.heapUsed) },
    api_heap_total_mb: { before: mb(memoryBefore.heapTotal), after_gc: mb(memoryAfter.heapTotal) },
    api_external_mb: { before: mb(memoryBefore.external), after_gc: mb(memoryAfter.external) },
  };
}
