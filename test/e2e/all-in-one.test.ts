import { expect } from 'chai';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
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
      NATS_URL,
      NATS_PREFIX: natsPrefix(),
      LOG_LEVEL: 'warn',
      MONGODB_URI: '',
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
