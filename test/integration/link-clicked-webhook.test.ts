// Clicks streamed to a webhook receiver: visits answered by the real redirect reach a real HTTP receiver as signed
// `link.clicked` deliveries carrying the visitor and the decision, in batches, every click once; the event is opt-in.
import { expect } from 'chai';
import { startWebhookReceiver, type Received, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, startWorker, type RunningApi, type RunningRedirect, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, type Json, type Reply } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { verifySignature } from '../../src/webhooks/signature.ts';
import { EVENT_TYPES, STREAMED_EVENTS } from '../../src/events/event-types.ts';

const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const BATCH = 100;

describe('link.clicked webhook deliveries (api, redirect, worker, real receiver)', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let worker: RunningWorker;
  let tenants: Tenants;
  let receiver: WebhookReceiver;
  let receiverUrl: string;
  let received: Received[];

  before(async () => {
    mongo = await startTestMongo();
    const { env } = await shortLinkEnv(mongo, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '200ms,200ms',
      WEBHOOK_CLICK_BATCH_SIZE: String(BATCH),
      WEBHOOK_CLICK_BATCH_WAIT_MS: '500',
      LINK_PREVIEW_INTERVAL_MS: '3600000',
    });
    api = await startApi(env);
    redirect = await startRedirect(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    receiver = await startWebhookReceiver();
    ({ url: receiverUrl, received } = receiver);
  });

  after(async () => {
    await receiver?.close();
    await worker.stop();
    await redirect.stop();
    await api.stop();
    await tenants.close();
    await mongo.stop();
  });

  const call = (key: string, method: string, path: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, body });
  const at = (path: string) => received.filter((r) => r.path === path);
  const clicksIn = (r: Received) => ((JSON.parse(r.body) as { data: { clicks: Json[] } }).data.clicks);

  async function aWorkspaceKey(): Promise<string> {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    return (await tenants.aWorkspaceKey(ws._id)).key;
  }

  async function anEndpoint(key: string, path: string, events: readonly string[]): Promise<string> {
    const res = await call(key, 'POST', '/webhooks', { url: `${receiverUrl}${path}`, events });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.secret as string;
  }

  async function visit(shortUrl: string, n: number, concurrency = 16): Promise<void> {
    let next = 0;
    const one = async () => {
      while (next < n) {
        next++;
        const res = await fetch(shortUrl, { redirect: 'manual', headers: { 'user-agent': BROWSER, 'accept-language': 'fr-FR,fr;q=0.9' } });
        await res.body?.cancel();
        expect(res.status).to.equal(302);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, one));
  }

  it('delivers a click within seconds, signed, with the visitor profile and the decision; an endpoint of every other event gets none', async () => {
    const key = await aWorkspaceKey();
    const secret = await anEndpoint(key, '/clicks/one', ['link.clicked']);
    await anEndpoint(key, '/everything-else', EVENT_TYPES.filter((t) => !(STREAMED_EVENTS as readonly string[]).includes(t) && !t.startsWith('workspace.') && !t.startsWith('payment.')));
    const link = (await call(key, 'POST', '/links', { url: 'https://example.com/one' })).body;
    await visit(link.short_url as string, 1, 1);

    const delivery = await until(() => at('/clicks/one')[0] ?? false, 15_000, 'the click delivered');
    expect(delivery.headers['x-service-event']).to.equal('link.clicked');
    expect(verifySignature(delivery.body, delivery.headers['x-service-signature'] as string, secret).valid).to.equal(true);
    const body = JSON.parse(delivery.body) as Json;
    expect(body.type).to.equal('link.clicked');
    expect(body.id).to.match(/^dlv_/);
    const [click] = clicksIn(delivery);
    expect(click).to.include({ link_id: link.id, slug: link.slug, outcome: 'redirect', destination: 'https://example.com/one' });
    expect(click!.decision).to.deep.equal({ step: 'url', rule_id: null, workspace_rule: false, targeting_index: null, variant_index: null, destination_id: null, rotator_fallback: false });
    expect(click!.visitor).to.include({ device: 'desktop', os: 'windows', browser: 'Chrome', language: 'fr-fr', visitor_type: 'human', verified_bot: false, visit: 'first' });

    // The link.created event reached the other endpoint: it is live, and still got no click.
    await until(() => at('/everything-else').length > 0, 10_000, 'the other endpoint got link.created');
    expect(at('/everything-else').every((r) => r.headers['x-service-event'] !== 'link.clicked')).to.equal(true);
  });

  it('holds the batching under a burst: 500 clicks arrive in a few deliveries of at most the batch size, every click exactly once', async () => {
    const key = await aWorkspaceKey();
    await anEndpoint(key, '/clicks/burst', ['link.clicked']);
    const link = (await call(key, 'POST', '/links', { url: 'https://example.com/burst' })).body;
    await visit(link.short_url as string, 500);

    const ids = await until(() => {
      const all = at('/clicks/burst').flatMap(clicksIn).map((c) => c.id as string);
      return all.length >= 500 ? all : false;
    }, 60_000, '500 clicks delivered');
    // Nothing more trickles in after the last batch.
    await new Promise((r) => setTimeout(r, 1500));
    const deliveries = at('/clicks/burst');
    const all = deliveries.flatMap(clicksIn);
    expect(all).to.have.length(500);
    expect(new Set(ids).size).to.equal(500);
    expect(all.every((c) => c.link_id === link.id)).to.equal(true);
    for (const d of deliveries) expect(clicksIn(d).length).to.be.within(1, BATCH);
    // 500 clicks at 100 a delivery: 5 at best; a batch also leaves when its wait ends, so a few more, never hundreds.
    expect(deliveries.length).to.be.within(5, 25);
  });

  it('refuses link.clicked to a partner endpoint, whose clients\' clicks are their own', async () => {
    const partnerId = await tenants.aPartner();
    const { key } = await tenants.aPartnerKey(partnerId);
    expectInvalid(await call(key, 'POST', '/webhooks', { url: `${receiverUrl}/partner`, events: ['link.created', 'link.clicked'] }), 'events[1]');
  });

  it('keeps streamed clicks out of the event log', async () => {
    const key = await aWorkspaceKey();
    expectInvalid(await call(key, 'GET', '/events?type=link.clicked'), 'type');
  });
});
