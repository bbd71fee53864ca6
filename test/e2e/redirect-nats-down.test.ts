// NATS going away must not fail redirects: clicks wait in a bounded buffer, beyond it in the spool on local disk,
// and every one of them reaches MongoDB, once, through the worker once NATS is back.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, startWorker, type RunningApi, type RunningRedirect, type RunningWorker } from '../helpers/api.ts';
import { OwnNatsServer } from '../helpers/nats-server.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';

const BUFFER = 50;

describe('Redirects while NATS is down', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let nats: OwnNatsServer;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let worker: RunningWorker;
  let tenants: Tenants;
  let client: MongoClient;
  let db: Db;
  let base: string;
  let env: Record<string, string>;
  const spoolDir = mkdtempSync(join(tmpdir(), 'lp-spool-'));

  before(async () => {
    mongo = await startTestMongo();
    nats = await OwnNatsServer.start();
    ({ env, base } = await shortLinkEnv(mongo, {
      NATS_URL: nats.url,
      CLICK_BUFFER_MAX: String(BUFFER),
      CLICK_BATCH_WAIT_MS: '20',
      CLICK_SPOOL_DIR: spoolDir,
    }));
    api = await startApi(env);
    redirect = await startRedirect(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
  });

  after(async () => {
    await client.close();
    await tenants.close();
    await worker.stop();
    await redirect.stop();
    await api.stop();
    await nats.destroy();
    await mongo.stop();
    rmSync(spoolDir, { recursive: true, force: true });
  });

  async function clickCount(linkId: string, atLeast: number): Promise<number> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const n = await db.collection('clicks').countDocuments({ link_id: linkId });
      if (n >= atLeast || Date.now() > deadline) return n;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('keeps redirecting, holds at most the buffer in memory, spools the rest, and delivers every click once NATS is back', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const { key } = await tenants.aWorkspaceKey(ws._id);
    const created = await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/down', slug: 'down' } });
    expect(created.status).to.equal(201);
    const linkId = created.body.id as string;

    expect((await fetch(`${base}/down`, { redirect: 'manual' })).status).to.equal(302);
    expect(await clickCount(linkId, 1)).to.equal(1);

    await nats.stop();
    const statuses = new Set<number>();
    for (let i = 0; i < BUFFER * 3; i++) statuses.add((await fetch(`${base}/down`, { redirect: 'manual' })).status);
    expect([...statuses]).to.deep.equal([302]);
    expect(redirect.redirect.clicks.depth()).to.be.at.most(BUFFER);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).to.match(/linkplane_clicks_dropped_total(\{[^}]*\})? 0\b/);
    expect(metrics).to.match(/linkplane_clicks_spilled_total(\{[^}]*\})? [1-9]/);
    expect(readdirSync(join(spoolDir, env.NATS_PREFIX!)).length, 'segments on disk').to.be.greaterThan(0);

    await nats.restart();
    expect(await clickCount(linkId, 1 + BUFFER * 3)).to.equal(1 + BUFFER * 3);
    // And nothing turns up twice later.
    await new Promise((r) => setTimeout(r, 500));
    expect(await db.collection('clicks').countDocuments({ link_id: linkId })).to.equal(1 + BUFFER * 3);
  });

  it('drops its caches once NATS is back, so a change whose broadcast it missed is served long before the cache TTL', async () => {
    const ws = await tenants.aWorkspace();
    const { key } = await tenants.aWorkspaceKey(ws._id);
    const created = await callApi(api.url, 'POST', '/links', { key, body: { url: 'https://example.com/before', slug: 'missed' } });
    expect(created.status).to.equal(201);
    const location = async () => (await fetch(`${base}/missed`, { redirect: 'manual' })).headers.get('location');
    expect(await location()).to.equal('https://example.com/before');

    await nats.stop();
    // The api stores the change, but its invalidation broadcast reaches no one: NATS is down.
    const updated = await callApi(api.url, 'PATCH', `/links/${created.body.id as string}`, { key, body: { url: 'https://example.com/after' } });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect(await location(), 'served from the cache while cut off').to.equal('https://example.com/before');

    await nats.restart();
    // The cache TTL is five minutes (REDIRECT_CACHE_TTL_MS); only the reconnect's drop brings the change this soon.
    const deadline = Date.now() + 20_000;
    let seen = await location();
    while (seen !== 'https://example.com/after' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await location();
    }
    expect(seen).to.equal('https://example.com/after');
  });
});
