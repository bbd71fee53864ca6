// A worker killed (SIGKILL) in the middle of an import: another worker takes the job once its lease runs out, goes
// on from the last page written, and in the end the workspace has every link of the source exactly once.
import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { freePort, spawnProcess, waitForHttp, type Spawned } from '../helpers/processes.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { startDubServer, type DubLinkFixture, type DubServer } from '../helpers/import-servers/dub.ts';

const TOKEN = 'dub_test_token';
const LINKS = 400;
const LEASE_MS = 2000;

interface Job {
  id: string;
  status: string;
  done: number;
  created: number;
  skipped: number;
  failed: number;
}

describe('an import whose worker is killed mid-import (worker in a child process, SIGKILL)', function () {
  this.timeout(400_000);
  let mongo: TestMongo;
  let env: Record<string, string>;
  let api: RunningApi;
  let tenants: Tenants;
  let server: DubServer;
  const workers: Spawned[] = [];

  const fixtures: DubLinkFixture[] = Array.from({ length: LINKS }, (_, i) => ({
    id: `link_${String(i).padStart(5, '0')}`,
    domain: 'dub.sh',
    key: `k${i}`,
    url: `https://example.com/page/${i}`,
    tags: i % 10 === 0 ? ['tenth'] : [],
    createdAt: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
  }));

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo, { IMPORT_ALLOW_PRIVATE_SOURCES: 'true', IMPORT_POLL_MS: '100', IMPORT_LEASE_MS: String(LEASE_MS), LOG_LEVEL: 'warn' });
    api = await startApi(env);
    tenants = await Tenants.open(mongo);
    server = await startDubServer({ token: TOKEN, links: fixtures });
  });

  after(async () => {
    for (const worker of workers) await worker.stop();
    await server?.close();
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  async function startWorker(): Promise<Spawned> {
    const port = await freePort();
    const worker = spawnProcess('worker', { ...env, WORKER_PORT: String(port) });
    workers.push(worker);
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, worker, 90_000);
    return worker;
  }

  it('resumes from the last page written, and every link is there exactly once', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business', limits: { links: 100_000 } });
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    const created = await callApi(api.url, 'POST', '/imports', { key, body: { source: 'dub', token: TOKEN, base_url: server.url } });
    expect(created.status, JSON.stringify(created.body)).to.equal(202);
    const id = created.body.id as string;
    const read = async () => (await callApi(api.url, 'GET', `/imports/${id}`, { key })).body as unknown as Job;

    const first = await startWorker();
    await until(async () => (await read()).done >= 100, 200_000, "a page written");
    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.child.signalCode).to.equal('SIGKILL');
    const atKill = await read();
    expect(atKill.status, 'killed mid-import').to.equal('running');
    expect(atKill.done).to.be.below(LINKS);

    await startWorker();
    const job = await until(async () => {
      const now = await read();
      return now.status === 'succeeded' ? now : false;
    }, 200_000, "the import to finish on the second worker");
    expect(job).to.deep.include({ failed: 0, skipped: 0 });
    expect(job.created).to.equal(LINKS);

    const links = tenants.client.db(mongo.dbName).collection<{ url: string; workspace_id: string }>('links');
    const urls = (await links.find({ workspace_id: ws._id }).project<{ url: string }>({ url: 1 }).toArray()).map((l) => l.url);
    expect(urls).to.have.length(LINKS);
    expect(new Set(urls).size, 'no link twice').to.equal(LINKS);
    expect(new Set(urls)).to.deep.equal(new Set(fixtures.map((f) => f.url)));
    const claims = tenants.client.db(mongo.dbName).collection('imported_links');
    expect(await claims.countDocuments({ workspace_id: ws._id, state: 'created' })).to.equal(LINKS);
  });

  it('adopts the links a dead run wrote but never marked, instead of writing them again', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business', limits: { links: 100_000 } });
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    const small = await startDubServer({ token: TOKEN, links: fixtures.slice(0, 150).map((f) => ({ ...f, key: `adopt-${f.key!}` })) });
    try {
      if (workers.every((w) => w.child.exitCode !== null || w.child.signalCode !== null)) await startWorker();
      const body = { source: 'dub', token: TOKEN, base_url: small.url };
      const id = (await callApi(api.url, 'POST', '/imports', { key, body })).body.id as string;
      const read = async () => (await callApi(api.url, 'GET', `/imports/${id}`, { key })).body as unknown as Job;
      await until(async () => (await read()).status === 'succeeded', 60_000, 'the first run');

      // As a run killed between writing a batch's links and marking them would leave them: claims pending, the job
      // back at the start of the batch.
      const db = tenants.client.db(mongo.dbName);
      await db.collection('imported_links').updateMany({ workspace_id: ws._id }, { $set: { state: 'pending', link_id: null } });
      await db.collection('import_jobs').updateOne(
        { _id: id as never },
        { $set: { status: 'queued', cursor: null, batches: 0, created: 0, skipped: 0, failed: 0, finished_at: null } },
      );
      await db.collection('import_errors').deleteMany({ job_id: id });
      const job = await until(async () => {
        const now = await read();
        return now.status === 'succeeded' ? now : false;
      }, 60_000, 'the resumed run');
      expect(job).to.deep.include({ created: 150, skipped: 0, failed: 0 });
      expect(await db.collection('links').countDocuments({ workspace_id: ws._id })).to.equal(150);
      expect(await db.collection('imported_links').countDocuments({ workspace_id: ws._id, state: 'created', link_id: { $ne: null } })).to.equal(150);
    } finally {
      await small.close();
    }
  });
});
