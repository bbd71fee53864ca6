// Redirect benchmark (issue: "the fastest hot path"): a bare node:http server answering 302 from a Map (the
// physical baseline), a bare Koa app doing the same (the framework floor), and our redirect process serving a
// plain cached link and a link with 20 rules that all have to be evaluated, with click capture on (every redirect
// is published to the CLICKS stream).
import { join } from 'node:path';
import autocannon from 'autocannon';
import { natsPrefix, NATS_URL } from '../test/helpers/env.ts';
import type { ChildProcess } from 'node:child_process';
import { benchDatabase, cpuSecondsOf, freePort, median, pairedMedian, startChild, stopChild, type Sample } from './harness.ts';
import type { BenchOptions } from './foundation.bench.ts';

interface RedirectTarget {
  name: string;
  url: string;
  host?: string;
  /** The process serving it: its CPU time per request is measured too (a figure the machine's other load moves less). */
  child?: ChildProcess;
}

interface RedirectSample extends Sample {
  /** CPU microseconds (user + system, all threads) the serving process spent per request answered. */
  cpuUs: number;
}

/** 20 rules of several match fields each, none of which holds for the benchmark's visitor: all 20 are evaluated. */
export function twentyRules(): Record<string, unknown>[] {
  return Array.from({ length: 20 }, (_, i) => ({
    label: `rule ${i}`,
    match:
      i % 4 === 0
        ? { country: ['US', 'CA', 'GB', 'DE', 'FR'], device: ['mobile'], has_utm: true }
        : i % 4 === 1
          ? { ip: ['10.0.0.0/8', '192.168.0.0/16', '2001:db8::/32'], visitor_type: ['ai_crawler', 'search_bot'] }
          : i % 4 === 2
            ? { user_agent: 'Googlebot', referer: 'facebook.com', language: ['fr', 'de-CH'] }
            : { asn: [13335, 15169], weekday: [1, 2, 3, 4, 5, 6, 7], local_time: { from: 0, to: 23 }, visit: 'repeat' },
    action: i % 2 ? { type: 'redirect', url: `https://example.com/rule/${i}` } : { type: 'block', status: 410 },
  }));
}

async function loadRedirect(target: RedirectTarget, seconds: number, connections: number): Promise<RedirectSample> {
  const cpuBefore = target.child ? cpuSecondsOf(target.child) : 0;
  const result = await autocannon({ url: target.url, connections, duration: seconds, headers: target.host ? { Host: target.host } : {} });
  const redirects = (result as unknown as { '3xx': number })['3xx'];
  return {
    target: target.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    // Everything that is not the 302 expected.
    non2xx: result.requests.total - redirects,
    cpuUs: target.child ? Math.round(((cpuSecondsOf(target.child) - cpuBefore) * 1e6) / Math.max(1, result.requests.total)) : 0,
  };
}

