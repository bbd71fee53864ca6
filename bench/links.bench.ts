// Links API benchmark: GET /v1/links?limit=50 and POST /v1/links against the api process on devdb, beside node:http
// and Koa answering the same page (the floor), and the cost of validating one link body with every optional block
// filled (in this process, no I/O). The write path: links/s through POST /v1/links/bulk (calls of 100, a few at a
// time) beside 20 concurrent single POST /v1/links in the same rounds, the seeding of the workspace (BENCH_LINKS,
// 100,000 links by bulk calls) timed as an import by hand, with the peak RSS of the api and devdb; and last, an import
// job of as many links (BENCH_IMPORT_LINKS) run by a worker process from one of our CSV exports, timed from its
// creation to its end, with the peak RSS of the worker, the api and devdb over the job.
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { MongoClient, type Document, type IndexSpecification } from 'mongodb';
import { bodyValidator } from '../src/http/validation.ts';
import { LinkCreateSchema } from '../src/links/link.schemas.ts';
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { benchDatabase, cpuSecondsOf, freePort, median, startChild, stopChild } from './harness.ts';

/** Links per bulk call, and calls in flight at once, in the bulk rows. */
const BULK_SIZE = 100;
const BULK_CONCURRENCY = 4;
/** Concurrent single creates beside them. */
const SINGLE_CONNECTIONS = 20;

/** The api seals an import job's file, the worker opens it: one key for both. */
const BENCH_SECRET = 'links-bench-secret-key-0123456789abcdef';

/** Starts a new peak for `peakRssMb` (Linux: writing 5 to clear_refs resets VmHWM to the current RSS). */
function resetPeakRss(child: ChildProcess): void {
  writeFileSync(`/proc/${child.pid}/clear_refs`, '5');
}

/**
 * Our CSV export of `count` links on the exporting instance's default domain, as the `csv` import source reads it:
 * the columns an import needs only, so that 100,000 rows (about 7 MB) stay, sealed in the job, under a document's
 * 16 MB (a 12 MB file with titles and dates did not).
 */
function exportFile(count: number): string {
  let text = 'id,domain_id,domain,slug,url\r\n';
  for (let i = 0; i < count; i++) text += `lnk_i${i},dom_default,old.example,imp-${i},https://example.com/i/${i}\r\n`;
  return text;
}

