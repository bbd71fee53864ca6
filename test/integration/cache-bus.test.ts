import { expect } from 'chai';
import { pino } from 'pino';
import { NATS_URL, natsPrefix } from '../helpers/env.ts';
import { connectNats, type Nats } from '../../src/platform/nats.ts';
import { CacheBus, type Invalidation } from '../../src/platform/cache-bus.ts';
import { until } from '../helpers/wait.ts';

describe('CacheBus over NATS', function () {
  this.timeout(30_000);
  const logger = pino({ level: 'silent' });
  let sender: Nats;
  let receiver: Nats;
  let flushes = 0;

  before(async () => {
    const prefix = natsPrefix();
    [sender, receiver] = await Promise.all([
      connectNats({ url: NATS_URL, prefix, name: 'cache-bus-sender', logger }),
      connectNats({ url: NATS_URL, prefix, name: 'cache-bus-receiver', logger }),
    ]);
    // Counts the flushes (a PING each, answered by the server after everything published before it).
    const flush = sender.nc.flush.bind(sender.nc);
    sender.nc.flush = () => {
      flushes++;
      return flush();
    };
  });

  after(async () => {
    await Promise.all([sender.drain(), receiver.drain()]);
  });

  it('resolves each publish once the server has it, concurrent publishes sharing a flush', async () => {
    const received: Invalidation[] = [];
    const other = new CacheBus(receiver, logger);
    other.on((message) => received.push(message));
    await receiver.nc.flush(); // the subscription is on the server before anything is sent
    const bus = new CacheBus(sender, logger);
    const local: Invalidation[] = [];
    bus.on((message) => local.push(message));
    flushes = 0;
    const messages = Array.from({ length: 20 }, (_, i): Invalidation => ({ kind: 'link', id: `lnk_${i}`, keys: [`lnk.test/s${i}`] }));
    const publishing = Promise.all(messages.map((m) => bus.publish(m)));
    // This process's own caches are told first, before the broadcast (which comes back to it too).
    expect(local).to.deep.equal(messages);
    await publishing;
    // Published in the same turn: one flush for all of them (at most one more for any sent while it was out).
    expect(flushes).to.be.within(1, 2);
    // One published while a flush is under way waits for a flush of its own, sent after it.
    const first = bus.publish({ kind: 'domain', id: 'dom_a', keys: ['a.test'] });
    await Promise.resolve();
    const second = bus.publish({ kind: 'domain', id: 'dom_b', keys: ['b.test'] });
    await Promise.all([first, second]);
    expect(flushes).to.be.within(2, 4);
    await until(() => received.length === 22, 10_000, 'every invalidation reaches the other process');
    expect(received).to.deep.equal([...messages, { kind: 'domain', id: 'dom_a', keys: ['a.test'] }, { kind: 'domain', id: 'dom_b', keys: ['b.test'] }]);
  });
});