export async function redirectBench(options: BenchOptions): Promise<Record<string, unknown>> {
  const [httpPort, koaPort, apiPort, redirectPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const database = await benchDatabase();
  const children = [database.child];
  const prefix = natsPrefix();
  const shortHost = `127.0.0.1:${redirectPort}`;
  const env = {
    NODE_ENV: 'test',
    MONGODB_URI: database.uri,
    MONGODB_DB: 'linkplane_bench',
    HOST: '127.0.0.1',
    NATS_URL,
    NATS_PREFIX: prefix,
    SHORT_LINK_BASE_URL: `http://${shortHost}`,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  };
  try {
    const { key } = await database.aWorkspace('bench-redirect');
    await database.close();
    children.push(await startChild('src/main/run.ts', ['api'], { ...env, API_PORT: String(apiPort) }, `http://127.0.0.1:${apiPort}/readyz`));
    const create = async (body: Record<string, unknown>): Promise<void> => {
      const response = await fetch(`http://127.0.0.1:${apiPort}/v1/links`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (response.status !== 201) throw new Error(`creating a bench link: ${response.status} ${await response.text()}`);
    };
    await create({ url: 'https://example.com/landing', slug: 'plain' });
    await create({ url: 'https://example.com/landing', slug: 'rules20', rules: twentyRules() });
    // BENCH_PROFILE=<dir>: the redirect process writes a CPU profile there when it stops.
    // BENCH_REDIRECT_NODE_OPTIONS: Node.js flags for this checkout's redirect process only (say, V8's heap sizes).
    const nodeOptions = [process.env.BENCH_PROFILE ? `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` : '', process.env.BENCH_REDIRECT_NODE_OPTIONS ?? '']
      .filter(Boolean)
      .join(' ');
    const profile: Record<string, string> = nodeOptions ? { NODE_OPTIONS: nodeOptions } : {};
    const redirect = await startChild('src/main/run.ts', ['redirect'], { ...env, ...profile, REDIRECT_PORT: String(redirectPort) }, `http://127.0.0.1:${redirectPort}/readyz`);
    children.push(redirect);
    // BENCH_BASELINE_ROOT: another checkout (say, the commit before a change) whose redirect process serves the same
    // links from the same store, in the same rounds.
    const baselineRoot = process.env.BENCH_BASELINE_ROOT;
    const baselinePort = baselineRoot ? await freePort() : 0;
    const baseline = baselineRoot
      ? await startChild(join(baselineRoot, 'src/main/run.ts'), ['redirect'], { ...env, REDIRECT_PORT: String(baselinePort) }, `http://127.0.0.1:${baselinePort}/readyz`)
      : undefined;
    if (baseline) children.push(baseline);
    const http = await startChild('bench/servers/bare-redirect-http.ts', [], { PORT: String(httpPort) }, `http://127.0.0.1:${httpPort}/ready`);
    children.push(http);
    const koa = await startChild('bench/servers/bare-redirect-koa.ts', [], { PORT: String(koaPort) }, `http://127.0.0.1:${koaPort}/ready`);
    children.push(koa);

    const targets: RedirectTarget[] = [
      { name: 'node:http 302', url: `http://127.0.0.1:${httpPort}/plain`, child: http },
      { name: 'koa 302', url: `http://127.0.0.1:${koaPort}/plain`, child: koa },
      { name: 'redirect plain', url: `http://${shortHost}/plain`, child: redirect },
      { name: 'redirect 20 rules', url: `http://${shortHost}/rules20`, child: redirect },
    ];
    if (baseline) {
      // The link's host is the configured short domain: the baseline is asked for it by name, on its own port.
      targets.push({ name: 'baseline redirect plain', url: `http://127.0.0.1:${baselinePort}/plain`, host: shortHost, child: baseline });
      targets.push({ name: 'baseline redirect 20 rules', url: `http://127.0.0.1:${baselinePort}/rules20`, host: shortHost, child: baseline });
    }
    const samples = new Map<string, RedirectSample[]>(targets.map((t) => [t.name, []]));
    for (const t of targets) await loadRedirect(t, 1, options.connections); // warm-up: JIT, caches
    for (let round = 1; round <= options.rounds; round++) {
      for (const t of targets) {
        const s = await loadRedirect(t, options.seconds, options.connections);
        samples.get(t.name)!.push(s);
        console.error(`round ${round} ${t.name}: ${Math.round(s.rps)} req/s p50 ${s.p50} ms p99 ${s.p99} ms, ${s.cpuUs} µs CPU/req${s.non2xx || s.errors ? ` (not 302: ${s.non2xx}, errors ${s.errors})` : ''}`);
      }
    }
    const rows = [...samples].map(([target, s]) => ({
      target,
      rps: Math.round(median(s.map((x) => x.rps))),
      p50: median(s.map((x) => x.p50)),
      p99: median(s.map((x) => x.p99)),
      cpu_us_per_request: median(s.map((x) => x.cpuUs)),
      not_302: s.reduce((n, x) => n + x.non2xx + x.errors, 0),
    }));
    const rate = (name: string) => rows.find((r) => r.target === name)!.rps;
    const clicks = await metricValue(`http://127.0.0.1:${redirectPort}/metrics`, 'linkplane_clicks_published_total');

    // Ingestion: a worker drains the backlog of clicks the rounds left on CLICKS into this run's devdb.
    const workerPort = await freePort();
    const workerMetrics = `http://127.0.0.1:${workerPort}/metrics`;
    children.push(await startChild('src/main/run.ts', ['worker'], { ...env, WORKER_PORT: String(workerPort) }, `http://127.0.0.1:${workerPort}/readyz`));
    const ingestSeconds = Number(process.env.BENCH_INGEST_SECONDS ?? 10);
    await new Promise((r) => setTimeout(r, 2000)); // past the consumer's start
    const before = await metricValue(workerMetrics, 'linkplane_clicks_ingested_total');
    await new Promise((r) => setTimeout(r, ingestSeconds * 1000));
    const ingested = (await metricValue(workerMetrics, 'linkplane_clicks_ingested_total')) - before;
    console.error(`ingestion: ${Math.round(ingested / ingestSeconds)} clicks/s into devdb`);
    return {
      rows,
      ratios: {
        plain_vs_koa: rate('redirect plain') / rate('koa 302'),
        rules20_vs_koa: rate('redirect 20 rules') / rate('koa 302'),
        plain_vs_node_http: rate('redirect plain') / rate('node:http 302'),
        koa_vs_node_http: rate('koa 302') / rate('node:http 302'),
        plain_vs_koa_per_round_median: pairedMedian(samples.get('redirect plain')!, samples.get('koa 302')!),
        rules20_vs_koa_per_round_median: pairedMedian(samples.get('redirect 20 rules')!, samples.get('koa 302')!),
        plain_vs_node_http_per_round_median: pairedMedian(samples.get('redirect plain')!, samples.get('node:http 302')!),
        // node:http's CPU per request over the redirect's, per round: what the throughput ratio would be with every
        // server alone on a core (the machine's other load moves it less than it moves throughput).
        plain_vs_node_http_cpu_per_round_median: cpuRatio(samples.get('redirect plain')!, samples.get('node:http 302')!),
        ...(baseline
          ? {
              baseline_plain_vs_node_http_per_round_median: pairedMedian(samples.get('baseline redirect plain')!, samples.get('node:http 302')!),
              plain_vs_baseline_per_round_median: pairedMedian(samples.get('redirect plain')!, samples.get('baseline redirect plain')!),
              rules20_vs_baseline_per_round_median: pairedMedian(samples.get('redirect 20 rules')!, samples.get('baseline redirect 20 rules')!),
              baseline_plain_vs_node_http_cpu_per_round_median: cpuRatio(samples.get('baseline redirect plain')!, samples.get('node:http 302')!),
              plain_vs_baseline_cpu_per_round_median: cpuRatio(samples.get('redirect plain')!, samples.get('baseline redirect plain')!),
              rules20_vs_baseline_cpu_per_round_median: cpuRatio(samples.get('redirect 20 rules')!, samples.get('baseline redirect 20 rules')!),
            }
          : {}),
      },
      clicks_published: clicks,
      ingestion_clicks_per_second_devdb: Math.round(ingested / ingestSeconds),
      target: 'plain ≥ 85 % and 20 rules ≥ 65 % of koa; p99 < 5 ms at 50 connections',
    };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
  }
}

/** The median over rounds of `b`'s CPU per request divided by `a`'s: above 1, `a` costs less per request. */
function cpuRatio(a: RedirectSample[], b: RedirectSample[]): number {
  return median(a.map((s, i) => b[i]!.cpuUs / Math.max(1, s.cpuUs)));
}

/** A counter of a process's /metrics (clicks published by the redirect, ingested by the worker). */
async function metricValue(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'm').exec(text)?.[1] ?? -1);
}

