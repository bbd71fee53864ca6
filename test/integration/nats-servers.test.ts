import { expect } from 'chai';
import { pino } from 'pino';
import { AckPolicy, jetstreamManager } from '@nats-io/jetstream';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { NATS_URL, natsPrefix, testEnv } from '../helpers/env.ts';
import { NatsCluster } from '../helpers/nats-cluster.ts';
import { freePort, spawnProcess, waitForHttp, type Spawned } from '../helpers/processes.ts';
import { connectNats, provisionStreams, type Nats } from '../../src/platform/nats.ts';

const logger = pino({ level: 'silent' });

/** NATS_URL naming the members of a real three-node cluster on loopback, and the replicas streams get there. */
describe('a JetStream cluster of three', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let cluster: NatsCluster;
  const procs: Spawned[] = [];
  const conns: Nats[] = [];

  before(async () => {
    [mongo, cluster] = await Promise.all([startTestMongo(), NatsCluster.start(3)]);
  });

  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await Promise.all(conns.map((n) => n.drain().catch(() => undefined)));
    await cluster?.stop();
    await mongo?.stop();
  });

  async function open(url: string, prefix: string): Promise<Nats> {
    const nats = await connectNats({ url, prefix, name: 'replicas-test', logger });
    conns.push(nats);
    return nats;
  }

  it('gives new streams three replicas by default', async () => {
    const nats = await open(cluster.url, natsPrefix());
    await provisionStreams(nats, 60_000, { logger });
    for (const base of ['EVENTS', 'DELIVERIES', 'CLICKS', 'DOMAINS'] as const) {
      const info = await nats.jsm.streams.info(nats.subjects.stream(base));
      expect(info.config.num_replicas, base).to.equal(3);
      expect(info.cluster?.replicas ?? [], base).to.have.length(2);
    }
  });

  it('scales an existing one-replica stream and its consumer to the configured replicas at start', async () => {
    const prefix = natsPrefix();
    const nats = await open(cluster.url, prefix);
    await provisionStreams(nats, 60_000, { replicas: 1, logger });
    const clicks = nats.subjects.stream('CLICKS');
    expect((await nats.jsm.streams.info(clicks)).config.num_replicas).to.equal(1);
    await nats.jsm.consumers.add(clicks, { durable_name: 'ingest', ack_policy: AckPolicy.Explicit });
    expect((await nats.jsm.consumers.info(clicks, 'ingest')).cluster?.replicas ?? []).to.have.length(0);

    await provisionStreams(nats, 60_000, { replicas: 3, logger });
    expect((await nats.jsm.streams.info(clicks)).config.num_replicas).to.equal(3);
    // Scaling is asynchronous: the consumer's new peers join, then it elects a leader among them.
    let cluster_: { leader?: string; replicas?: unknown[] } | undefined;
    for (let i = 0; i < 100; i++) {
      cluster_ = (await nats.jsm.consumers.info(clicks, 'ingest')).cluster;
      if (cluster_?.leader && cluster_.replicas?.length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(cluster_?.replicas ?? [], 'the consumer has two followers besides its leader').to.have.length(2);

    // Without a setting an existing stream is never scaled down; with one it is.
    const fewer = await open(cluster.urlOf('n2'), prefix);
    await provisionStreams(fewer, 60_000, { replicas: null, logger });
    expect((await fewer.jsm.streams.info(clicks)).config.num_replicas).to.equal(3);
    await provisionStreams(fewer, 60_000, { replicas: 1, logger });
    expect((await fewer.jsm.streams.info(clicks)).config.num_replicas).to.equal(1);
  });

  it('gives one replica on a single server, which refuses more', async () => {
    const nats = await open(NATS_URL, natsPrefix());
    await provisionStreams(nats, 60_000, { logger });
    expect((await nats.jsm.streams.info(nats.subjects.stream('EVENTS'))).config.num_replicas).to.equal(1);
  });

  it('starts api processes with three servers in NATS_URL, one of them down, and their streams stay usable', async () => {
    const env = testEnv(mongo, { NATS_URL: cluster.url });
    expect(env.NATS_URL!.split(',')).to.have.length(3);
    const start = async () => {
      const port = await freePort();
      const proc = spawnProcess('api', { ...env, API_PORT: String(port) });
      procs.push(proc);
      await waitForHttp(`http://127.0.0.1:${port}/readyz`, proc, 60_000);
      return proc;
    };
    const first = await start();
    expect(await first.stop(), first.output()).to.equal(0);

    await cluster.kill('n1');
    expect(env.NATS_URL!.split(',')[0], 'the dead node is listed first').to.equal(cluster.urlOf('n1'));
    await start();

    // The api's start proved the streams usable; a JetStream API request can still time out while the meta group
    // settles on a leader among the two left, on a loaded machine: wait for one before asking.
    await cluster.waitForMeta();
    const nc = await cluster.connect(['n2', 'n3']);
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(`${env.NATS_PREFIX}EVENTS`);
      expect(info.config.num_replicas).to.equal(3);
      expect(info.cluster?.leader).to.be.oneOf(['n2', 'n3']);
    } finally {
      await nc.close();
    }
  });
});
