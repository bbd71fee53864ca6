// Per-endpoint signature schemes: `standard` deliveries are verified here by the `standardwebhooks` library as a
// Standard Webhooks receiver would, and `linkplane` ones by Stripe's library, both on a real HTTP receiver.
import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply } from '../helpers/http.ts';
import type { Infra } from '../../src/main/infra.ts';
import type { WorkerService } from '../../src/main/worker.ts';
import { until } from '../helpers/wait.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const STANDARD_SECRET = /^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const stripe = new Stripe('sk_test_unused');

/** What a Standard Webhooks receiver does: the library verifies the raw body against the three headers. */
function standardVerifies(r: Received, secret: string): boolean {
  try {
    new StandardWebhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

function stripeVerifies(r: Received, secret: string): boolean {
  try {
    stripe.webhooks.constructEvent(r.body, r.headers['x-service-signature'] as string, secret);
    return true;
  } catch {
    return false;
  }
}

describe('webhook signature schemes (real NATS, real receiver, standardwebhooks and Stripe verifying)', function () {
  this.timeout(40_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let workerInfra: Infra;
  let worker: WorkerService;
  let tenants: Tenants;
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];
  /** Per path, the status to answer for the n-th request (204 when absent). */
  const statuses = new Map<string, number[]>();

  before(async () => {
    mongo = await startTestMongo();
    const env = testEnv(mongo, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '200ms,200ms', WEBHOOK_TIMEOUT_MS: '2000' });
    api = await startApi(env);
    ({ infra: workerInfra, worker } = await startWorker(env));
    tenants = await Tenants.open(mongo);
    receiver = createServer((req, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const n = received.filter((r) => r.path === path).length;
        res.writeHead(statuses.get(path)?.[n - 1] ?? 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await worker.stop();
    await workerInfra.close();
    await api.stop();
    await tenants.close();
    await mongo.stop();
  });

  const call = (method: string, path: string, key: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, body });
  const at = (path: string) => received.filter((r) => r.path === path);
  const dataOf = (r: Received) => (JSON.parse(r.body) as { data: Json }).data;

  async function aKey(): Promise<string> {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    return (await tenants.aWorkspaceKey(ws._id)).key;
  }

  async function anEndpoint(key: string, path: string, scheme?: string): Promise<{ id: string; secret: string; body: Json }> {
    const res = await call('POST', '/webhooks', key, { url: `${receiverUrl}${path}`, events: ['link.created'], ...(scheme ? { signature_scheme: scheme } : {}) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { id: res.body.id as string, secret: res.body.secret as string, body: res.body };
  }

  async function deliveredLink(key: string, path: string): Promise<Received> {
    const res = await call('POST', '/links', key, { url: 'https://example.com/landing' });
    expect(res.status).to.equal(201);
    return until(() => at(path).find((r) => dataOf(r).id === res.body.id) ?? false, 10_000, `${path} got the link`);
  }

  it('signs a `standard` endpoint\'s deliveries so the standardwebhooks library verifies them, with its base64 secret only', async () => {
    const key = await aKey();
    const endpoint = await anEndpoint(key, '/std/basic', 'standard');
    expect(endpoint.secret).to.match(STANDARD_SECRET);
    expect(endpoint.body.signature_scheme).to.equal('standard');
    expect((await call('GET', `/webhooks/${endpoint.id}`, key)).body.signature_scheme).to.equal('standard');
    const other = await anEndpoint(key, '/std/other', 'standard');

    const delivery = await deliveredLink(key, '/std/basic');
    expect(delivery.headers['webhook-id']).to.equal((JSON.parse(delivery.body) as Json).id);
    expect(delivery.headers['webhook-timestamp']).to.match(/^\d+$/);
    expect(delivery.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(delivery.headers['x-service-signature'], 'no linkplane signature').to.equal(undefined);
    expect(standardVerifies(delivery, endpoint.secret), 'verified with the endpoint secret').to.equal(true);
    expect(standardVerifies(delivery, other.secret), 'not with another endpoint secret').to.equal(false);
    expect(standardVerifies({ ...delivery, body: delivery.body.replace('"link.created"', '"link.deleted"') }, endpoint.secret), 'not with a changed body').to.equal(false);
  });

  it('keeps `linkplane` the default, still verified by Stripe\'s constructEvent and not by a Standard Webhooks receiver', async () => {
    const key = await aKey();
    const endpoint = await anEndpoint(key, '/lp/basic');
    expect(endpoint.body.signature_scheme).to.equal('linkplane');
    expect(endpoint.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    const delivery = await deliveredLink(key, '/lp/basic');
    expect(delivery.headers['x-service-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(delivery.headers['webhook-signature']).to.equal(undefined);
    expect(stripeVerifies(delivery, endpoint.secret)).to.equal(true);
  });

  it('signs the test delivery and every retry in the endpoint\'s scheme', async () => {
    const key = await aKey();
    const endpoint = await anEndpoint(key, '/std/test', 'standard');
    statuses.set('/std/test', [500, 204]);
    const res = await call('POST', `/webhooks/${endpoint.id}/test`, key);
    expect(res.status).to.equal(202);
    const attempts = await until(() => at('/std/test').length === 2 && at('/std/test'), 10_000, 'the test delivery and its retry');
    for (const attempt of attempts) {
      expect(attempt.headers['webhook-id']).to.equal(res.body.delivery_id);
      expect(standardVerifies(attempt, endpoint.secret)).to.equal(true);
    }
    expect(dataOf(attempts[0]!)).to.deep.equal({ test: true });
  });

  it('rotates a `standard` secret to a new base64 one; during the grace period each secret verifies alone', async () => {
    const key = await aKey();
    const endpoint = await anEndpoint(key, '/std/rotate', 'standard');
    const rotated = await call('POST', `/webhooks/${endpoint.id}/rotate-secret`, key);
    expect(rotated.status).to.equal(200);
    const secret = rotated.body.secret as string;
    expect(secret).to.match(STANDARD_SECRET).and.not.equal(endpoint.secret);
    const delivery = await deliveredLink(key, '/std/rotate');
    expect((delivery.headers['webhook-signature'] as string).split(' ')).to.have.length(2);
    expect(standardVerifies(delivery, secret), 'new secret').to.equal(true);
    expect(standardVerifies(delivery, endpoint.secret), 'previous secret').to.equal(true);
  });

  it('switches scheme on PATCH with a new secret in the new format, returned once; the old secret stops at once', async () => {
    const key = await aKey();
    const endpoint = await anEndpoint(key, '/switch');
    const toStandard = await call('PATCH', `/webhooks/${endpoint.id}`, key, { signature_scheme: 'standard' });
    expect(toStandard.status, JSON.stringify(toStandard.body)).to.equal(200);
    expect(toStandard.body.signature_scheme).to.equal('standard');
    expect(toStandard.body.secret).to.match(STANDARD_SECRET);
    expect(toStandard.body.previous_secret_expires_at).to.equal(null);
    const standard = await deliveredLink(key, '/switch');
    expect(standardVerifies(standard, toStandard.body.secret as string)).to.equal(true);
    expect(standard.headers['x-service-signature']).to.equal(undefined);

    const same = await call('PATCH', `/webhooks/${endpoint.id}`, key, { signature_scheme: 'standard', name: 'unchanged scheme' });
    expect(same.status).to.equal(200);
    expect(same.body, 'no new secret when the scheme does not change').to.not.have.property('secret');

    const back = await call('PATCH', `/webhooks/${endpoint.id}`, key, { signature_scheme: 'linkplane' });
    expect(back.body.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    const linkplane = await deliveredLink(key, '/switch');
    expect(stripeVerifies(linkplane, back.body.secret as string)).to.equal(true);
    expect(stripeVerifies(linkplane, endpoint.secret), 'the first secret no longer signs').to.equal(false);
  });

  it('refuses an unknown scheme with a validation error naming the field', async () => {
    const key = await aKey();
    const res = await call('POST', '/webhooks', key, { url: `${receiverUrl}/x`, events: ['link.created'], signature_scheme: 'svix' });
    expect(res.status).to.equal(422);
    expect((res.body.error as Json).code).to.equal('validation_failed');
    expect(JSON.stringify(res.body.error)).to.contain('signature_scheme');
    const endpoint = await anEndpoint(key, '/y');
    expect((await call('PATCH', `/webhooks/${endpoint.id}`, key, { signature_scheme: 'v2' })).status).to.equal(422);
  });
});