/** Peak resident memory of a child so far (VmHWM), in MB. */
function peakRssMb(child: ChildProcess): number {
  const line = readFileSync(`/proc/${child.pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmHWM:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}
import type { BenchOptions } from './foundation.bench.ts';

/** A link using every optional block, near its bounds where that costs the validator most. */
export function fullLink(): Record<string, unknown> {
  const url = 'https://example.com/landing?x=1';
  return {
    url,
    slug: 'full-link',
    title: 'A link with everything',
    note: 'Benchmark body',
    tag_ids: ['tag_aaaaaaaaaaaaaaaaaaaa', 'tag_bbbbbbbbbbbbbbbbbbbb'],
    redirect_type: 307,
    expires_at: '2030-01-01T00:00:00Z',
    expired_url: `${url}&expired=1`,
    password: 'correct horse',
    targeting: Array.from({ length: 10 }, (_, i) => ({ match: { country: ['FR', 'DE'], device: ['mobile'], os: ['ios'], language: ['fr-FR'] }, url: `${url}&t=${i}` })),
    ab_test: {
      enabled: true,
      variants: [
        { url: `${url}&v=a`, weight: 50, label: 'A' },
        { url: `${url}&v=b`, weight: 50, label: 'B' },
      ],
      auto: { enabled: true, min_sample: 1000, weights: [50, 50], samples: { clicks: [10, 12], conversions: [1, 2] } },
    },
    rules: Array.from({ length: 20 }, (_, i) => ({
      id: `rule-${i}`,
      label: `rule ${i}`,
      match: { country: ['US', 'CA'], asn: [13335], ip: ['10.0.0.0/8'], user_agent: 'bot', has_utm: true, local_time: { from: 9, to: 17 }, weekday: [1, 2, 3], visit: 'first' },
      action: i % 2 ? { type: 'redirect', url: `${url}&r=${i}` } : { type: 'page', title: 'Hello', text: 'Welcome', button_label: 'Go', button_url: url },
    })),
    workspace_rules_off: false,
    mobile: { enabled: true, ios: { app_url: 'app://x', store_url: url, web_url: url }, android: { app_url: 'intent://x', store_url: url }, desktop_url: url, tablet: 'mobile', in_app: 'attempt', delay_ms: 1600, deferred: true },
    rotator: {
      enabled: true,
      mode: 'weighted',
      sticky_ttl_seconds: 3600,
      fallback_url: url,
      auto_disable_unhealthy: true,
      destinations: Array.from({ length: 10 }, (_, i) => ({ id: `dst-${i}`, url: `${url}&d=${i}`, weight: 10, active: true, limits: { max_total_clicks: 1000, max_daily_clicks: 100, starts_at: '2026-01-01T00:00:00Z' } })),
    },
    utm: { utm_source: 'bench', utm_medium: 'cpu', utm_campaign: 'links' },
  };
}

/** Copies every collection of `db`, its indexes first, from one server to another. */
async function copyDatabase(fromUri: string, toUri: string, db: string): Promise<void> {
  const [from, to] = [new MongoClient(fromUri), new MongoClient(toUri)];
  try {
    await Promise.all([from.connect(), to.connect()]);
    for (const { name } of await from.db(db).listCollections({}, { nameOnly: true }).toArray()) {
      const source = from.db(db).collection(name);
      const target = to.db(db).collection(name);
      const indexes = (await source.listIndexes().toArray()).filter((i) => i.name !== '_id_');
      for (const { v: _v, key, ...options } of indexes) await target.createIndex(key as IndexSpecification, options);
      // Values as stored (Int32, Long, Double kept apart), so that the copy holds the same bytes.
      const cursor = source.find({}, { promoteValues: false, promoteLongs: false, batchSize: 5000 });
      let batch: Document[] = [];
      for await (const doc of cursor) {
        batch.push(doc);
        if (batch.length === 5000) {
          await target.insertMany(batch);
          batch = [];
        }
      }
      if (batch.length > 0) await target.insertMany(batch);
    }
  } finally {
    await Promise.all([from.close(), to.close()]);
  }
}

function validationCost(): { iterations: number; microseconds_per_link: number } {
  const validate = bodyValidator(LinkCreateSchema);
  const body = fullLink();
  for (let i = 0; i < 2000; i++) validate(structuredClone(body)); // warm-up: JIT
  const iterations = 20_000;
  const copies = Array.from({ length: iterations }, () => structuredClone(body));
  const start = process.hrtime.bigint();
  for (const copy of copies) validate(copy);
  const ns = Number(process.hrtime.bigint() - start);
  return { iterations, microseconds_per_link: Math.round(ns / iterations / 10) / 100 };
}

/** Deep pages read in turn: 12,500 links, more than the api keeps renderings of (src/links/link.render.ts). */
const DEEP_PAGES = 250;

export async function linksBench(options: BenchOptions): Promise<Record<string, unknown>> {
  const apiPort = await freePort();
  // BENCH_PROFILE=<dir>: the api and devdb write a CPU profile there when they stop.
  const profile: Record<string, string> = process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE} --cpu-prof-interval=${process.env.BENCH_PROFILE_INTERVAL_US ?? 1000}` } : {};
  const database = await benchDatabase(profile);
  const mongoUri = database.uri;
  const children = [database.child];
  try {
    const { key } = await database.aWorkspace('bench');
    const { key: taggedKey } = await database.aWorkspace('bench-tagged');
    const { key: importKey } = await database.aWorkspace('bench-import');
    await database.close();
    const prefix = natsPrefix();
    // The import job's file travels in its JSON body: room for it (about 9 MB for 100,000 links).
    const api = await startChild('src/main/run.ts', ['api'], { NODE_ENV: 'test', MONGODB_URI: mongoUri, MONGODB_DB: 'linkplane_bench', API_PORT: String(apiPort), HOST: '127.0.0.1', NATS_URL, NATS_PREFIX: prefix, LOG_LEVEL: 'info', SECRET_KEY: BENCH_SECRET, BODY_LIMIT_BYTES: String(32 * 1_048_576), ...profile }, `http://127.0.0.1:${apiPort}/readyz`, 120_000);
    children.push(api);
    const base = `http://127.0.0.1:${apiPort}/v1`;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    // The list is read from a workspace of BENCH_LINKS (100,000) links, created through the API in bulk.
    const total = Number(process.env.BENCH_LINKS ?? 100_000);
    const seedStart = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: BULK_CONCURRENCY }, async () => {
        for (let i = next++; i * BULK_SIZE < total; i = next++) {
          const res = await fetch(`${base}/links/bulk`, { method: 'POST', headers, body: JSON.stringify(Array.from({ length: Math.min(BULK_SIZE, total - i * BULK_SIZE) }, (_, j) => ({ url: `https://example.com/${i}/${j}`, title: `seed ${i}-${j}` }))) });
          if (res.status >= 300) throw new Error(`seeding links: ${res.status} ${await res.text()}`);
          const { failed } = (await res.json()) as { failed: number };
          if (failed > 0) throw new Error(`seeding links: ${failed} failed`);
        }
      }),
    );
    const seedSeconds = (Date.now() - seedStart) / 1000;
    // The seeding is an import by bulk calls: its time, and the memory it took on either side.
    const importSimulation = { links: total, calls_of: BULK_SIZE, concurrent_calls: BULK_CONCURRENCY, seconds: Math.round(seedSeconds * 10) / 10, links_per_second: Math.round(total / seedSeconds), api_peak_rss_mb: peakRssMb(api), devdb_peak_rss_mb: peakRssMb(database.child) };
    console.error(`seeded ${total} links in ${importSimulation.seconds} s (${importSimulation.links_per_second} links/s), peak RSS api ${importSimulation.api_peak_rss_mb} MB devdb ${importSimulation.devdb_peak_rss_mb} MB`);
    // Another workspace whose first page shows tags: every link with two of three, so each page also reads its tags.
    const tagged = { Authorization: `Bearer ${taggedKey}`, 'Content-Type': 'application/json' };
    const tagIds: string[] = [];
    for (const name of ['spring', 'summer', 'autumn']) {
      const res = await fetch(`${base}/tags`, { method: 'POST', headers: tagged, body: JSON.stringify({ name }) });
      if (res.status >= 300) throw new Error(`creating a tag: ${res.status} ${await res.text()}`);
      tagIds.push(((await res.json()) as { id: string }).id);
    }
    const taggedLinks = Array.from({ length: 100 }, (_, i) => ({ url: `https://example.com/tagged/${i}`, title: `tagged ${i}`, tag_ids: [tagIds[i % 3]!, tagIds[(i + 1) % 3]!] }));
    const bulk = await fetch(`${base}/links/bulk`, { method: 'POST', headers: tagged, body: JSON.stringify(taggedLinks) });
    const seeded = bulk.status < 300 ? ((await bulk.json()) as { created: number }).created : 0;
    if (seeded !== taggedLinks.length) throw new Error(`seeding tagged links: ${bulk.status}, ${seeded} created`);
    // BENCH_BASELINE_ROOT: another checkout (say, the commit before a change): its api on its own devdb, both from
    // that checkout, holding a copy of what was seeded here, so that a change to either process is measured.
    const baselineRoot = process.env.BENCH_BASELINE_ROOT;
    const baselinePort = baselineRoot ? await freePort() : 0;
    let baselineApi: ChildProcess | undefined;
    let baselineDevdb: ChildProcess | undefined;
    if (baselineRoot) {
      const devdbPort = await freePort();
      baselineDevdb = await startChild(join(baselineRoot, 'src/devdb/main.ts'), ['--port', String(devdbPort)], {}, devdbPort);
      children.push(baselineDevdb);
      const baselineUri = `mongodb://127.0.0.1:${devdbPort}/?directConnection=true`;
      const copyStart = Date.now();
      await copyDatabase(mongoUri, baselineUri, 'linkplane_bench');
      console.error(`copied the database to the baseline's devdb in ${Math.round((Date.now() - copyStart) / 1000)} s`);
      baselineApi = await startChild(join(baselineRoot, 'src/main/run.ts'), ['api'], { NODE_ENV: 'test', MONGODB_URI: baselineUri, MONGODB_DB: 'linkplane_bench', API_PORT: String(baselinePort), HOST: '127.0.0.1', NATS_URL, NATS_PREFIX: prefix, LOG_LEVEL: 'info' }, `http://127.0.0.1:${baselinePort}/readyz`, 120_000);
      children.push(baselineApi);
    }
    // The floor under the list: node:http answering the first page's bytes, and Koa serialising the same document.
    const page = await (await fetch(`${base}/links?limit=50`, { headers })).text();
    const [httpPort, koaPort] = await Promise.all([freePort(), freePort()]);
    children.push(await startChild('bench/servers/bare-http.ts', [], { PORT: String(httpPort), BODY: page, ROUTE: '/v1/links' }, `http://127.0.0.1:${httpPort}/v1/links`));
    children.push(await startChild('bench/servers/bare-koa.ts', [], { PORT: String(koaPort), BODY: page, ROUTE: '/v1/links' }, `http://127.0.0.1:${koaPort}/v1/links`));
    // Pages deep into the workspace, each another 50 links: more links than the api keeps renderings of, read in
    // turn, so every link of every page is decoded and rendered afresh (the list's cost for links not read before).
    const deep: string[] = [];
    for (let cursor: string | null = null; deep.length < DEEP_PAGES; ) {
      const res = await fetch(`${base}/links?limit=50${cursor ? `&cursor=${cursor}` : ''}`, { headers });
      cursor = ((await res.json()) as { pagination: { next_cursor: string | null } }).pagination.next_cursor;
      if (!cursor) break;
      deep.push(`/v1/links?limit=50&cursor=${cursor}`);
    }
    let turn = 0;
    const nextDeep = (req: autocannon.Request) => ({ ...req, path: deep[turn++ % deep.length]! });

    // CPU per request of the process answering (api or baseline) and of devdb, from /proc between the run's ends:
    // on a shared machine throughput moves with the neighbours' load, CPU per request much less.
    const run = async (name: string, opts: autocannon.Options, server?: ChildProcess) => {
      const devdb = server === baselineApi ? baselineDevdb! : database.child;
      const before = server ? [cpuSecondsOf(server), cpuSecondsOf(devdb)] : [0, 0];
      const r = await autocannon({ connections: 10, duration: options.seconds, ...opts });
      const perRequest = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, r.requests.total));
      const cpu = server ? { api_cpu_us: perRequest(cpuSecondsOf(server) - before[0]!), devdb_cpu_us: perRequest(cpuSecondsOf(devdb) - before[1]!) } : {};
      const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      console.error(`${name}: ${Math.round(r.requests.average)} req/s p99 ${r.latency.p99} ms non-2xx ${r.non2xx}${server ? ` cpu/request api ${cpu.api_cpu_us} µs devdb ${cpu.devdb_cpu_us} µs` : ''} load ${loadAverage}`);
      return { target: name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors, ...cpu, load_average: loadAverage };
    };
    // Bulk calls of BULK_SIZE, BULK_CONCURRENCY in flight, for the run's seconds: links created per second (every call
    // must create all of its links), with the CPU per link of the api and devdb.
    let bulkCall = 0;
    const bulkRun = async (name: string) => {
      const before = [cpuSecondsOf(api), cpuSecondsOf(database.child)];
      const start = Date.now();
      const end = start + options.seconds * 1000;
      let created = 0;
      let calls = 0;
      const latencies: number[] = [];
      await Promise.all(
        Array.from({ length: BULK_CONCURRENCY }, async () => {
          while (Date.now() < end) {
            const n = bulkCall++;
            const body = JSON.stringify(Array.from({ length: BULK_SIZE }, (_, j) => ({ url: `https://example.com/bulk/${n}/${j}`, title: `bulk ${n}-${j}` })));
            const sent = Date.now();
            const res = await fetch(`${base}/links/bulk`, { method: 'POST', headers, body });
            if (res.status >= 300) throw new Error(`bulk create: ${res.status} ${await res.text()}`);
            const result = (await res.json()) as { created: number; failed: number };
            if (result.failed > 0) throw new Error(`bulk create: ${result.failed} failed`);
            latencies.push(Date.now() - sent);
            created += result.created;
            calls++;
          }
        }),
      );
      const seconds = (Date.now() - start) / 1000;
      const perLink = (s: number) => Math.round((s * 1e6) / Math.max(1, created));
      const cpu = { api_cpu_us: perLink(cpuSecondsOf(api) - before[0]!), devdb_cpu_us: perLink(cpuSecondsOf(database.child) - before[1]!) };
      const sorted = latencies.sort((a, b) => a - b);
      const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      const linksPerSecond = Math.round(created / seconds);
      console.error(`${name}: ${linksPerSecond} links/s (${calls} calls) p50 ${median(sorted)} ms p99 ${sorted[Math.floor(sorted.length * 0.99)] ?? 0} ms cpu/link api ${cpu.api_cpu_us} µs devdb ${cpu.devdb_cpu_us} µs load ${loadAverage}`);
      return { target: name, rps: linksPerSecond, links_per_second: linksPerSecond, calls, p50: median(sorted), p99: sorted[Math.floor(sorted.length * 0.99)] ?? 0, non2xx: 0, errors: 0, ...cpu, load_average: loadAverage };
    };
    const bulkName = `POST /v1/links/bulk (${BULK_SIZE} per call, ${BULK_CONCURRENCY} concurrent): links/s`;
    const singleName = `POST /v1/links (${SINGLE_CONNECTIONS} concurrent): links/s`;
    const rows = [];
    for (let round = 0; round < options.rounds; round++) {
      rows.push(await run('node:http (same bytes)', { url: `http://127.0.0.1:${httpPort}/v1/links` }));
      rows.push(await run('koa (same document)', { url: `http://127.0.0.1:${koaPort}/v1/links` }));
      rows.push(await run('GET /v1/links?limit=50', { url: `${base}/links?limit=50`, headers }, api));
      rows.push(await run(`GET /v1/links?limit=50 (${deep.length} pages in turn)`, { url: base, headers, requests: [{ setupRequest: nextDeep }] }, api));
      rows.push(await run('GET /v1/links?limit=50 (every link tagged)', { url: `${base}/links?limit=50`, headers: tagged }, api));
      if (baselineRoot) {
        rows.push(await run('baseline GET /v1/links?limit=50', { url: `http://127.0.0.1:${baselinePort}/v1/links?limit=50`, headers }, baselineApi));
        rows.push(await run(`baseline GET /v1/links?limit=50 (${deep.length} pages in turn)`, { url: `http://127.0.0.1:${baselinePort}/v1`, headers, requests: [{ setupRequest: nextDeep }] }, baselineApi));
        rows.push(await run('baseline GET /v1/links?limit=50 (every link tagged)', { url: `http://127.0.0.1:${baselinePort}/v1/links?limit=50`, headers: tagged }, baselineApi));
      }
      rows.push(await run('POST /v1/links', { url: `${base}/links`, method: 'POST', headers, body: JSON.stringify({ url: 'https://example.com/new' }) }, api));
      if (baselineRoot) rows.push(await run('baseline POST /v1/links', { url: `http://127.0.0.1:${baselinePort}/v1/links`, method: 'POST', headers, body: JSON.stringify({ url: 'https://example.com/new' }) }, baselineApi));
      rows.push(await bulkRun(bulkName));
      rows.push(await run(singleName, { url: `${base}/links`, method: 'POST', headers, body: JSON.stringify({ url: 'https://example.com/new' }), connections: SINGLE_CONNECTIONS }, api));
    }
    const medians = new Map<string, number>();
    for (const name of new Set(rows.map((r) => r.target))) medians.set(name, median(rows.filter((r) => r.target === name).map((r) => r.rps)));
    const cpu: Record<string, { api_us: number; devdb_us: number }> = {};
    for (const name of medians.keys()) {
      const measured = rows.filter((r) => r.target === name && 'api_cpu_us' in r) as Array<{ api_cpu_us: number; devdb_cpu_us: number }>;
      if (measured.length) cpu[name] = { api_us: median(measured.map((r) => r.api_cpu_us)), devdb_us: median(measured.map((r) => r.devdb_cpu_us)) };
    }
    // Per link: a single create is one link per request; the ratio is taken round by round (same machine load).
    const bulkRows = rows.filter((r) => r.target === bulkName);
    const singleRows = rows.filter((r) => r.target === singleName);
    const writePath = {
      bulk_links_per_second: medians.get(bulkName),
      single_links_per_second: medians.get(singleName),
      bulk_over_single_per_link: Math.round(median(bulkRows.map((r, i) => r.rps / Math.max(1, singleRows[i]!.rps))) * 10) / 10,
    };
    console.error(`write path: bulk ${writePath.bulk_links_per_second} links/s, single ${writePath.single_links_per_second} links/s, ratio ${writePath.bulk_over_single_per_link}`);

    // An import job of BENCH_IMPORT_LINKS links run by a worker process, from our own CSV export (2,000 rows a batch):
    // from POST /v1/imports to the job's end, polled every 250 ms; peak RSS of the three processes over the job.
    const importLinks = Number(process.env.BENCH_IMPORT_LINKS ?? 100_000);
    const workerPort = await freePort();
    const worker = await startChild('src/main/run.ts', ['worker'], { NODE_ENV: 'test', MONGODB_URI: mongoUri, MONGODB_DB: 'linkplane_bench', WORKER_PORT: String(workerPort), HOST: '127.0.0.1', NATS_URL, NATS_PREFIX: prefix, LOG_LEVEL: 'info', SECRET_KEY: BENCH_SECRET, IMPORT_POLL_MS: '100', ...profile }, `http://127.0.0.1:${workerPort}/readyz`, 120_000);
    children.push(worker);
    for (const child of [api, database.child, worker]) resetPeakRss(child);
    const importHeaders = { Authorization: `Bearer ${importKey}`, 'Content-Type': 'application/json' };
    const importStart = Date.now();
    const created = await fetch(`${base}/imports`, { method: 'POST', headers: importHeaders, body: JSON.stringify({ source: 'csv', file: exportFile(importLinks) }) }).catch((error: unknown) => {
      throw new Error(`starting the import: the api closed the connection (a body over BODY_LIMIT_BYTES?): ${String(error)}`);
    });
    if (created.status !== 202) throw new Error(`starting the import: ${created.status} ${await created.text()}`);
    const jobId = ((await created.json()) as { id: string }).id;
    type Job = { status: string; done: number; created: number; failed: number; skipped: number; error: unknown };
    let job: Job;
    for (;;) {
      job = (await (await fetch(`${base}/imports/${jobId}`, { headers: importHeaders })).json()) as Job;
      if (!['queued', 'running'].includes(job.status)) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const importSeconds = (Date.now() - importStart) / 1000;
    if (job.status !== 'succeeded' || job.created !== importLinks) throw new Error(`the import job ended ${JSON.stringify(job)}`);
    const importJob = {
      links: importLinks,
      source: 'csv (2,000 rows a batch, written in 4 chunks of 500 side by side)',
      seconds: Math.round(importSeconds * 10) / 10,
      links_per_second: Math.round(importLinks / importSeconds),
      worker_peak_rss_mb: peakRssMb(worker),
      api_peak_rss_mb: peakRssMb(api),
      devdb_peak_rss_mb: peakRssMb(database.child),
      load_average: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    };
    console.error(`import job: ${importLinks} links in ${importJob.seconds} s (${importJob.links_per_second} links/s), peak RSS worker ${importJob.worker_peak_rss_mb} MB api ${importJob.api_peak_rss_mb} MB devdb ${importJob.devdb_peak_rss_mb} MB load ${importJob.load_average}`);
    return { database: 'devdb (src/devdb, separate process)', links_in_workspace: total, write_path: writePath, import_simulation: importSimulation, import_job: importJob, response_bytes: Buffer.byteLength(page), median_rps: Object.fromEntries(medians), median_cpu_per_request: cpu, rows, validation: validationCost() };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
  }
}
