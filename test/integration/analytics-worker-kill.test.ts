import { expect } from 'chai';
import { MongoClient, type Db } from 'mongodb';
import { pino } from 'pino';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { freePort, spawnProcess, waitForHttp, type Spawned } from '../helpers/processes.ts';
import { Tenants } from '../helpers/tenants.ts';
import { until } from '../helpers/wait.ts';
import { randomClick, seeded, type TestLink } from '../helpers/analytics-clicks.ts';
import { connectNats, provisionStreams, type Nats } from '../../src/platform/nats.ts';
import { encodeClicks } from '../../src/clicks/click-wire.ts';
import { CLICK_INGEST_DURABLE } from '../../src/clicks/ingest.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import type { ClickDoc } from '../../src/clicks/click.store.ts';
import { rollupPrefix, type RollupPartDoc } from '../../src/analytics/rollup.store.ts';
import { decodeCells } from '../../src/analytics/cells.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The clicks of every cell of one dimension in the stored parts of the workspace's rollups of one grain and group. */
async function cellsOf(db: Db, workspaceId: string, grain: 'q' | 'h' | 'd', group: string, dimension: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const prefix = rollupPrefix(workspaceId, group, grain);
  for await (const part of db.collection<RollupPartDoc>('analytics_parts').find({ r: { $gte: prefix, $lt: `${prefix}~` } })) {
    const bytes = part.c[dimension];
    if (bytes) for (const cell of decodeCells(bytes.buffer)) out.set(cell.key, (out.get(cell.key) ?? 0) + cell.c);
  }
  return out;
}

const sum = (cells: Map<string, number>) => [...cells.values()].reduce((a, b) => a + b, 0);

/** Clicks in the totals, in the per-link cells of the workspace rollups, and in the link-level rollups (per day only). */
async function rolledUp(db: Db, workspaceId: string, grain: 'q' | 'h' | 'd'): Promise<{ workspace: number; linkCells: number; links: number }> {
  return {
    workspace: sum(await cellsOf(db, workspaceId, grain, '_', '_')),
    linkCells: sum(await cellsOf(db, workspaceId, grain, 'link', 'link')),
    links: sum(await cellsOf(db, workspaceId, grain, '*', '_')),
  };
}

