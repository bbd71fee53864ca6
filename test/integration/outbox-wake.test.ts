// The split deployment: the api's OutboxSignal publishes `outbox.wake` on core NATS and the worker's relay, whose
// poll is an hour here, publishes the new row at once.
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { natsPrefix, NATS_URL } from '../helpers/env.ts';
import { connectNats, provisionStreams, type Nats } from '../../src/platform/nats.ts';
import { EventStore } from '../../src/events/event.store.ts';
import { OutboxRelay } from '../../src/events/outbox-relay.ts';
import { Lease } from '../../src/platform/lease.ts';
import { OutboxSignal } from '../../src/main/infra.ts';
import { until } from '../helpers/wait.ts';

const logger = pino({ level: 'silent' });

describe('outbox relay woken over NATS (api and worker in separate processes)', function () {
  this.timeout(30_000);
  let mongo: TestMongo;
  let client: MongoClient;
  let apiNats: Nats;
  let workerNats: Nats;
  let relay: OutboxRelay;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
    const prefix = natsPrefix();
    apiNats = await connectNats({ url: NATS_URL, prefix, name: 'wake-api', logger });
    workerNats = await connectNats({ url: NATS_URL, prefix, name: 'wake-worker', logger });
    await provisionStreams(workerNats, 3_600_000);
  });

  after(async () => {
    await relay.stop();
    await apiNats.drain();
    await workerNats.drain();
    await client.close();
    await mongo.stop();
  });

  it('publishes a row written by the api long before the next poll', async () => {
    const events = new EventStore(client.db(mongo.dbName));
    await events.ensureIndexes();
    relay = new OutboxRelay({ events, nats: workerNats, lease: new Lease(client.db(mongo.dbName), 'outbox-relay', 5000), logger, pollMs: 3_600_000 });
    const workerSignal = new OutboxSignal(workerNats);
    workerSignal.on(() => relay.nudge());
    await workerNats.nc.flush();
    relay.start();
    // The relay's first pass finds nothing, then sleeps for the hour-long poll.
    await until(async () => (await events.unpublished(1)).length === 0, 5000, 'the first pass');
    await new Promise((r) => setTimeout(r, 200));

    const apiSignal = new OutboxSignal(apiNats);
    const row = await events.append({ type: 'link.created', workspaceId: 'ws_wake', partnerId: null, data: { n: 1 } });
    apiSignal.nudge();
    await until(async () => (await events.unpublished(1)).length === 0, 10_000, 'the row published after the wake-up');
    const published = await events.collection.findOne({ _id: row._id });
    expect(published?.published_at).to.be.instanceOf(Date);
  });

  it('calls the relay in the same process directly, without NATS', () => {
    const signal = new OutboxSignal();
    let woken = 0;
    signal.on(() => woken++);
    signal.nudge();
    expect(woken).to.equal(1);
  });
});
