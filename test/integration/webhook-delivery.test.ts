import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply } from '../helpers/http.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Infra } from '../../src/main/infra.ts';
import type { WorkerService } from '../../src/main/worker.ts';
import { until } from '../helpers/wait.ts';
import { ENDPOINT_CONCURRENCY } from '../../src/webhooks/delivery.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
}
type Behaviour = (res: ServerResponse, n: number) => void;

const SCHEDULE_MS = [100, 200, 300, 400, 500];
const TIMEOUT_MS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The receiver's side of spec 6.3, written here from the spec alone (node:crypto), not with src/webhooks/signature. */
function signatureMatches(rawBody: string, header: string | undefined, secret: string): boolean {
  const match = /^t=(\d+)((?:,v1=[0-9a-f]{64})+)$/.exec(header ?? '');
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${rawBody}`, 'utf8').digest();
  const given = match[2]!.split(',v1=').slice(1).map((hex) => Buffer.from(hex, 'hex'));
  const fresh = Math.abs(Date.now() / 1000 - Number(match[1])) <= 300;
  return fresh && given.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected));
}

describe('webhook delivery (real NATS, real receiver, api and worker in process)', function () {
  this.timeout(40_000);
  let mongo: TestMongo;
  let env: Record<string, string>;
  let api: RunningApi;
  let workerInfra: Infra;
  let worker: WorkerService;
  let tenants: Tenants;
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];
  const behaviours = new Map<string, Behaviour>();
  const hanging: ServerResponse[] = [];

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: SCHEDULE_MS.map((ms) => `${ms}ms`).join(','),
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    api = await startApi(env);
    ({ infra: workerInfra, worker } = await startWorker(env));
    tenants = await Tenants.open(mongo);
    receiver = createServer((req, res) => {
      const at = performance.now();
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at });
        const n = received.filter((r) => r.path === path).length;
        (behaviours.get(path) ?? ((r) => r.writeHead(204).end()))(res, n);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const res of hanging) res.destroy();
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

  async function anEndpoint(key: string, path: string, events: string[] = ['link.created']): Promise<{ id: string; secret: string }> {
    const res = await call('POST', '/webhooks', key, { url: `${receiverUrl}${path}`, events });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { id: res.body.id as string, secret: res.body.secret as string };
  }

  async function aWorkspaceKey(partnerId: string | null = null): Promise<string> {
    const ws = await tenants.aWorkspace({ plan_id: 'business', partner_id: partnerId });
    return (await tenants.aWorkspaceKey(ws._id)).key;
  }

  async function aLink(key: string): Promise<Json> {
    const res = await call('POST', '/links', key, { url: 'https://example.com/landing' });
    expect(res.status).to.equal(201);
    return res.body;
  }

  const dataOf = (r: Received) => (JSON.parse(r.body) as { data: Json }).data;

  it('delivers link.created signed, with the headers and body of spec 6.2, to the workspace and its partner only', async () => {
    const partner = await tenants.aPartner();
    const partnerKey = (await tenants.aPartnerKey(partner)).key;
    const key = await aWorkspaceKey(partner);
    const own = await anEndpoint(key, '/basic/own');
    const ofPartner = await anEndpoint(partnerKey, '/basic/partner');
    await anEndpoint(await aWorkspaceKey(), '/basic/other-workspace');
    await anEndpoint((await tenants.aPartnerKey(await tenants.aPartner())).key, '/basic/other-partner');
    await anEndpoint(key, '/basic/unsubscribed', ['link.deleted']);

    const link = await aLink(key);
    const [delivery] = await until(() => at('/basic/own').length > 0 && at('/basic/own'), 10_000, 'delivery to the workspace endpoint');
    await until(() => at('/basic/partner').length > 0, 10_000, 'delivery to the partner endpoint');

    const { headers, body } = delivery!;
    expect(headers['content-type']).to.equal('application/json');
    expect(headers['x-service-event']).to.equal('link.created');
    expect(headers['x-service-delivery']).to.match(/^dlv_[0-9A-Za-z]{20}$/);
    expect(headers['x-service-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(signatureMatches(body, headers['x-service-signature'] as string, own.secret), 'signature verifies with the endpoint secret').to.equal(true);
    expect(signatureMatches(body, headers['x-service-signature'] as string, ofPartner.secret), 'not with another secret').to.equal(false);

    const parsed = JSON.parse(body) as Json;
    expect(Object.keys(parsed)).to.deep.equal(['id', 'type', 'created_at', 'data']);
    expect(parsed.id).to.equal(headers['x-service-delivery']);
    expect(parsed.type).to.equal('link.created');
    expect(parsed.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(parsed.data).to.deep.include({ id: link.id, slug: link.slug, url: link.url });
    const events = (await call('GET', '/events', key)).body.data as Json[];
    expect(events.find((e) => e.type === 'link.created')?.created_at, 'created_at is the event time').to.equal(parsed.created_at);

    const partnerDelivery = at('/basic/partner')[0]!;
    expect(signatureMatches(partnerDelivery.body, partnerDelivery.headers['x-service-signature'] as string, ofPartner.secret)).to.equal(true);
    expect(JSON.parse(partnerDelivery.body).id, 'one delivery id per (event, endpoint)').not.to.equal(parsed.id);

    await sleep(500);
    expect(at('/basic/own'), 'exactly once').to.have.length(1);
    for (const path of ['/basic/other-workspace', '/basic/other-partner', '/basic/unsubscribed']) expect(at(path), path).to.have.length(0);
  });

  it('retries a 500 on the schedule, then marks the endpoint failing; re-enabled, it gets the next event, not the missed one', async () => {
    const key = await aWorkspaceKey();
    let answer = 500;
    behaviours.set('/flaky', (res) => res.writeHead(answer, { 'X-Receiver': 'flaky' }).end('oops'));
    const flaky = await anEndpoint(key, '/flaky');
    await anEndpoint(key, '/flaky-witness');

    await aLink(key);
    const attempts = await until(() => at('/flaky').length >= 6 && at('/flaky'), 15_000, 'six attempts');
    const gaps = attempts.slice(1).map((r, i) => r.at - attempts[i]!.at);
    gaps.forEach((gap, i) => expect(gap, `gap before retry ${i + 1}`).to.be.at.least(SCHEDULE_MS[i]!));
    expect(new Set(attempts.map((r) => r.headers['x-service-delivery'])).size, 'every attempt is the same delivery').to.equal(1);
    await until(async () => (await call('GET', `/webhooks/${flaky.id}`, key)).body.status === 'failing', 5000, 'endpoint failing');
    await sleep(SCHEDULE_MS.at(-1)! + 300);
    expect(at('/flaky'), 'no seventh attempt').to.have.length(6);

    const log = (await call('GET', `/webhooks/${flaky.id}/deliveries`, key)).body.data as Json[];
    expect(log.map((row) => row.attempt), 'newest first').to.deep.equal([6, 5, 4, 3, 2, 1]);
    for (const row of log) {
      expect(row).to.deep.include({ outcome: 'failed', event_type: 'link.created' });
      expect((row.response as Json).status).to.equal(500);
      expect((row.response as Json).body).to.equal('oops');
      expect((row.response as { headers: Json }).headers['x-receiver']).to.equal('flaky');
      expect((row.request as Json).body).to.equal(attempts[0]!.body);
    }
    expect(log[0]!.next_retry_at, 'none after the last').to.equal(null);
    expect(log[5]!.next_retry_at).to.be.a('string');

    // While failing: a new event reaches the witness, not the failing endpoint.
    const missed = await aLink(key);
    await until(() => at('/flaky-witness').some((r) => dataOf(r).id === missed.id), 10_000, 'witness got the second event');
    await sleep(300);
    expect(at('/flaky'), 'nothing while failing').to.have.length(6);
    const scrape = () => fetch(`http://127.0.0.1:${worker.port()}/metrics`).then((r) => r.text());
    expect(await scrape()).to.match(/linkplane_webhook_endpoints_failing\{[^}]*\} 1\n/);

    expect((await call('PATCH', `/webhooks/${flaky.id}`, key, { status: 'active' })).body.status).to.equal('active');
    answer = 200;
    const next = await aLink(key);
    await until(() => at('/flaky').length === 7, 10_000, 'the next event after re-enabling');
    await until(() => at('/flaky-witness').some((r) => dataOf(r).id === next.id), 10_000, 'witness got the third event');
    await sleep(300);
    expect(at('/flaky').slice(6).map((r) => dataOf(r).id), 'the missed event is not replayed').to.deep.equal([next.id]);
    const first = ((await call('GET', `/webhooks/${flaky.id}/deliveries?limit=1`, key)).body.data as Json[])[0]!;
    expect(first).to.deep.include({ attempt: 1, outcome: 'succeeded', next_retry_at: null });

    const metrics = await scrape();
    expect(metrics).to.match(/linkplane_webhook_endpoints_failing\{[^}]*\} 0\n/);
    expect(metrics).to.match(/linkplane_webhook_deliveries_total\{outcome="failed",attempt="6"[^}]*\} [1-9]/);
    expect(metrics).to.match(/linkplane_webhook_delivery_duration_seconds_count\{[^}]*outcome="succeeded"[^}]*\} [1-9]/);
    expect(metrics).to.match(/linkplane_webhook_consumer_pending_messages\{consumer="webhook-delivery"/);
  });

  it('counts a 3xx as a failure (the redirect is not followed) and retries it', async () => {
    const key = await aWorkspaceKey();
    behaviours.set('/moved', (res) => res.writeHead(302, { Location: `${receiverUrl}/moved-target` }).end());
    const moved = await anEndpoint(key, '/moved');
    await aLink(key);
    await until(() => at('/moved').length >= 2, 10_000, 'a retry after the 302');
    const log = (await call('GET', `/webhooks/${moved.id}/deliveries`, key)).body.data as Json[];
    expect(log.at(-1)).to.deep.include({ attempt: 1, outcome: 'failed' });
    expect((log.at(-1)!.response as Json).status).to.equal(302);
    const sentIds = at('/moved').map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(new Set(sentIds).size, 'every attempt carries the same delivery id').to.equal(1);
    expect(log.map((entry) => entry.id), 'the log shows the delivery id the receiver saw').to.deep.equal(log.map(() => sentIds[0]));
    expect(at('/moved-target'), 'the redirect is not followed').to.have.length(0);
    expect((await call('DELETE', `/webhooks/${moved.id}`, key)).status).to.equal(204);
  });

  it('counts a receiver that does not answer within WEBHOOK_TIMEOUT_MS as a failure, and retries', async () => {
    const key = await aWorkspaceKey();
    behaviours.set('/slow', (res, n) => {
      if (n === 1) hanging.push(res);
      else res.writeHead(200).end('ok');
    });
    const slow = await anEndpoint(key, '/slow');
    await aLink(key);
    const log = await until(async () => {
      const rows = (await call('GET', `/webhooks/${slow.id}/deliveries`, key)).body.data as Json[];
      return rows.length === 2 && rows;
    }, 10_000, 'two attempts logged');
    expect(log.map((row) => [row.attempt, row.outcome])).to.deep.equal([[2, 'succeeded'], [1, 'failed']]);
    expect((log[1]!.response as Json).status, 'no answer').to.equal(null);
    expect(log[1]!.duration_ms).to.be.at.least(TIMEOUT_MS - 5);
    expect((log[0]!.response as Json).status).to.equal(200);
  });

  it('applies an endpoint change to the next delivery, though the worker caches endpoints: secret rotation, URL, deletion', async () => {
    const key = await aWorkspaceKey();
    const endpoint = await anEndpoint(key, '/changes/before');
    const witness = '/changes/witness';
    await anEndpoint(key, witness);
    const deliveredTo = (path: string, link: Json) => until(() => at(path).find((r) => dataOf(r).id === link.id) ?? false, 10_000, `${path} got ${link.id as string}`);

    const first = await deliveredTo('/changes/before', await aLink(key));
    expect(signatureMatches(first.body, first.headers['x-service-signature'] as string, endpoint.secret)).to.equal(true);

    const rotated = await call('POST', `/webhooks/${endpoint.id}/rotate-secret`, key);
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
    const second = await deliveredTo('/changes/before', await aLink(key));
    expect(signatureMatches(second.body, second.headers['x-service-signature'] as string, rotated.body.secret as string), 'signed with the new secret').to.equal(true);

    expect((await call('PATCH', `/webhooks/${endpoint.id}`, key, { url: `${receiverUrl}/changes/after` })).status).to.equal(200);
    await deliveredTo('/changes/after', await aLink(key));

    expect((await call('DELETE', `/webhooks/${endpoint.id}`, key)).status).to.equal(204);
    const last = await aLink(key);
    await deliveredTo(witness, last);
    await sleep(300);
    expect([...at('/changes/before'), ...at('/changes/after')].filter((r) => dataOf(r).id === last.id), 'nothing after the deletion').to.have.length(0);
  });

  it('numbers a delivery published again (beyond the de-duplication window) as the next attempt, not attempt 1 again', async () => {
    const key = await aWorkspaceKey();
    const endpoint = await anEndpoint(key, '/republished');
    await aLink(key);
    const [first] = await until(() => at('/republished').length > 0 && at('/republished'), 10_000, 'first delivery');
    const sent = JSON.parse(first!.body) as { id: string; type: string; created_at: string; data: Json };
    const logged = async () => (await call('GET', `/webhooks/${endpoint.id}/deliveries`, key)).body.data as Json[];
    await until(async () => (await logged()).length === 1, 5000, 'attempt 1 logged');
    // The same delivery as a new message (another message id): what a fan-out repeated after the window would write.
    const event = { id: ((await logged())[0]!.event_id as string), type: sent.type, created_at: sent.created_at, workspace_id: null, partner_id: null, data: sent.data };
    const { nats } = workerInfra;
    await nats.js.publish(nats.subjects.delivery(endpoint.id), JSON.stringify({ delivery_id: sent.id, webhook_id: endpoint.id, event }), { msgID: `again:${sent.id}` });
    const log = await until(async () => {
      const rows = await logged();
      return rows.length === 2 && rows;
    }, 10_000, 'the second attempt logged');
    expect(log.map((row) => [row.attempt, row.outcome, row.id])).to.deep.equal([[2, 'succeeded', sent.id], [1, 'succeeded', sent.id]]);
    expect(at('/republished').map((r) => r.headers['x-service-delivery'])).to.deep.equal([sent.id, sent.id]);
  });

  it('gives one endpoint that does not answer at most its share of the delivery slots; the others are delivered meanwhile', async () => {
    const key = await aWorkspaceKey();
    let open = 0;
    let maxOpen = 0;
    behaviours.set('/stuck', (res) => {
      hanging.push(res);
      open++;
      maxOpen = Math.max(maxOpen, open);
      res.on('close', () => open--);
    });
    const stuck = await anEndpoint(key, '/stuck');
    await anEndpoint(key, '/unstuck');
    const links = await Promise.all(Array.from({ length: 3 * ENDPOINT_CONCURRENCY }, () => aLink(key)));
    await until(() => links.every((link) => at('/unstuck').some((r) => dataOf(r).id === link.id)), 15_000, 'every link delivered to the answering endpoint');
    expect(maxOpen, 'deliveries open at once to the endpoint that does not answer').to.be.within(1, ENDPOINT_CONCURRENCY);
    expect((await call('DELETE', `/webhooks/${stuck.id}`, key)).status).to.equal(204);
  });

  it('sends a signed test delivery with data {test: true} to that endpoint only', async () => {
    const key = await aWorkspaceKey();
    const target = await anEndpoint(key, '/test/target', ['link.updated', 'link.created']);
    await anEndpoint(key, '/test/sibling', ['link.updated', 'link.created']);
    expect((await call('POST', `/webhooks/${target.id}/test`, await aWorkspaceKey())).status, 'another tenant').to.equal(404);

    const res = await call('POST', `/webhooks/${target.id}/test`, key);
    expect(res.status).to.equal(202);
    expect(res.body.delivery_id).to.match(/^dlv_[0-9A-Za-z]{20}$/);
    const [delivery] = await until(() => at('/test/target').length > 0 && at('/test/target'), 10_000, 'test delivery');
    const body = JSON.parse(delivery!.body) as Json;
    expect(body).to.deep.include({ id: res.body.delivery_id, type: 'link.updated', data: { test: true } });
    expect(delivery!.headers['x-service-delivery']).to.equal(res.body.delivery_id);
    expect(signatureMatches(delivery!.body, delivery!.headers['x-service-signature'] as string, target.secret)).to.equal(true);
    const log = await until(async () => {
      const rows = (await call('GET', `/webhooks/${target.id}/deliveries`, key)).body.data as Json[];
      return rows.length > 0 && rows;
    }, 5000, 'logged');
    expect(log[0]).to.deep.include({ outcome: 'succeeded', attempt: 1, event_type: 'link.updated' });
    await sleep(400);
    expect(at('/test/sibling'), 'no other endpoint').to.have.length(0);
    expect(at('/test/target')).to.have.length(1);
  });
});

