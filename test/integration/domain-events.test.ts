import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startWorker, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { connectNats, type Nats } from '../../src/platform/nats.ts';
import { CacheBus, type Invalidation } from '../../src/platform/cache-bus.ts';
import { newId } from '../../src/platform/ids.ts';
import { DomainDirectory } from '../../src/links/domains.ts';
import { SecretBox } from '../../src/webhooks/secret-box.ts';
import { newEndpointDoc } from '../../src/webhooks/webhook.service.ts';
import { DOMAIN_EVENTS_DURABLE, domainMessageId, type DomainMessage } from '../../src/domains/domain-events.ts';
import type { DomainDoc } from '../../src/domains/domain.store.ts';
import type { EventDoc } from '../../src/events/event.store.ts';
import type { WebhookDoc } from '../../src/webhooks/webhook.store.ts';
import { until } from '../helpers/wait.ts';

describe('domain events: DOMAINS messages handled by the worker (real NATS)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let tenants: Tenants;
  let running: RunningWorker;
  /** The operator's side: its own connection publishing with message ids, and listening to cache invalidations. */
  let operator: Nats;
  let receiver: Server;
  let receiverUrl: string;
  const received: Array<{ path: string; body: { type: string; data: Record<string, unknown> } }> = [];
  const invalidations: Invalidation[] = [];

  before(async () => {
    mongo = await startTestMongo();
    tenants = await Tenants.open(mongo);
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as (typeof received)[number]['body'] });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const env = testEnv(mongo, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    running = await startWorker(env);
    const logger = pino({ level: 'silent' });
    operator = await connectNats({ url: env.NATS_URL!, prefix: env.NATS_PREFIX!, name: 'fake-operator', logger });
    new CacheBus(operator, logger).on((message) => invalidations.push(message));
    await operator.nc.flush();
  });

  after(async () => {
    await operator.drain();
    await running.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await tenants.close();
    await mongo.stop();
  });

  const db = () => tenants.client.db(mongo.dbName);
  const domainDoc = async (id: string) => (await db().collection<DomainDoc>('domains').findOne({ _id: id }))!;
  const eventsOf = (id: string) => db().collection<EventDoc>('events').find({ 'data.id': id }).sort({ created_at: 1, _id: 1 }).toArray();

  /** A workspace (of a partner) with one custom domain waiting for DNS, written as the Domains API writes it. */
  async function aPendingDomain(): Promise<{ workspaceId: string; partnerId: string; domain: DomainDoc }> {
    const partnerId = await tenants.aPartner();
    const workspace = await tenants.aWorkspace({ partner_id: partnerId });
    const now = new Date();
    const domain: DomainDoc = {
      _id: newId('dom'),
      workspace_id: workspace._id,
      hostname: `links.${newId('dom').slice(4).toLowerCase()}.com`,
      status: 'pending_verification',
      verification_token: 'token',
      records: [],
      error: null,
      created_at: now,
      updated_at: now,
      activated_at: null,
    };
    await db().collection<DomainDoc>('domains').insertOne(domain);
    return { workspaceId: workspace._id, partnerId, domain };
  }

  function aMessage(domain: DomainDoc, phase: DomainMessage['phase'], overrides: Partial<DomainMessage> = {}): DomainMessage {
    const type = ({ PendingSSL: 'domain.pending_ssl', Active: 'domain.activated', Error: 'domain.error' } as const)[phase];
    return { domain_id: domain._id, hostname: domain.hostname, tenant: domain.workspace_id, type, phase, generation: 1, reason: null, message: null, at: new Date().toISOString(), ...overrides };
  }

  /** Publishes as the operator does: on domains.<tenant>.<type>, with the transition as JetStream message id. */
  async function publish(message: DomainMessage, msgID = domainMessageId(message)): Promise<{ duplicate: boolean }> {
    const ack = await operator.js.publish(operator.subjects.domain(message.tenant, message.type), JSON.stringify(message), { msgID });
    return { duplicate: ack.duplicate };
  }

  const statusBecomes = (id: string, status: DomainDoc['status']) =>
    until(async () => (await domainDoc(id)).status === status, 10_000, `domain ${id} ${status}`);

  it('moves a domain through pending_ssl to active, one event row per transition, with the partner on it', async () => {
    const { domain, workspaceId, partnerId } = await aPendingDomain();
    await publish(aMessage(domain, 'PendingSSL'));
    await statusBecomes(domain._id, 'pending_ssl');
    const activatedAt = '2026-11-22T05:00:00.000Z';
    await publish(aMessage(domain, 'Active', { at: activatedAt }));
    await statusBecomes(domain._id, 'active');

    const doc = await domainDoc(domain._id);
    expect(doc.activated_at!.toISOString()).to.equal(activatedAt);
    expect(doc.error).to.equal(null);
    const events = await eventsOf(domain._id);
    expect(events.map((e) => e.type)).to.deep.equal(['domain.pending_ssl', 'domain.activated']);
    expect(events[1]).to.deep.include({ workspace_id: workspaceId, partner_id: partnerId });
    expect(events[1]!.data).to.deep.equal({ id: domain._id, hostname: domain.hostname, status: 'active' });
  });

  it('writes the event once when the operator publishes a transition twice, and when it arrives again under another id', async () => {
    const { domain } = await aPendingDomain();
    const active = aMessage(domain, 'Active');
    expect((await publish(active)).duplicate).to.equal(false);
    expect((await publish(active)).duplicate).to.equal(true);
    // Past JetStream's duplicate window the same transition is a new message: the worker must still see it applied.
    await publish(active, `${domainMessageId(active)}.replayed`);
    // Messages are handled one at a time, in order: once the next transition is applied, the replay was handled.
    await publish(aMessage(domain, 'Error', { generation: 1, reason: 'Failed', message: 'renewal failed' }));
    await statusBecomes(domain._id, 'error');
    expect((await eventsOf(domain._id)).map((e) => e.type)).to.deep.equal(['domain.activated', 'domain.error']);
  });

  it('records the error with its details, and clears it when the domain recovers', async () => {
    const { domain } = await aPendingDomain();
    await publish(aMessage(domain, 'PendingSSL'));
    await publish(aMessage(domain, 'Error', { reason: 'OrderFailed', message: 'CAA record forbids the issuer' }));
    await statusBecomes(domain._id, 'error');
    expect((await domainDoc(domain._id)).error).to.deep.equal({ reason: 'OrderFailed', message: 'CAA record forbids the issuer' });
    const failed = (await eventsOf(domain._id)).find((e) => e.type === 'domain.error')!;
    expect(failed.data).to.deep.equal({ id: domain._id, hostname: domain.hostname, status: 'error', reason: 'OrderFailed', message: 'CAA record forbids the issuer' });

    await publish(aMessage(domain, 'Active', { generation: 2 }));
    await statusBecomes(domain._id, 'active');
    expect((await domainDoc(domain._id)).error).to.equal(null);
  });

  it('ignores a transition older than the last generation applied', async () => {
    const { domain } = await aPendingDomain();
    await publish(aMessage(domain, 'Active', { generation: 3 }));
    await statusBecomes(domain._id, 'active');
    await publish(aMessage(domain, 'Error', { generation: 2, reason: 'Stale', message: 'from before the spec changed' }));
    await publish(aMessage(domain, 'PendingSSL', { generation: 4 }));
    await statusBecomes(domain._id, 'pending_ssl');
    expect((await eventsOf(domain._id)).map((e) => e.type)).to.deep.equal(['domain.activated', 'domain.pending_ssl']);
  });

  it('drops messages about a deleted domain and malformed ones, and goes on with the next', async () => {
    const { domain } = await aPendingDomain();
    const gone = { ...domain, _id: newId('dom') };
    await publish(aMessage(gone, 'Active'));
    await operator.js.publish(operator.subjects.domain(domain.workspace_id, 'domain.activated'), '{"not":"a domain message"}', { msgID: newId('evt') });
    await publish(aMessage(domain, 'Active'));
    await statusBecomes(domain._id, 'active');
    expect(await eventsOf(gone._id)).to.have.length(0);
  });

  it('applies transitions published while the consumer was stopped, once it is back', async () => {
    const { domain } = await aPendingDomain();
    await running.worker.domainEvents.stop();
    // Its last pull request expires on the server (a message sent to it now would sit unacknowledged until ack_wait).
    const { stream } = running.worker.domainEvents;
    await until(async () => (await operator.jsm.consumers.info(stream, DOMAIN_EVENTS_DURABLE)).num_waiting === 0, 15_000, 'no pull request left');
    try {
      await publish(aMessage(domain, 'PendingSSL'));
      await publish(aMessage(domain, 'Active'));
      expect((await domainDoc(domain._id)).status).to.equal('pending_verification');
    } finally {
      await running.worker.domainEvents.start();
    }
    await statusBecomes(domain._id, 'active');
    expect((await eventsOf(domain._id)).map((e) => e.type)).to.deep.equal(['domain.pending_ssl', 'domain.activated']);
  });

  it('tells every pod to drop the host, and the domain resolves for links once active', async () => {
    const { domain, workspaceId } = await aPendingDomain();
    const directory = new DomainDirectory(db(), 'lnk.linkplane.test', 'https://lnk.linkplane.test');
    expect(await directory.resolve(workspaceId, domain._id)).to.equal(null);
    await publish(aMessage(domain, 'PendingSSL'));
    await statusBecomes(domain._id, 'pending_ssl');
    expect(await directory.resolve(workspaceId, domain._id)).to.equal(null);
    await publish(aMessage(domain, 'Active'));
    await until(() => invalidations.filter((i) => i.id === domain._id).length === 2, 10_000, 'two invalidations');
    expect(invalidations.filter((i) => i.id === domain._id)).to.deep.equal([
      { kind: 'domain', id: domain._id, keys: [domain.hostname] },
      { kind: 'domain', id: domain._id, keys: [domain.hostname] },
    ]);
    expect(await directory.resolve(workspaceId, domain._id)).to.deep.equal({ id: domain._id, hostname: domain.hostname, baseUrl: `https://${domain.hostname}` });
    expect(await directory.resolve(newId('ws'), domain._id)).to.equal(null);
  });

  it("delivers the domain events to the workspace's webhook endpoint", async () => {
    const { domain, workspaceId } = await aPendingDomain();
    const box = new SecretBox(running.infra.config.secretKey);
    const path = `/hooks/${domain._id}`;
    const endpoint = newEndpointDoc(
      { kind: 'workspace', id: workspaceId },
      { url: `${receiverUrl}${path}`, events: ['domain.pending_ssl', 'domain.activated', 'domain.error'], name: null },
      'whsec_test',
      box,
      new Date(),
    );
    await db().collection<WebhookDoc>('webhooks').insertOne(endpoint);
    await publish(aMessage(domain, 'PendingSSL'));
    await publish(aMessage(domain, 'Active'));
    const bodies = await until(() => {
      const mine = received.filter((r) => r.path === path).map((r) => r.body);
      return mine.length === 2 && mine;
    }, 15_000, 'two deliveries');
    expect(bodies.map((b) => b.type).sort()).to.deep.equal(['domain.activated', 'domain.pending_ssl']);
    expect(bodies.find((b) => b.type === 'domain.activated')!.data).to.deep.equal({ id: domain._id, hostname: domain.hostname, status: 'active' });
  });
});