describe('analytics rollups when the worker is killed mid-batch (worker in a child process, SIGKILL, real NATS)', function () {
  this.timeout(300_000);
  let mongo: TestMongo;
  let env: Record<string, string>;
  let client: MongoClient;
  let db: Db;
  let nats: Nats;
  let tenants: Tenants;
  const workers: Spawned[] = [];

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo, { CLICK_ACK_WAIT_MS: '5000', CLICK_BATCH_SIZE: '150', CLICK_BATCH_WAIT_MS: '20' });
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
    // A killed worker's open transaction holds its rollup documents until the server aborts it (60 s by default).
    await client.db('admin').command({ setParameter: 1, transactionLifetimeLimitSeconds: 3 });
    nats = await connectNats({ url: env.NATS_URL!, prefix: env.NATS_PREFIX!, name: 'analytics-kill-test', logger: pino({ level: 'silent' }) });
    await provisionStreams(nats, 3_600_000);
    tenants = await Tenants.open(mongo);
  });

  after(async () => {
    for (const w of workers) await w.stop();
    await client?.db('admin').command({ setParameter: 1, transactionLifetimeLimitSeconds: 60 });
    await nats?.drain();
    await tenants?.close();
    await client?.close();
    await mongo?.stop();
  });

  async function startWorker(): Promise<Spawned> {
    const port = await freePort();
    const worker = spawnProcess('worker', { ...env, WORKER_PORT: String(port) });
    workers.push(worker);
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, worker, 60_000);
    return worker;
  }

  it('counts every click exactly once, though workers died mid-batch and their batches were redelivered', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const links: TestLink[] = [0, 1, 2].map((i) => ({ id: `lnk_k${i}`, domain_id: 'dom_k', domain: 'k.example', slug: `k${i}`, tag_ids: [], folder_id: null }));
    const rand = seeded(99);
    const now = Date.now();
    const clicks: ClickRecord[] = [];
    for (let i = 0; i < 4000; i++) clicks.push(randomClick(rand, ws._id, links, now - 3_600_000, now, 500));
    // As the redirect publishes them: one message per 50 clicks of the workspace, the message id de-duplicating.
    for (let i = 0; i < clicks.length; i += 50) {
      const part = clicks.slice(i, i + 50);
      await nats.js.publish(nats.subjects.click(ws._id), encodeClicks(ws._id, part), { msgID: `kill-${part[0]!.id}` });
    }
    const raw = db.collection<ClickDoc>('clicks');

    // Kill workers while they ingest, until one died after a batch's transaction but before the batch was counted and
    // acknowledged: the redelivery must count those clicks and not roll them up again.
    let halfDone = 0;
    let kills = 0;
    for (let attempt = 0; attempt < 10 && (halfDone === 0 || kills < 2); attempt++) {
      const worker = await startWorker();
      const before = await raw.countDocuments({ workspace_id: ws._id });
      if (before >= clicks.length) break;
      // Every other worker is killed the moment its first batch is seen stored (polled without a pause: the window
      // lasts as long as counting the batch does), the others at a random moment after it.
      if (attempt % 2 === 1) {
        const deadline = Date.now() + 60_000;
        while (Date.now() < deadline && (await raw.countDocuments({ workspace_id: ws._id })) === before);
      } else {
        await until(async () => (await raw.countDocuments({ workspace_id: ws._id })) > before, 60_000, 'ingestion under way').catch(async (error: unknown) => {
          const stream = nats.subjects.stream('CLICKS');
          const info = await nats.jsm.streams.info(stream);
          const consumers = await nats.jsm.consumers.list(stream).next();
          throw new Error(`${(error as Error).message}; stream ${JSON.stringify(info.state)} ${JSON.stringify(consumers.map((c) => [c.name, c.num_pending, c.num_ack_pending, c.delivered]))}; worker output:\n${worker.output()}`);
        });
        await sleep(Math.floor(rand() * 40));
      }
      worker.child.kill('SIGKILL');
      await worker.exited;
      kills++;
      // Whatever the moment of the kill, a raw click is stored if and only if it is in the rollups (the killed
      // worker's open transaction, if any, shows nothing).
      const stored = await raw.countDocuments({ workspace_id: ws._id });
      expect(await raw.countDocuments({ workspace_id: ws._id, rolled_up: { $ne: true } }), `kill ${kills}: stored clicks not rolled up`).to.equal(0);
      expect(await rolledUp(db, ws._id, 'q'), `kill ${kills}: the rollups hold exactly the stored clicks`).to.deep.equal({ workspace: stored, linkCells: stored, links: 0 });
      halfDone += await raw.countDocuments({ workspace_id: ws._id, counted: false });
    }
    expect(kills, 'workers killed while ingesting').to.be.at.least(2);
    expect(halfDone, `a kill left clicks stored and rolled up, but neither counted nor acknowledged (${kills} kills)`).to.be.greaterThan(0);

    await startWorker();
    await until(
      async () => {
        const info = await nats.jsm.consumers.info(nats.subjects.stream('CLICKS'), CLICK_INGEST_DURABLE);
        const pending = await raw.countDocuments({ workspace_id: ws._id, counted: false });
        const stored = await raw.countDocuments({ workspace_id: ws._id });
        return info.num_pending + info.num_ack_pending === 0 && pending === 0 && stored === clicks.length;
      },
      120_000,
      'every click ingested and acknowledged',
    );

    for (const grain of ['q', 'h', 'd'] as const) {
      expect(await rolledUp(db, ws._id, grain), `grain ${grain}`).to.deep.equal({ workspace: clicks.length, linkCells: clicks.length, links: grain === 'd' ? clicks.length : 0 });
    }
    // Per value too: the country cells of the day documents equal a recount.
    const expected = new Map<string, number>();
    for (const c of clicks) expected.set(c.visitor.country ?? '~', (expected.get(c.visitor.country ?? '~') ?? 0) + 1);
    const countries = await cellsOf(db, ws._id, 'd', 'small', 'country');
    expect(Object.fromEntries(countries)).to.deep.equal(Object.fromEntries(expected));
  });
});
