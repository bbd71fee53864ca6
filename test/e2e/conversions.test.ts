// Conversions end to end: a workspace tracking conversions, a visit through the redirect, the signed lp_click_id on
// the destination, the conversion posted with it, conversion.created at a real receiver (workspace and partner
// endpoints), and an A/B test whose winner is declared from conversions after simulated traffic. Every process is
// the real composition root on a real socket.
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, startWorker, type RunningApi, type RunningRedirect, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Json, type Reply } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { ClickIds } from '../../src/clicks/click-id.ts';
import { ConversionService } from '../../src/conversions/conversion.service.ts';
import { ConversionRollup } from '../../src/analytics/conversion-rollup.ts';
import type { Principal } from '../../src/tenancy/principal.ts';

const SECRET = 'conversions-test-secret-key-0123456789abcdef';
const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

describe('Conversions end to end', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let worker: RunningWorker;
  let tenants: Tenants;
  let client: MongoClient;
  let db: Db;
  let base: string;
  let key: string;
  let partnerKey: string;
  let workspaceId: string;
  let otherKey: string;
  let otherWorkspaceId: string;
  let receiver: Server;
  let receiverUrl: string;
  const received: Array<{ path: string; type: string; body: Json }> = [];

  before(async () => {
    mongo = await startTestMongo();
    let env: Record<string, string>;
    ({ env, base } = await shortLinkEnv(mongo, {
      SECRET_KEY: SECRET,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      CLICK_BATCH_WAIT_MS: '20',
      COUNTER_REFRESH_MS: '100',
      REDIRECT_CACHE_TTL_MS: '0',
    }));
    api = await startApi(env);
    redirect = await startRedirect(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    const partnerId = await tenants.aPartner();
    const ws = await tenants.aWorkspace({ plan_id: 'business', partner_id: partnerId });
    workspaceId = ws._id;
    key = (await tenants.aWorkspaceKey(ws._id)).key;
    partnerKey = (await tenants.aPartnerKey(partnerId)).key;
    const other = await tenants.aWorkspace({ plan_id: 'business' });
    otherWorkspaceId = other._id;
    otherKey = (await tenants.aWorkspaceKey(other._id)).key;
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
        received.push({ path: req.url ?? '/', type: String(req.headers['x-service-event']), body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    for (const k of [key, otherKey]) expect((await callApi(api.url, 'PATCH', '/workspace', { key: k, body: { conversion_tracking: true } })).status).to.equal(200);
    expect((await call('POST', '/webhooks', { url: `${receiverUrl}/workspace`, events: ['conversion.created', 'link.updated'] })).status).to.equal(201);
    const partnerHook = await callApi(api.url, 'POST', '/webhooks', { key: partnerKey, body: { url: `${receiverUrl}/partner`, events: ['conversion.created'] } });
    expect(partnerHook.status).to.equal(201);
  });

  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await client.close();
    await tenants.close();
    await worker.stop();
    await redirect.stop();
    await api.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown, k = key): Promise<Reply> =>
    callApi(api.url, method, path, { key: k, ...(body === undefined ? {} : { body }) });
  let counter = 0;
  const aLink = async (body: Json, k = key): Promise<Json & { id: string; slug: string }> => {
    const reply = await call('POST', '/links', { slug: `c${++counter}-${Date.now().toString(36)}`, url: 'https://shop.example.com/landing', ...body }, k);
    expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
    return reply.body as Json & { id: string; slug: string };
  };
  /** A new visitor (no cookies) follows the short link; the destination it is sent to. */
  const visit = async (slug: string): Promise<URL> => {
    const res = await fetch(`${base}/${slug}`, { redirect: 'manual', headers: { 'User-Agent': DESKTOP } });
    expect(res.status).to.equal(302);
    return new URL(res.headers.get('location')!);
  };
  const clickIdOf = (destination: URL): string => {
    const id = destination.searchParams.get('lp_click_id');
    expect(id, 'lp_click_id on the destination').to.be.a('string');
    return id!;
  };

  it('attributes a conversion posted with the lp_click_id of a visit and delivers conversion.created to workspace and partner endpoints', async () => {
    const link = await aLink({});
    const clickId = clickIdOf(await visit(link.slug));
    const reply = await call('POST', '/conversions', {
      click_id: clickId,
      type: 'order',
      amount: 4999,
      currency: 'EUR',
      external_id: 'order-1001',
      customer_external_id: 'cust-7',
      metadata: { coupon: 'WELCOME', items: 2 },
    });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
    expect(reply.body).to.include({ click_id: clickId, link_id: link.id, slug: link.slug, type: 'order', amount: 4999, currency: 'EUR', external_id: 'order-1001' });
    expect(reply.body.id).to.match(/^cnv_/);
    expect(reply.body.attribution).to.deep.include({ variant_index: null, device: 'desktop' });

    const deliveries = await until(() => {
      const found = received.filter((r) => r.type === 'conversion.created' && (r.body.data as Json).id === reply.body.id);
      return found.length >= 2 ? found : false;
    }, 20_000, 'conversion.created at both endpoints');
    expect(deliveries.map((d) => d.path).sort()).to.deep.equal(['/partner', '/workspace']);
    expect(deliveries[0]!.body.data).to.deep.equal(reply.body);

    // The same external id again: the first conversion, 200, nothing new recorded or emitted.
    const again = await call('POST', '/conversions', { click_id: clickId, type: 'order', amount: 1, currency: 'USD', external_id: 'order-1001' });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(reply.body);
    expect(await db.collection('conversions').countDocuments({ external_id: 'order-1001' })).to.equal(1);
    expect((await call('GET', `/conversions/${reply.body.id as string}`)).body).to.deep.equal(reply.body);

    // The analytics figures count it, in the cells of the click it is attributed to.
    const summary = await until(async () => {
      const body = (await call('GET', `/analytics/summary?link_id=${link.id}&interval=24h`)).body;
      return body.clicks === 1 && body.conversions === 1 ? body : false;
    }, 20_000, 'the click and its conversion in the summary');
    expect(summary).to.include({ clicks: 1, conversions: 1 });
    expect(summary.revenue, 'revenue per currency, in minor units').to.deep.equal({ EUR: 4999 });
    const series = (await call('GET', `/analytics/timeseries?link_id=${link.id}&interval=24h`)).body.data as Json[];
    expect(series.reduce((n, b) => n + (b.conversions as number), 0)).to.equal(1);
    const countries = (await call('GET', `/analytics/breakdown?link_id=${link.id}&interval=24h&dimension=device`)).body.data as Json[];
    expect(countries.map((r) => [r.value, r.conversions])).to.deep.equal([['desktop', 1]]);
    expectRefused(await call('GET', `/conversions/${reply.body.id as string}`, undefined, otherKey), 404, 'not_found');
  });

  it('records a conversion, its event and its figures together or not at all: a failed figures write is an error the client retries, counted once', async () => {
    const link = await aLink({});
    const clickId = clickIdOf(await visit(link.slug));
    await until(async () => (await db.collection('clicks').countDocuments({ _id: clickId as never })) === 1, 20_000, 'the click stored');
    const { infra } = api;
    const rollup = new ConversionRollup(infra.mongo.client, infra.stores.rollups, infra.stores.clicks.clicks);
    let failNext = true;
    const service = new ConversionService({
      client: infra.mongo.client,
      conversions: infra.stores.conversions,
      clicks: infra.stores.clicks.clicks,
      workspaces: infra.stores.workspaces,
      events: infra.stores.events,
      clickIds: new ClickIds(SECRET),
      abFeedback: null,
      // The real figures write, made to fail once after it has written (as a database failure mid-transaction would).
      counted: [
        async (doc, session) => {
          await rollup.counted(doc, session);
          if (failNext) {
            failNext = false;
            throw new Error('figures write failed');
          }
        },
      ],
      logger: infra.logger,
      clickWaitMs: 5000,
    });
    const principal = (await api.api.keys.authenticate(key)) as Extract<Principal, { kind: 'workspace' }>;
    const input = { click_id: clickId, type: 'order' as const, amount: 700, currency: 'USD', external_id: `atomic-${link.id}` };
    let failure: unknown = null;
    await service.create(principal, input).catch((error: unknown) => (failure = error));
    expect(String(failure)).to.contain('figures write failed');
    expect(await db.collection('conversions').countDocuments({ link_id: link.id }), 'no conversion without its figures').to.equal(0);
    expect(await db.collection('events').countDocuments({ type: 'conversion.created', 'data.link_id': link.id }), 'no event either').to.equal(0);
    expect((await db.collection('clicks').findOne({ _id: clickId as never }))?.conversions ?? 0, 'the click untouched').to.equal(0);

    const retried = await service.create(principal, input);
    expect(retried.created).to.equal(true);
    const summary = (await call('GET', `/analytics/summary?link_id=${link.id}&interval=24h`)).body;
    expect(summary).to.include({ conversions: 1 });
    expect(summary.revenue).to.deep.equal({ USD: 700 });
  });

  it('refuses a tampered, forged or other-workspace click id as invalid_click_id', async () => {
    const link = await aLink({});
    const clickId = clickIdOf(await visit(link.slug));
    const last = clickId.at(-1) === 'A' ? 'B' : 'A';
    const tampered = `${clickId.slice(0, -1)}${last}`;
    const forged = new ClickIds('another-installation-secret-key-0123456789').issue(workspaceId);
    for (const bad of [tampered, forged, 'clk_nonsense', 'x']) {
      expectRefused(await call('POST', '/conversions', { click_id: bad, type: 'signup' }), 422, 'invalid_click_id');
    }
    // A genuine id of this workspace, posted with another workspace's key.
    expectRefused(await call('POST', '/conversions', { click_id: clickId, type: 'signup' }, otherKey), 422, 'invalid_click_id');
    const otherLink = await aLink({}, otherKey);
    const otherClick = clickIdOf(await visit(otherLink.slug));
    expectRefused(await call('POST', '/conversions', { click_id: otherClick, type: 'signup' }), 422, 'invalid_click_id');
    expect(await db.collection('conversions').countDocuments({ workspace_id: otherWorkspaceId })).to.equal(0);
  });

  it('refuses a click older than the attribution window as attribution_expired', async () => {
    expect((await call('PATCH', '/workspace', { attribution_window_days: 7 })).status).to.equal(200);
    const old = new ClickIds(SECRET).issue(workspaceId, new Date(Date.now() - 8 * 86_400_000));
    expectRefused(await call('POST', '/conversions', { click_id: old, type: 'signup' }), 422, 'attribution_expired');
    const reply = await call('POST', '/conversions', { click_id: old, type: 'signup' });
    expect(reply.body.error!.message).to.contain('7 days');
  });

  it('validates the body: order needs amount and currency, custom needs a goal, metadata is bounded, currency is ISO 4217', async () => {
    const link = await aLink({});
    const clickId = clickIdOf(await visit(link.slug));
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'order' }), 'amount');
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'order', amount: 10 }), 'currency');
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'order', amount: 10.5, currency: 'EUR' }), 'amount');
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'order', amount: 10, currency: 'XYZ' }), 'currency');
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'custom' }), 'goal');
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'refund' }), 'type');
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i]));
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'signup', metadata: tooMany }), 'metadata');
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'signup', metadata: { nested: { a: 1 } } }), 'metadata.nested');
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'signup', occurred_at: new Date(Date.now() + 86_400_000).toISOString() }), 'occurred_at');
    expectInvalid(await call('POST', '/conversions', { click_id: clickId, type: 'signup', occurred_at: '2020-01-01T00:00:00Z' }), 'occurred_at');
    expectRefused(await call('POST', '/conversions', { click_id: clickId, type: 'signup' }, (await tenants.aWorkspaceKey(workspaceId, ['conversions:read'])).key), 403, 'insufficient_scope');
    const custom = await call('POST', '/conversions', { click_id: clickId, type: 'custom', goal: 'newsletter' });
    expect(custom.status).to.equal(201);
    expect(custom.body.goal).to.equal('newsletter');
  });

  it('lists conversions newest first, cursor-paginated, filtered by link, type and range', async () => {
    const a = await aLink({});
    const b = await aLink({});
    const ids: string[] = [];
    for (const [link, type] of [[a, 'signup'], [a, 'order'], [b, 'signup'], [a, 'signup']] as const) {
      const body = type === 'order' ? { type, amount: 100, currency: 'USD' } : { type };
      const reply = await call('POST', '/conversions', { click_id: clickIdOf(await visit(link.slug)), ...body });
      expect(reply.status).to.equal(201);
      ids.push(reply.body.id as string);
    }
    const first = await call('GET', `/conversions?link_id=${a.id}&limit=2`);
    expect((first.body.data as Json[]).map((c) => c.id)).to.deep.equal([ids[3], ids[1]]);
    const pagination = first.body.pagination as { next_cursor: string; has_more: boolean };
    expect(pagination.has_more).to.equal(true);
    const second = await call('GET', `/conversions?link_id=${a.id}&limit=2&cursor=${pagination.next_cursor}`);
    expect((second.body.data as Json[]).map((c) => c.id)).to.deep.equal([ids[0]]);
    expect((second.body.pagination as Json).has_more).to.equal(false);
    const signups = await call('GET', `/conversions?link_id=${a.id}&type=signup`);
    expect((signups.body.data as Json[]).map((c) => c.id)).to.deep.equal([ids[3], ids[0]]);
    const future = await call('GET', `/conversions?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(future.body.data).to.deep.equal([]);
    expectRefused(await call('GET', '/conversions?cursor=not-a-cursor'), 400, 'invalid_request');
    expectInvalid(await call('GET', '/conversions?type=refund'), 'type');
  });

  it('declares the A/B winner from conversions after enough traffic: winner_index, stopped_at, all traffic to it, one link.updated', async () => {
    const variants = [
      { url: 'https://shop.example.com/a', weight: 50 },
      { url: 'https://shop.example.com/b', weight: 50 },
    ];
    // The warm-up holds any decision while the simulated traffic comes in; the workspace then ends it by hand.
    const link = await aLink({
      ab_test: { enabled: true, variants, auto: { enabled: true, min_sample: 10, warmup_until: new Date(Date.now() + 3_600_000).toISOString() } },
    });
    const started = Date.now();
    // New visitors until each variant has 12 clicks; variant b converts nine times in ten, variant a once.
    const byVariant: string[][] = [[], []];
    while (byVariant[0]!.length < 12 || byVariant[1]!.length < 12) {
      const destination = await visit(link.slug);
      byVariant[destination.pathname === '/b' ? 1 : 0]!.push(clickIdOf(destination));
    }
    const converting = [byVariant[0]!.slice(0, 1), byVariant[1]!.slice(0, Math.ceil(byVariant[1]!.length * 0.9))];
    for (const ids of converting) {
      for (const clickId of ids) expect((await call('POST', '/conversions', { click_id: clickId, type: 'signup' })).status).to.equal(201);
    }
    const before = await db.collection<{ _id: string; ab_test: { auto: Json & { samples: { conversions: number[] } } } }>('links').findOne({ _id: link.id });
    expect(before!.ab_test.auto.winner_index, 'no winner during the warm-up').to.equal(undefined);
    expect(before!.ab_test.auto.samples.conversions).to.deep.equal(converting.map((c) => c.length));

    // The warm-up ends; the next conversion takes the first look.
    const ended = await call('PATCH', `/links/${link.id}`, { ab_test: { enabled: true, variants, auto: { enabled: true, min_sample: 10, warmup_until: new Date().toISOString() } } });
    expect(ended.status).to.equal(200);
    expect((await call('POST', '/conversions', { click_id: byVariant[1]!.at(-1), type: 'signup' })).status).to.equal(201);
    const decided = await until(async () => {
      const reply = await call('GET', `/links/${link.id}`);
      const auto = (reply.body.ab_test as { auto: Json }).auto;
      return auto.winner_index !== undefined ? auto : false;
    }, 20_000, 'a winner declared');
    expect(decided.winner_index).to.equal(1);
    expect(Date.parse(decided.stopped_at as string)).to.be.greaterThan(started);

    for (let i = 0; i < 6; i++) expect((await visit(link.slug)).pathname, 'every visitor goes to the winner').to.equal('/b');
    // More conversions and clicks after the decision change nothing: one link.updated for the winner.
    expect((await call('POST', '/conversions', { click_id: byVariant[0]!.at(-1), type: 'signup' })).status).to.equal(201);
    const updates = await db.collection('events').find({ type: 'link.updated', 'data.id': link.id, 'data.ab_test.winner_index': { $exists: true } }).toArray();
    expect(updates, 'one link.updated for the winner').to.have.length(1);
    expect(updates[0]!.data.ab_test).to.include({ winner_index: 1 });
    await until(() => received.some((r) => r.type === 'link.updated' && ((r.body.data as Json).ab_test as Json | undefined)?.winner_index === 1) || false, 20_000, 'link.updated delivered');

    // The analytics breakdown by A/B variant shows the same conversions per variant.
    const converted = [converting[0]!.length + 1, converting[1]!.length + 1];
    const byVariantRows = await until(async () => {
      const rows = (await call('GET', `/analytics/breakdown?link_id=${link.id}&interval=24h&dimension=ab_variant`)).body.data as Json[];
      const byValue = new Map(rows.map((r) => [r.value, r.conversions as number]));
      return byValue.get('0') === converted[0] && byValue.get('1') === converted[1] ? rows : false;
    }, 20_000, 'conversions per variant in the breakdown');
    expect(byVariantRows.map((r) => r.value).sort()).to.deep.equal(['0', '1']);
  });
});
