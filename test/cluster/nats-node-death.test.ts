// The cluster path under load, with the default settings: a real three-node JetStream cluster on loopback, two
// replicas each of api, redirect and worker as real processes, redirects with click capture, a link created every
// 200 ms with a webhook on link.created, and a link changed every second. The NATS node leading the CLICKS stream is
// SIGKILLed, then a worker. Every answered redirect must be stored exactly once, every link.created event delivered
// at least once, and every change must reach both redirect replicas' caches. Run by `make test-cluster`.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { NatsCluster } from '../helpers/nats-cluster.ts';
import { freePort, spawnProcess, waitForHttp, type Spawned } from '../helpers/processes.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { until } from '../helpers/wait.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HOST = 'go.test';
/** Seconds of load before the NATS node dies, after it, and after the worker dies. */
const PHASES = { warm: Number(process.env.CLUSTER_WARM_S ?? 6), natsDown: Number(process.env.CLUSTER_NATS_DOWN_S ?? 20), workerDown: Number(process.env.CLUSTER_WORKER_DOWN_S ?? 10) };
/** Requests in flight per redirect replica: modest, the machine has two cores for all of it. */
const CONNECTIONS = Number(process.env.CLUSTER_CONNECTIONS ?? 4);
/** How long a change may take to reach a replica's cache before it counts as never reached. */
const REACH_LIMIT_MS = 15_000;

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('a NATS node and a worker killed under load (three-node JetStream cluster, two replicas of each process)', function () {
  this.timeout(15 * 60_000);
  let mongo: TestMongo;
  let cluster: NatsCluster;
  let client: MongoClient;
  let tenants: Tenants;
  let receiver: Server;
  const spoolRoot = mkdtempSync(join(tmpdir(), 'lp-cluster-spool-'));
  const procs: Array<{ name: string; proc: Spawned }> = [];
  const apiUrls: string[] = [];
  const redirectPorts: number[] = [];
  const workerPorts: number[] = [];
  const deliveries: string[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let prefix = '';

  before(async () => {
    [mongo, cluster] = await Promise.all([startTestMongo(), NatsCluster.start(3)]);
    client = new MongoClient(mongo.uri);
    await client.connect();
    tenants = await Tenants.open(mongo);
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { id: string } };
        if (body.type === 'link.created') deliveries.push(body.data.id);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));

    const env = testEnv(mongo, {
      NATS_URL: cluster.url,
      SHORT_LINK_BASE_URL: `http://${HOST}`,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_ACK_WAIT_MS: '4000',
      // A batch held by the killed worker comes back after this (60 s by default), to keep the run short.
      CLICK_ACK_WAIT_MS: '5000',
      RATE_LIMIT_WORKSPACE_PER_MIN: '1000000',
      OUTBOX_POLL_MS: '250',
    });
    prefix = env.NATS_PREFIX!;
    const start = async (name: 'api' | 'redirect' | 'worker', i: number) => {
      const port = await freePort();
      const portVariable = { api: 'API_PORT', redirect: 'REDIRECT_PORT', worker: 'WORKER_PORT' }[name];
      const proc = spawnProcess(name, { ...env, [portVariable]: String(port), CLICK_SPOOL_DIR: join(spoolRoot, `${name}${i}`) });
      procs.push({ name: `${name}${i}`, proc });
      await waitForHttp(`http://127.0.0.1:${port}/readyz`, proc, 90_000);
      if (name === 'api') apiUrls.push(`http://127.0.0.1:${port}`);
      if (name === 'redirect') redirectPorts.push(port);
      if (name === 'worker') workerPorts.push(port);
    };
    // One at a time: each start provisions streams and indexes, and two cores are shared by everything here.
    for (const name of ['api', 'worker', 'redirect'] as const) for (const i of [0, 1]) await start(name, i);
  });

  after(async () => {
    agent.destroy();
    await Promise.all(procs.map(({ proc }) => proc.stop()));
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await tenants?.close();
    await client?.close();
    await cluster?.stop();
    await mongo?.stop();
    rmSync(spoolRoot, { recursive: true, force: true });
  });

  /** One request to a redirect replica, Host go.test; the status and Location, or null when it was not answered. */
  function visit(port: number, path: string, method = 'GET'): Promise<{ status: number; location: string | undefined } | null> {
    return new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path, method, agent, headers: { host: HOST, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36' } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
        res.on('error', () => resolve(null));
      });
      req.on('error', () => resolve(null));
      req.end();
    });
  }

  it('stores every answered redirect once, delivers every link.created, reaches both caches, and no process restarts', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const { key } = await tenants.aWorkspaceKey(ws._id);
    const headers = { ...bearer(key), 'Content-Type': 'application/json' };
    const api = async (i: number, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${apiUrls[i % apiUrls.length]}/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json().catch(() => ({}))) as { id?: string } };
    };
    const hook = await api(0, 'POST', '/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['link.created'] });
    expect(hook.status).to.equal(201);
    const slugs = ['a', 'b', 'c', 'd'];
    for (const slug of slugs) expect((await api(0, 'POST', '/links', { url: `https://example.com/${slug}`, slug })).status).to.equal(201);
    const probe = await api(1, 'POST', '/links', { url: 'https://example.com/probe/0', slug: 'probe' });
    expect(probe.status).to.equal(201);
    const created: string[] = [...(await client.db(mongo.dbName).collection('links').find({ workspace_id: ws._id }).toArray()).map((l) => String(l._id))];

    let running = true;
    const answered = { ok: 0, other: 0, unanswered: 0 };
    // The load: GET redirects on both replicas (each one a click).
    const loaders = redirectPorts.flatMap((port) =>
      Array.from({ length: CONNECTIONS }, async (_, c) => {
        for (let n = c; running; n++) {
          const res = await visit(port, `/${slugs[n % slugs.length]}`);
          if (res === null) answered.unanswered++;
          else if (res.status === 302) answered.ok++;
          else answered.other++;
        }
      }),
    );
    // A link created every 200 ms, on either api replica.
    const createFailures: number[] = [];
    const creator = (async () => {
      for (let n = 0; running; n++) {
        const res = await api(n, 'POST', '/links', { url: `https://example.com/new/${n}` });
        if (res.status === 201 && res.body.id) created.push(res.body.id);
        else createFailures.push(res.status);
        await sleep(200);
      }
    })();
    // A change every second, and how long it takes to reach each replica's cache (HEAD: not a click).
    const reach: number[] = [];
    let unreached = 0;
    const changer = (async () => {
      for (let v = 1; running; v++) {
        const res = await api(v, 'PATCH', `/links/${probe.body.id}`, { url: `https://example.com/probe/${v}` });
        const changedAt = performance.now();
        if (res.status !== 200) continue;
        await Promise.all(
          redirectPorts.map(async (port) => {
            for (;;) {
              const seen = await visit(port, '/probe', 'HEAD');
              if (seen?.location === `https://example.com/probe/${v}`) return reach.push(performance.now() - changedAt);
              if (performance.now() - changedAt > REACH_LIMIT_MS) return unreached++;
              await sleep(10);
            }
          }),
        );
        await sleep(1000);
      }
    })();

    // One active outbox relay: the workers' published-events counters, sampled; an interval in which both grew means
    // two relays at once.
    const relayed = workerPorts.map(() => 0);
    let relayOverlaps = 0;
    const relayWatch = (async () => {
      let last: Array<number | null> = workerPorts.map(() => null);
      while (running) {
        const now = await Promise.all(
          workerPorts.map(async (port) => {
            try {
              const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
              const match = /^linkplane_outbox_published_total(?:\{[^}]*\})? (\d+)/m.exec(text);
              return match ? Number(match[1]) : 0;
            } catch {
              return null;
            }
          }),
        );
        const grew = now.map((n, i) => n !== null && last[i] !== null && n > last[i]!);
        grew.forEach((g, i) => g && (relayed[i] = relayed[i]! + 1));
        if (grew.every(Boolean)) relayOverlaps++;
        last = now;
        await sleep(250);
      }
    })();

    await sleep(PHASES.warm * 1000);
    const leader = await cluster.streamLeader(`${prefix}CLICKS`);
    expect(leader, 'the CLICKS stream has a leader').to.be.a('string');
    await cluster.kill(leader!);
    const okAtNatsKill = answered.ok;
    await sleep(PHASES.natsDown * 1000);
    const worker = procs.find((p) => p.name === 'worker0')!.proc;
    worker.child.kill('SIGKILL');
    await worker.exited;
    await sleep(PHASES.workerDown * 1000);
    running = false;
    await Promise.all([...loaders, creator, changer, relayWatch]);

    const clicks = client.db(mongo.dbName).collection('clicks');
    await until(async () => (await clicks.countDocuments({ workspace_id: ws._id })) >= answered.ok || false, 180_000, 'every answered click stored').catch(() => undefined);
    const stored = await clicks.countDocuments({ workspace_id: ws._id });
    await until(() => created.every((id) => deliveries.includes(id)) || false, 120_000, 'every link.created delivered').catch(() => undefined);
    await sleep(2000);
    const delivered = new Set(deliveries);
    const missing = created.filter((id) => !delivered.has(id));
    const duplicates = deliveries.length - delivered.size;
    const restarted = procs.filter(({ name, proc }) => name !== 'worker0' && (proc.child.exitCode !== null || proc.child.signalCode !== null)).map((p) => p.name);

    const figures = {
      nats_node_killed: leader,
      redirects_answered_302: answered.ok,
      answered_before_nats_kill: okAtNatsKill,
      redirects_other_status: answered.other,
      redirects_unanswered: answered.unanswered,
      clicks_stored: stored,
      links_created: created.length,
      link_creations_failed: createFailures.length,
      link_created_delivered: delivered.size,
      link_created_missing: missing.length,
      delivery_duplicates: duplicates,
      cache_changes_measured: reach.length,
      cache_reach_p50_ms: Math.round(percentile(reach, 50)),
      cache_reach_p99_ms: Math.round(percentile(reach, 99)),
      cache_reach_max_ms: Math.round(percentile(reach, 100)),
      cache_changes_unreached: unreached,
      outbox_relay_intervals_per_worker: relayed,
      outbox_relay_overlapping_intervals: relayOverlaps,
      processes_exited: restarted,
      clicks_stream: await cluster.streamState(`${prefix}CLICKS`),
    };
    // A bench mode: CLUSTER_RESULTS=<file> keeps the figures (with CLUSTER_CONNECTIONS and the phases raised).
    if (process.env.CLUSTER_RESULTS) writeFileSync(process.env.CLUSTER_RESULTS, JSON.stringify({ at: new Date().toISOString(), connections: CONNECTIONS, phases: PHASES, ...figures }, null, 2));
    console.log(`      cluster figures: ${JSON.stringify(figures, null, 2).replace(/\n/g, '\n      ')}`);

    expect(answered.ok, 'redirects were answered throughout').to.be.greaterThan(okAtNatsKill);
    expect(answered.other + answered.unanswered, 'every redirect answered 302').to.equal(0);
    expect(stored, 'every answered redirect stored exactly once').to.equal(answered.ok);
    expect(missing, 'every link.created delivered at least once').to.deep.equal([]);
    expect(unreached, `changes that never reached a replica's cache within ${REACH_LIMIT_MS} ms`).to.equal(0);
    expect(relayOverlaps, 'one outbox relay at a time').to.equal(0);
    expect(relayed.some((n) => n > 0), 'the relay ran').to.equal(true);
    expect(restarted, 'no process exited').to.deep.equal([]);
  });
});
