import { expect } from 'chai';
import { pino } from 'pino';
import { DeliverPolicy } from '@nats-io/jetstream';
import { natsPrefix, NATS_URL } from '../helpers/env.ts';
import { connectNats, provisionStreams, type Nats } from '../../src/platform/nats.ts';
import { ensureDurable, PullRunner } from '../../src/platform/pull-runner.ts';
import { until } from '../helpers/wait.ts';

const logger = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PullRunner against real JetStream', function () {
  this.timeout(30_000);
  let nats: Nats;

  before(async () => {
    nats = await connectNats({ url: NATS_URL, prefix: natsPrefix(), name: 'pull-runner-test', logger });
    await provisionStreams(nats, 3_600_000);
  });

  after(async () => {
    await nats.drain();
  });

  it('keeps a message that is handled for longer than ack_wait in progress: it is handled once, not redelivered to a second handler', async () => {
    const ackWaitMs = 300;
    const stream = nats.subjects.stream('DELIVERIES');
    const durable = 'slow-handler';
    await ensureDurable(nats, {
      stream,
      durable,
      filterSubject: `${nats.subjects.prefix}deliveries.>`,
      ackWaitMs,
      maxDeliver: -1,
      deliverPolicy: DeliverPolicy.All,
    });
    const handled: number[] = [];
    const runner = new PullRunner({
      nats,
      stream,
      durable,
      concurrency: 4,
      ackWaitMs,
      logger,
      retryDelayMs: () => 100,
      // Four times ack_wait: without the in-progress signal JetStream hands the message to a free slot again.
      handle: async (msg) => {
        handled.push(msg.info.deliveryCount);
        await sleep(ackWaitMs * 4);
        msg.ack();
      },
    });
    runner.start();
    try {
      await nats.js.publish(nats.subjects.delivery('wh_slow'), '{}');
      await until(() => handled.length === 1, 10_000, 'the first handling');
      await sleep(ackWaitMs * 8);
      expect(handled, 'handled once, never redelivered while in progress').to.deep.equal([1]);
      const info = await nats.jsm.consumers.info(stream, durable);
      expect(info.num_ack_pending + info.num_pending, 'acknowledged').to.equal(0);
    } finally {
      await runner.stop();
    }
  });
});
