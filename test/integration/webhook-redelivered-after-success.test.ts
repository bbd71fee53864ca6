import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliverPolicy } from '@nats-io/jetstream';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { freePort, spawnProcess, waitForHttp, type Spawned } from '../helpers/processes.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { DELIVERY_DURABLE } from '../../src/webhooks/delivery.ts';
import { ensureDurable } from '../../src/platform/pull-runner.ts';
import { until } from '../helpers/wait.ts';

// A delivery message handed out again after its POST succeeded (the worker's ack was lost, or arrived after ack_wait
// because the worker stalled): the receiver already has it, so the worker acknowledges it without a second POST.
// The hand-out count is made 2 deterministically: the test takes the message from the consumer first and naks it.
describe('a delivery handed out again after it succeeded', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let receiver: Server;
  let receiverUrl: string;
  let worker: Spawned | null = null;
  let env: Record<string, string>;
  const posted: string[] = [];

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms' });
    api = await startApi(env);
    tenants = await Tenants.open(mongo);
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        posted.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  after(async () => {
    await worker?.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await api.stop();
    await tenants.close();
    await mongo.stop();
  });

  it('is acknowledged without a POST when a succeeded attempt is logged, and POSTed as attempt 1 when none is', async () => {
    const nats = api.infra.nats;
    const stream = nats.subjects.stream('DELIVERIES');
    await ensureDurable(nats, {
      stream,
      durable: DELIVERY_DURABLE,
      filterSubject: `${nats.subjects.prefix}deliveries.>`,
      ackWaitMs: 30_000,
      maxDeliver: -1,
      deliverPolicy: DeliverPolicy.All,
    });

    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    const headers = { ...bearer(key), 'Content-Type': 'application/json' };
    const created = await fetch(`${api.url}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: `${receiverUrl}/hook`, events: ['link.created'] }) });
    const endpoint = (await created.json()) as { id: string };
    const sendTest = async () => ((await (await fetch(`${api.url}/v1/webhooks/${endpoint.id}/test`, { method: 'POST', headers })).json()) as { delivery_id: string }).delivery_id;
    const delivered = await sendTest();
    const fresh = await sendTest();

    // The first one was POSTed and logged as succeeded before: its row is there, as a lost ack would leave it.
    const row = (n: number, deliveryId: string) => ({
      _id: `${deliveryId}.${n}`,
      delivery_id: deliveryId,
      webhook_id: endpoint.id,
      tenant_kind: 'workspace' as const,
      workspace_id: ws._id,
      partner_id: null,
      event_id: 'evt_test',
      event_type: 'link.created' as const,
      attempt: n,
      created_at: new Date(),
      request: { headers: {}, body: '{}' },
      response: { status: 204, headers: {}, body: '' },
      duration_ms: 3,
      outcome: 'succeeded' as const,
      next_retry_at: null,
    });
    await api.infra.stores.webhookDeliveries.record(row(1, delivered));

    // Both handed out once (to this test) and given back: the worker sees them as second hand-outs.
    const consumer = await nats.js.consumers.get(stream, DELIVERY_DURABLE);
    // One message per fetch, so none is left held by this test when it stops taking them.
    const taken = new Set<string>();
    while (taken.size < 2) {
      for await (const msg of await consumer.fetch({ max_messages: 1, expires: 2_000 })) {
        taken.add(msg.json<{ delivery_id: string }>().delivery_id);
        msg.nak();
      }
    }
    expect([...taken].sort()).to.deep.equal([delivered, fresh].sort());

    const port = await freePort();
    worker = spawnProcess('worker', { ...env, WORKER_PORT: String(port) });
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, worker);

    const log = async () =>
      ((await (await fetch(`${api.url}/v1/webhooks/${endpoint.id}/deliveries`, { headers: bearer(key) })).json()) as { data: Array<{ id: string; attempt: number; outcome: string }> }).data;
    await until(async () => (await log()).some((r) => r.id === fresh), 15_000, 'the fresh delivery logged');
    await until(async () => {
      const state = await nats.jsm.consumers.info(stream, DELIVERY_DURABLE);
      return state.num_ack_pending + state.num_pending === 0;
    }, 15_000, 'both acknowledged');

    expect(posted, 'only the delivery that had not succeeded is POSTed').to.deep.equal([fresh]);
    const rows = (await log()).map((r) => [r.id, r.attempt, r.outcome]).sort();
    expect(rows).to.deep.equal([[delivered, 1, 'succeeded'], [fresh, 1, 'succeeded']].sort());
  });
});
