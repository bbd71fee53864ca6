import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { natsPrefix } from '../helpers/env.ts';
import { OwnNatsServer } from '../helpers/nats-server.ts';
import { connectNats, provisionStreams, type Nats } from '../../src/platform/nats.ts';
import { EventStore } from '../../src/events/event.store.ts';
import { OutboxRelay, eventMessage } from '../../src/events/outbox-relay.ts';
import { Lease } from '../../src/platform/lease.ts';
import { until } from '../helpers/wait.ts';

const logger = pino({ level: 'silent' });

/** Every message id on the EVENTS stream, in stream order. */
async function streamIds(nats: Nats): Promise<string[]> {
  const stream = nats.subjects.stream('EVENTS');
  const info = await nats.jsm.streams.info(stream);
  const ids: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const msg = await nats.jsm.streams.getMessage(stream, { seq });
    if (msg) ids.push(msg.json<{ id: string }>().id);
  }
  return ids;
}

describe('outbox relay (real nats-server, restarted mid-flow)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let client: MongoClient;
  let server: OwnNatsServer;
  let nats: Nats;
  let events: EventStore;
  const relays: OutboxRelay[] = [];

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
    events = new EventStore(client.db(mongo.dbName));
    await events.ensureIndexes();
    server = await OwnNatsServer.start();
    nats = await connectNats({ url: server.url, prefix: natsPrefix(), name: 'outbox-test', logger });
    await provisionStreams(nats, 3_600_000);
  });

  after(async () => {
    for (const relay of relays) await relay.stop();
    await nats.drain();
    await server.destroy();
    await client.close();
    await mongo.stop();
  });

  function aRelay(registry?: Registry): OutboxRelay {
    const relay = new OutboxRelay({ events, nats, lease: new Lease(client.db(mongo.dbName), 'outbox-relay', 2000), logger, pollMs: 30, registry });
    relays.push(relay);
    return relay;
  }

  const append = (n: number, from: number) =>
    Promise.all(Array.from({ length: n }, (_, i) => events.append({ type: 'link.created', workspaceId: 'ws_test', partnerId: null, data: { n: from + i } })));

  /** linkplane_outbox_oldest_unpublished_age_seconds as a scrape reads it. */
  async function backlogAge(registry: Registry): Promise<number> {
    const metric = await registry.getSingleMetric('linkplane_outbox_oldest_unpublished_age_seconds')!.get();
    return metric.values[0]!.value;
  }

  it('publishes every row exactly once across a NATS outage, and reports the age of the rows waiting', async () => {
    const registry = new Registry();
    const relay = aRelay(registry);
    relay.start();
    const first = await append(20, 0);
    await until(async () => (await events.unpublished(1)).length === 0, 10_000, 'first rows published');

    await server.stop();
    const during = await append(30, 20);
    await new Promise((r) => setTimeout(r, 500));
    expect((await events.unpublished(100)).length, 'rows wait in the outbox while NATS is down').to.equal(30);
    expect(await backlogAge(registry), 'the oldest waiting row is as old as the outage').to.be.within(0.4, 30);

    await server.restart();
    await until(async () => (await events.unpublished(1)).length === 0, 30_000, 'rows published after NATS returned');
    expect(await backlogAge(registry), 'an empty outbox has no backlog').to.equal(0);
    const ids = await streamIds(nats);
    const expected = [...first, ...during].map((e) => e._id);
    expect(ids).to.have.members(expected);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('drops a row published again after a crash between publish and mark', async () => {
    const [event] = await append(1, 100);
    // The crash: the message reached the stream, the row was never marked.
    await nats.js.publish(nats.subjects.event('ws_test', 'link.created'), eventMessage(event!), { msgID: event!._id });
    const before = (await streamIds(nats)).length;
    await until(async () => (await events.unpublished(1)).length === 0, 10_000, 'row re-published and marked');
    const ids = await streamIds(nats);
    expect(ids).to.have.length(before);
    expect(ids.filter((id) => id === event!._id)).to.have.length(1);
  });

  it('lets one relay publish at a time (lease), another takes over when it stops', async () => {
    const db = client.db(mongo.dbName);
    const a = new Lease(db, 'singleton-test', 300);
    const b = new Lease(db, 'singleton-test', 300);
    expect(await a.acquire()).to.equal(true);
    expect(await b.acquire()).to.equal(false);
    expect(await a.acquire(), 'the holder renews').to.equal(true);
    await new Promise((r) => setTimeout(r, 400));
    expect(await b.acquire(), 'an expired lease is taken over').to.equal(true);
    expect(await a.acquire()).to.equal(false);
  });

  it('renews the lease in MongoDB once a third of its term has passed, not at every call', async () => {
    const db = client.db(mongo.dbName);
    const leases = db.collection<{ _id: string; holder: string; expires_at: Date }>('leases');
    const a = new Lease(db, 'renewal-test', 60_000);
    const b = new Lease(db, 'renewal-test', 60_000);
    const t0 = Date.now();
    const expiry = async () => (await leases.findOne({ _id: 'renewal-test' }))?.expires_at.getTime();
    expect(await a.acquire(new Date(t0))).to.equal(true);
    expect(await expiry()).to.equal(t0 + 60_000);
    expect(await a.acquire(new Date(t0 + 19_000)), 'held, within a third of the term').to.equal(true);
    expect(await expiry(), 'no write').to.equal(t0 + 60_000);
    expect(await b.acquire(new Date(t0 + 19_000)), 'still the holder').to.equal(false);
    expect(await a.acquire(new Date(t0 + 21_000))).to.equal(true);
    expect(await expiry(), 'renewed after a third of the term').to.equal(t0 + 81_000);
    // Another replica took it after it expired: the old holder finds out at its next renewal and stops.
    expect(await b.acquire(new Date(t0 + 82_000))).to.equal(true);
    expect(await a.acquire(new Date(t0 + 82_000))).to.equal(false);
    expect(await a.acquire(new Date(t0 + 82_001)), 'a lost lease is asked for again, not assumed').to.equal(false);
    await b.release();
    expect(await a.acquire(new Date(t0 + 83_000)), 'released: taken at once').to.equal(true);
  });
});
