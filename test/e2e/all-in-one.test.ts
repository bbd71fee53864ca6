import { expect } from 'chai';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { MongoClient } from 'mongodb';
import { natsPrefix, NATS_URL } from '../helpers/env.ts';
import { freePort, spawnProcess, waitForHttp, ROOT, type Spawned } from '../helpers/processes.ts';

/** `make run` as a newcomer meets it: all-in-one on an empty, persisted devdb. */
describe('all-in-one', function () {
  this.timeout(90_000);
  let dataDir: string;
  let env: Record<string, string>;
  let apiUrl: string;
  let redirectUrl: string;
  let workerUrl: string;
  let proc: Spawned | null = null;
  let workspaceKey: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'lp-aio-'));
    const [api, redirect, worker, devdb] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    apiUrl = `http://127.0.0.1:${api}`;
    redirectUrl = `http://127.0.0.1:${redirect}`;
    workerUrl = `http://127.0.0.1:${worker}`;
    env = {
      API_PORT: String(api),
      REDIRECT_PORT: String(redirect),
      WORKER_PORT: String(worker),
      DEVDB_PORT: String(devdb),
      DEVDB_DATA_DIR: join(dataDir, 'devdb'),
      // Short links on the default domain are served at the redirect's own address.
      SHORT_LINK_BASE_URL: redirectUrl,
      NATS_URL,
      NATS_PREFIX: natsPrefix(),
      LOG_LEVEL: 'warn',
      MONGODB_URI: '',
      // Behind one proxy, as in a container behind a load balancer: the visitor is the last X-Forwarded-For entry.
      TRUSTED_PROXY_HOPS: '1',
      // Above V8's own limit (about 4.4 GB), so the check below tells it was given to devdb's thread.
      DEVDB_HEAP_MB: '5120',
    };
  });

  after(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function printedKeys(output: string): { workspace: string; partner: string } {
    const workspace = /workspace ws_\w+\s+key: (lp_live_\w+)/.exec(output)?.[1];
    const partner = /partner\s+ptr_\w+\s+key: (lpp_live_\w+)/.exec(output)?.[1];
    expect(workspace, output).to.be.a('string');
    expect(partner, output).to.be.a('string');
    return { workspace: workspace!, partner: partner! };
  }

  async function waitForOutput(p: Spawned, pattern: RegExp): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!pattern.test(p.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  }

  it('creates a demo workspace and partner on first start, prints their keys, and answers GET /workspace', async () => {
    proc = spawnProcess('all-in-one', env);
    await waitForHttp(`${apiUrl}/readyz`, proc);
    await waitForOutput(proc, /partner\s+ptr_/);
    const keys = printedKeys(proc.output());
    workspaceKey = keys.workspace;

    const res = await fetch(`${apiUrl}/v1/workspace`, { headers: { Authorization: `Bearer ${keys.workspace}` } });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { name: string; plan: { limits: Record<string, number> }; usage: Record<string, number> };
    expect(body.name).to.equal('Demo workspace');
    expect(body.plan.limits.links).to.be.greaterThan(0);
    expect(body.usage.links).to.equal(0);

    const clients = await fetch(`${apiUrl}/v1/partner/clients`, { headers: { Authorization: `Bearer ${keys.partner}` } });
    expect(clients.status).to.equal(200);
    expect(((await clients.json()) as { data: unknown[] }).data).to.have.length(1);

    for (const url of [redirectUrl, workerUrl]) {
      expect((await fetch(`${url}/healthz`)).status).to.equal(200);
      expect((await fetch(`${url}/readyz`)).status).to.equal(200);
    }
    const unknown = await fetch(`${redirectUrl}/no-such-slug`);
    expect(unknown.status).to.equal(404);
    expect(unknown.headers.get('cache-control')).to.equal('no-store');
    expect(await unknown.text()).to.contain('Link not found');
    expect(await (await fetch(`${workerUrl}/metrics`)).text()).to.contain('linkplane_outbox_published_total');

    expect(await proc.stop(), 'SIGTERM ends it cleanly').to.equal(0);
    proc = null;
    expect(existsSync(join(dataDir, 'devdb')), 'the database was persisted').to.equal(true);
  });

  it('keeps its data across a restart and prints no new keys', async () => {
    proc = spawnProcess('all-in-one', env);
    await waitForHttp(`${apiUrl}/readyz`, proc);
    await new Promise((r) => setTimeout(r, 300));
    expect(proc.output()).not.to.contain('key: lp_live_');
    const cli = spawnSync(process.execPath, ['bin/linkplane.js', 'key', 'list'], {
      cwd: ROOT,
      env: { ...process.env, MONGODB_URI: `mongodb://127.0.0.1:${env.DEVDB_PORT}/?directConnection=true` },
      encoding: 'utf8',
    });
    expect(cli.status, cli.stderr).to.equal(0);
    expect((JSON.parse(cli.stdout) as { data: unknown[] }).data).to.have.length(2);
    // devdb's thread grows its heap to DEVDB_HEAP_MB (and its young generation beside it).
    const client = new MongoClient(`mongodb://127.0.0.1:${env.DEVDB_PORT}/?directConnection=true`);
    try {
      const status = (await client.db('admin').command({ serverStatus: 1 })) as { devdb: { heap: { limitMB: number } } };
      expect(status.devdb.heap.limitMB).to.be.within(5120, 5120 + 4 * 256);
    } finally {
      await client.close();
    }
  });

  async function workerCounter(name: string): Promise<number> {
    const text = await (await fetch(`${workerUrl}/metrics`)).text();
    return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  }

  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('publishes the events and stores the clicks of the api and redirect from its worker thread', async () => {
    const published = await workerCounter('linkplane_outbox_published_total');
    const ingested = await workerCounter('linkplane_clicks_ingested_total');
    const created = await fetch(`${apiUrl}/v1/links`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${workspaceKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/aio', slug: 'aio-thread' }),
    });
    expect(created.status).to.equal(201);
    await until('link.created published by the relay', async () => (await workerCounter('linkplane_outbox_published_total')) > published);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${redirectUrl}/aio-thread`, { redirect: 'manual' });
      expect(res.status).to.equal(302);
    }
    await until('the three clicks stored', async () => (await workerCounter('linkplane_clicks_ingested_total')) >= ingested + 3);
    expect(await workerCounter('linkplane_clicks_ingested_total')).to.equal(ingested + 3);
  });

  it('places clicks from public addresses in their country and network with no GeoIP database configured', async () => {
    const created = await fetch(`${apiUrl}/v1/links`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${workspaceKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/geo', slug: 'aio-geo' }),
    });
    expect(created.status).to.equal(201);
    const link = (await created.json()) as { id: string };
    const ingested = await workerCounter('linkplane_clicks_ingested_total');
    // Google's public resolver (US, AS15169) twice, a British address of Andrews & Arnold (GB, AS20712) once.
    const visitors = ['8.8.8.8', '8.8.4.4', '81.2.69.142'];
    for (const ip of visitors) {
      const res = await fetch(`${redirectUrl}/aio-geo`, {
        redirect: 'manual',
        headers: { 'X-Forwarded-For': ip, 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' },
      });
      expect(res.status).to.equal(302);
    }
    await until('the clicks stored', async () => (await workerCounter('linkplane_clicks_ingested_total')) >= ingested + visitors.length);
    const breakdown = async (dimension: string) => {
      const res = await fetch(`${apiUrl}/v1/analytics/breakdown?dimension=${dimension}&link_id=${link.id}&interval=24h`, {
        headers: { Authorization: `Bearer ${workspaceKey}` },
      });
      expect(res.status).to.equal(200);
      const rows = ((await res.json()) as { data: Array<{ value: string | number | null; clicks: number }> }).data;
      return Object.fromEntries(rows.map((row) => [String(row.value), row.clicks]));
    };
    expect(await breakdown('country')).to.deep.equal({ US: 2, GB: 1 });
    expect(await breakdown('asn')).to.deep.equal({ '15169': 2, '20712': 1 });
  });

  it('says clearly when NATS is not reachable', async () => {
    const port = await freePort();
    const p = spawnProcess('all-in-one', { ...env, NATS_URL: `nats://127.0.0.1:${port}`, API_PORT: '0', REDIRECT_PORT: '0', WORKER_PORT: '0', DEVDB_PORT: '0', DEVDB_DATA_DIR: join(dataDir, 'unused') });
    const code = await p.exited;
    expect(code).to.equal(1);
    expect(p.output()).to.contain(`NATS is not reachable at nats://127.0.0.1:${port}`);
  });

  it('names every bad variable at start-up', async () => {
    const p = spawnProcess('api', { API_PORT: 'eighty', LOG_LEVEL: 'loud', MONGODB_URI: '' });
    expect(await p.exited).to.equal(2);
    expect(p.output()).to.contain('API_PORT').and.contain('LOG_LEVEL').and.contain('MONGODB_URI');
  });
});
