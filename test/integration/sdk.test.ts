// The SDK (sdk/) against a live api and worker: real HTTP, the real rate limiter, real webhook deliveries to a real
// receiver. Also checks that the committed generated types are those the api's OpenAPI document gives today.
import { expect } from 'chai';
import { startWebhookReceiver, type Received, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { readFileSync } from 'node:fs';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { until } from '../helpers/wait.ts';
import { freePort } from '../helpers/processes.ts';
import {
  Linkplane, LinkplaneConnectionError, LinkplaneError, RateLimitedError, ValidationError, NotFoundError, verifyWebhook,
  WebhookVerificationError, type RetryEvent, type WebhookEvent,
} from '../../sdk/src/index.ts';
import { GENERATED_FILE, generateSdkTypes } from '../../scripts/sdk-generate.ts';

describe('SDK against a live api', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenants: Tenants;
  let receiver: WebhookReceiver;
  let receiverUrl: string;
  let received: Received[];

  before(async () => {
    mongo = await startTestMongo();
    const env = testEnv(mongo, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '200ms,200ms', WEBHOOK_TIMEOUT_MS: '2000' });
    api = await startApi(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    receiver = await startWebhookReceiver();
    ({ url: receiverUrl, received } = receiver);
  });

  after(async () => {
    await receiver?.close();
    await worker.stop();
    await api.stop();
    await tenants.close();
    await mongo.stop();
  });

  async function aClient(options: Partial<ConstructorParameters<typeof Linkplane>[0]> = {}): Promise<{ lp: Linkplane; keyId: string }> {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const { id, key } = await tenants.aWorkspaceKey(ws._id);
    return { lp: new Linkplane({ apiKey: key, baseUrl: api.url, ...options }), keyId: id };
  }

  it('generated types are those of the OpenAPI document the api serves (run `npm run sdk:generate` when this fails)', async () => {
    const document: unknown = await (await fetch(`${api.url}/v1/openapi.json`)).json();
    expect(await generateSdkTypes(document) === readFileSync(GENERATED_FILE, 'utf8'), `${GENERATED_FILE} is stale`).to.equal(true);
  });

  it('creates a link with an Idempotency-Key of its own, reads it back and its clicks', async () => {
    const sent: Request[] = [];
    const { lp } = await aClient({ fetch: (request) => { sent.push(request.clone()); return fetch(request); } });
    const link = await lp.links.create({ url: 'https://example.com/launch', title: 'Launch' });
    expect(link.id).to.match(/^lnk_/);
    expect(link.url).to.equal('https://example.com/launch');
    expect(sent[0]!.method).to.equal('POST');
    const key = sent[0]!.headers.get('Idempotency-Key');
    expect(key, 'a mutation carries an Idempotency-Key').to.match(/^[0-9a-f-]{36}$/);
    expect(sent[0]!.headers.get('User-Agent')).to.match(/^linkplane-sdk\//);

    expect((await lp.links.get(link.id)).short_url).to.equal(link.short_url);
    const summary = await lp.analytics.summary({ link_id: link.id, interval: '7d' });
    expect(summary.clicks).to.equal(0);

    // The same key with the same request is answered by the replay: one link, the same id.
    const again = await lp.links.create({ url: 'https://example.com/launch', title: 'Launch' }, { idempotencyKey: key! });
    expect(again.id).to.equal(link.id);
    const ids = (await lp.links.list().toArray()).map((l) => l.id);
    expect(ids).to.deep.equal([link.id]);
  });

  it('walks every page of a list with the async iterator', async () => {
    const { lp } = await aClient();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await lp.links.create({ url: `https://example.com/p/${i}` })).id);
    const seen: string[] = [];
    for await (const link of lp.links.list({ limit: 2 })) seen.push(link.id);
    expect([...seen].sort()).to.deep.equal([...created].sort());
    expect(new Set(seen).size).to.equal(5);
    const pages: number[] = [];
    for await (const page of lp.paginate('/links', { query: { limit: 2 } }).pages()) pages.push(page.data.length);
    expect(pages).to.deep.equal([2, 2, 1]);
  });

  it('throws a typed ValidationError with the fields on a 422, and NotFoundError on a 404', async () => {
    const { lp } = await aClient();
    const error = await lp.links.create({ url: 'not a url' }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(ValidationError);
    const refusal = error as ValidationError;
    expect(refusal).to.be.instanceOf(LinkplaneError);
    expect(refusal.status).to.equal(422);
    expect(refusal.code).to.equal('validation_failed');
    expect(refusal.is('validation_failed')).to.equal(true);
    expect(refusal.details.map((d) => d.path)).to.include('url');
    expect(refusal.docUrl).to.match(/validation_failed/);
    expect(refusal.requestId).to.be.a('string');

    const missing = await lp.links.get('lnk_doesnotexist').then(() => null, (e: unknown) => e);
    expect(missing).to.be.instanceOf(NotFoundError);
    expect((missing as NotFoundError).code).to.equal('not_found');
    expect((missing as NotFoundError).status).to.equal(404);
  });

  /**
   * The key's one-minute window (the rate limiter's document, which every api replica shares) is filled by
   * requests made `secondsAgo` seconds ago: the api refuses the next request with 429 and a Retry-After of the
   * seconds those requests take to leave the window (a few, and at most 60 - secondsAgo).
   */
  async function fillWindow(keyId: string, secondsAgo: number): Promise<void> {
    const second = Math.floor(Date.now() / 1000) - secondsAgo;
    await tenants.client.db(mongo.dbName).collection<{ _id: string }>('rate_limits').updateOne(
      { _id: keyId },
      { $set: { b: { [`s${second}`]: 1_000_000 }, expires_at: new Date(Date.now() + 120_000) } },
      { upsert: true },
    );
  }

  it('retries a 429 rate_limited after the Retry-After the api gives, and succeeds', async () => {
    const retries: RetryEvent[] = [];
    const { lp, keyId } = await aClient({ onRetry: (event) => retries.push(event) });
    const link = await lp.links.create({ url: 'https://example.com/limited' });
    // 52 s ago: a Retry-After of about 8 s, with room for a slow machine between this write and the request.
    await fillWindow(keyId, 52);
    const started = Date.now();
    const read = await lp.links.get(link.id);
    expect(read.id).to.equal(link.id);
    expect(retries).to.have.length(1);
    expect(retries[0]).to.deep.include({ attempt: 1, method: 'GET', status: 429, code: 'rate_limited', retryAfter: true });
    expect(retries[0]!.delayMs).to.be.within(1000, 8000);
    // Honoured: the retry was not sent before the wait asked for.
    expect(Date.now() - started).to.be.at.least(retries[0]!.delayMs);
  });

  it('does not wait for a Retry-After longer than maxRetryDelayMs: a RateLimitedError at once', async () => {
    const retries: RetryEvent[] = [];
    const { lp, keyId } = await aClient({ onRetry: (event) => retries.push(event), maxRetryDelayMs: 5000 });
    await fillWindow(keyId, 0);
    const error = await lp.links.create({ url: 'https://example.com/x' }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(RateLimitedError);
    expect((error as RateLimitedError).status).to.equal(429);
    expect((error as RateLimitedError).retryAfterSeconds).to.be.greaterThan(5);
    expect(retries).to.deep.equal([]);
  });

  it('gives up on an unreachable api with a LinkplaneConnectionError after its retries', async () => {
    const retries: RetryEvent[] = [];
    const port = await freePort();
    const lp = new Linkplane({ apiKey: 'lp_live_x', baseUrl: `http://127.0.0.1:${port}`, initialBackoffMs: 5, onRetry: (e) => retries.push(e) });
    const error = await lp.links.get('lnk_x').then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(LinkplaneConnectionError);
    expect(retries.map((r) => [r.attempt, r.status])).to.deep.equal([[1, null], [2, null]]);
  });

  for (const scheme of ['linkplane', 'standard'] as const) {
    it(`verifies a real delivery of a \`${scheme}\` endpoint, and refuses it tampered or with another secret`, async () => {
      const { lp } = await aClient();
      const path = `/sdk/${scheme}`;
      const endpoint = await lp.webhooks.create({ url: `${receiverUrl}${path}`, events: ['link.created'], signature_scheme: scheme });
      expect(endpoint.signature_scheme).to.equal(scheme);
      const link = await lp.links.create({ url: 'https://example.com/hooked' });
      const delivery = await until(() => received.find((r) => r.path === path) ?? false, 15_000, 'the delivery');

      const event: WebhookEvent = verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
      expect(event.type).to.equal('link.created');
      if (event.type !== 'link.created') throw new Error('unreachable');
      expect(event.data.id).to.equal(link.id);
      // A Headers object (what a fetch-style server hands over) works as well as node's header record.
      const headers = new Headers(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)]));
      expect(verifyWebhook(Buffer.from(delivery.body), headers, endpoint.secret).type).to.equal('link.created');

      const refusal = (body: string, secret: string, now?: number): string | null => {
        try {
          verifyWebhook(body, delivery.headers, secret, now === undefined ? {} : { now });
          return null;
        } catch (error) {
          expect(error).to.be.instanceOf(WebhookVerificationError);
          return (error as WebhookVerificationError).reason;
        }
      };
      expect(refusal(delivery.body.replace('hooked', 'hacked'), endpoint.secret)).to.equal('no_matching_signature');
      const other = await lp.webhooks.create({ url: `${receiverUrl}/sdk/other`, events: ['link.deleted'], signature_scheme: scheme });
      expect(refusal(delivery.body, other.secret)).to.equal('no_matching_signature');
      expect(refusal(delivery.body, endpoint.secret, Math.floor(Date.now() / 1000) + 3600)).to.equal('timestamp_too_old');
    });
  }
});