describe('WEBHOOK_RETRY_SCHEDULE and WEBHOOK_TIMEOUT_MS', () => {
  const load = (env: Record<string, string>) => loadConfig('worker', { NODE_ENV: 'test', MONGODB_URI: 'mongodb://127.0.0.1:27017', ...env });

  it('defaults to spec 6.4 (1m, 5m, 30m, 2h, 12h) and 10 s', () => {
    expect(load({}).webhookDelivery.retryScheduleMs).to.deep.equal([60_000, 300_000, 1_800_000, 7_200_000, 43_200_000]);
    expect(load({}).webhookDelivery.timeoutMs).to.equal(10_000);
  });

  it('reads ms, s, m and h', () => {
    expect(load({ WEBHOOK_RETRY_SCHEDULE: '1ms, 2s,3m,4h' }).webhookDelivery.retryScheduleMs).to.deep.equal([1, 2000, 180_000, 14_400_000]);
  });

  for (const bad of [',', '0ms', '5', '1d', '1m,,2m', '-1s', Array.from({ length: 11 }, () => '1s').join(',')]) {
    it(`refuses "${bad.length > 20 ? 'eleven entries' : bad}", naming the variable`, () => {
      expect(() => load({ WEBHOOK_RETRY_SCHEDULE: bad })).to.throw(/WEBHOOK_RETRY_SCHEDULE/);
    });
  }
});
