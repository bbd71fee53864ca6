// Our own failures must not spend a customer's retries (spec 6.4 counts the receiver's failures only). This test
// runs its own devdb, with a data directory, so it can stop MongoDB while a delivery is being handled and start it
// again with the same data.
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevDb, type DevDb } from '../../src/devdb/index.ts';
import { randomBase62 } from '../../src/platform/ids.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, startWorker, type RunningApi, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi } from '../helpers/http.ts';
import { freePort } from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';
import { DELIVERY_DURABLE } from '../../src/webhooks/delivery.ts';
import { deliveryIdFor, publishDelivery } from '../../src/webhooks/delivery-message.ts';

describe('webhook delivery while MongoDB is down', function () {
  this.timeout(90_000);
  let dataDir: string;
  let port: number;
  let devdb: DevDb;
  let api: RunningApi;
  let worker: RunningWorker;
  let tenants: Tenants;
  let receiver: Server;
  let receiverUrl: string;
  const posts: number[] = [];

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'lp-platform-failure-'));
    port = await freePort();
    devdb = await startDevDb({ port, dataDir });
    const mongo = { uri: devdb.uri, dbName: `lp_test_${randomBase62(10)}`, stop: () => devdb.stop() };
    const env = testEnv(mongo, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // One retry: the second failed attempt turns the endpoint failing.
      WEBHOOK_RETRY_SCHEDULE: '100ms',
      WEBHOOK_TIMEOUT_MS: '2000',
      // Longer than a database call waits for a server, so one handler at a time holds the message.
      WEBHOOK_ACK_WAIT_MS: '30000',
    });
    api = await startApi(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    // The receiver fails the first POST and accepts the next.
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        posts.push(posts.length + 1);
        res.writeHead(posts.length === 1 ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });

  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await tenants.close();
    await worker.stop();
    await api.stop();
    await devdb.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('counts only the POSTs: the delivery retried after the outage is attempt 1, and the endpoint stays active', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const key = (await tenants.aWorkspaceKey(ws._id)).key;
    const created = await callApi(api.url, 'POST', '/webhooks', { key, body: { url: receiverUrl, events: ['link.created'] } });
    expect(created.status).to.equal(201);
    const endpointId = created.body.id as string;

    await devdb.stop();
    const eventId = `evt_${randomBase62(20)}`;
    const event = { id: eventId, type: 'link.created' as const, created_at: new Date().toISOString(), workspace_id: ws._id, partner_id: null, data: { id: 'lnk_x' } };
    await publishDelivery(api.infra.nats, { delivery_id: deliveryIdFor(eventId, endpointId), webhook_id: endpointId, event });

    // The worker cannot read the endpoint: the message goes back and is handed out again (a platform failure).
    const nats = api.infra.nats;
    const stream = nats.subjects.stream('DELIVERIES');
    await until(async () => (await nats.jsm.consumers.info(stream, DELIVERY_DURABLE)).num_redelivered > 0, 40_000, 'a redelivery while MongoDB is down');
    expect(posts, 'no POST without the endpoint').to.deep.equal([]);

    devdb = await startDevDb({ port, dataDir });
    const log = async () =>
      ((await callApi(api.url, 'GET', `/webhooks/${endpointId}/deliveries`, { key })).body.data ?? []) as Array<{ attempt: number; outcome: string }>;
    await until(async () => (await log()).some((row) => row.outcome === 'succeeded'), 40_000, 'the delivery to succeed');

    expect((await log()).map((row) => [row.attempt, row.outcome]).reverse()).to.deep.equal([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(posts).to.deep.equal([1, 2]);
    const endpoint = await callApi(api.url, 'GET', `/webhooks/${endpointId}`, { key });
    expect(endpoint.body.status).to.equal('active');
  });
});
