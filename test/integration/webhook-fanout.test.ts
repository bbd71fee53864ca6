// The event fan-out against real JetStream and devdb: one delivery message per subscribed endpoint, and never more
// than its bound of delivery publishes waiting for JetStream at once, however many events are fanned out together.
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { natsPrefix, NATS_URL } from '../helpers/env.ts';
import { until } from '../helpers/wait.ts';
import { connectNats, provisionStreams, type Nats } from '../../src/platform/nats.ts';
import { WebhookStore } from '../../src/webhooks/webhook.store.ts';
import { newEndpointDoc } from '../../src/webhooks/webhook.service.ts';
import { newSigningSecret, SecretBox } from '../../src/webhooks/secret-box.ts';
import { WebhookFanout } from '../../src/webhooks/fanout.ts';
import type { DeliveryMessage, EventMessage } from '../../src/webhooks/delivery-message.ts';

const logger = pino({ level: 'silent' });

describe('webhook fan-out (real JetStream)', function () {
  this.timeout(30_000);
  let mongo: TestMongo;
  let client: MongoClient;
  let nats: Nats;
  let webhooks: WebhookStore;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
    webhooks = new WebhookStore(client.db(mongo.dbName));
    nats = await connectNats({ url: NATS_URL, prefix: natsPrefix(), name: 'fanout-test', logger });
    await provisionStreams(nats, 3_600_000);
  });

  after(async () => {
    await nats.drain();
    await client.close();
    await mongo.stop();
  });

  it('publishes one delivery per endpoint, with at most its bound of publishes waiting at once across events', async () => {
    const box = new SecretBox('fanout-test-secret-key-0123456789abcdefghij');
    const endpoints = (workspaceId: string) =>
      Array.from({ length: 30 }, (_, i) => newEndpointDoc({ kind: 'workspace', id: workspaceId }, { url: `https://example.com/${i}`, events: ['link.created'], name: null }, newSigningSecret(), box, new Date()));
    await webhooks.collection.insertMany([...endpoints('ws_a'), ...endpoints('ws_b')]);

    // The fan-out's NATS with its JetStream publishes counted while they wait for their ack.
    let waiting = 0;
    let most = 0;
    const js = Object.create(nats.js) as Nats['js'];
    js.publish = async (...args: Parameters<Nats['js']['publish']>) => {
      most = Math.max(most, ++waiting);
      try {
        return await nats.js.publish(...args);
      } finally {
        waiting--;
      }
    };
    const fanout = new WebhookFanout({ nats: { ...nats, js }, webhooks, logger, maxPublishesInFlight: 4 });
    await fanout.start();
    try {
      const event = (id: string, workspaceId: string): EventMessage => ({ id, type: 'link.created', created_at: new Date().toISOString(), workspace_id: workspaceId, partner_id: null, data: { id: 'lnk_1' } });
      await Promise.all([
        nats.js.publish(nats.subjects.event('ws_a', 'link.created'), JSON.stringify(event('evt_a', 'ws_a')), { msgID: 'evt_a' }),
        nats.js.publish(nats.subjects.event('ws_b', 'link.created'), JSON.stringify(event('evt_b', 'ws_b')), { msgID: 'evt_b' }),
      ]);
      const stream = nats.subjects.stream('DELIVERIES');
      await until(async () => (await nats.jsm.streams.info(stream)).state.messages === 60, 15_000, '60 delivery messages');
      await until(async () => (await nats.jsm.consumers.info(fanout.stream, 'webhook-fanout')).num_ack_pending === 0, 5000, 'both events acknowledged');
      expect(most, 'publishes waiting at once').to.equal(4);

      const seen = new Map<string, string>();
      for (let seq = 1; seq <= 60; seq++) {
        const message = (await nats.jsm.streams.getMessage(stream, { seq }))!.json<DeliveryMessage>();
        seen.set(`${message.event.id}/${message.webhook_id}`, message.delivery_id);
      }
      const all = await webhooks.collection.find({}, { projection: { _id: 1, workspace_id: 1 } }).toArray();
      expect([...seen.keys()].sort()).to.deep.equal(all.map((w) => `${w.workspace_id === 'ws_a' ? 'evt_a' : 'evt_b'}/${w._id}`).sort());
    } finally {
      await fanout.stop();
    }
  });
});
