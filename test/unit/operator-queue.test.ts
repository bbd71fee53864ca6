import { expect } from 'chai';
import { WorkQueue } from '../../operator/queue.ts';

/** A handler that records calls and lets the test decide when each finishes. */
function gatedHandler() {
  const calls: string[] = [];
  const gates: (() => void)[] = [];
  let active = 0;
  let maxActive = 0;
  const handler = async (key: string): Promise<void> => {
    calls.push(key);
    active += 1;
    maxActive = Math.max(maxActive, active);
    await new Promise<void>((resolve) => gates.push(resolve));
    active -= 1;
  };
  return {
    calls,
    handler,
    maxActive: () => maxActive,
    releaseAll: () => gates.splice(0).forEach((open) => open()),
  };
}

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await tick(5);
  expect(check()).to.equal(true);
}

describe('operator work queue', () => {
  it('collapses repeated adds of a waiting key into one run', async () => {
    const queue = new WorkQueue();
    const seen: string[] = [];
    queue.add('a');
    queue.add('a');
    queue.add('b');
    queue.add('a');
    queue.run((key) => {
      seen.push(key);
      return Promise.resolve();
    });
    await until(() => seen.length === 2);
    await tick(20);
    expect(seen).to.deep.equal(['a', 'b']);
  });

  it('never runs one key on two workers at once, and runs it again when it changed meanwhile', async () => {
    const queue = new WorkQueue({ concurrency: 4 });
    const gated = gatedHandler();
    queue.run(gated.handler);
    queue.add('a');
    await until(() => gated.calls.length === 1);
    queue.add('a');
    queue.add('a');
    await tick(20);
    expect(gated.calls).to.deep.equal(['a']);
    gated.releaseAll();
    await until(() => gated.calls.length === 2);
    gated.releaseAll();
    await tick(20);
    expect(gated.calls).to.deep.equal(['a', 'a']);
    expect(gated.maxActive()).to.equal(1);
  });

  it('runs different keys in parallel up to its concurrency', async () => {
    const queue = new WorkQueue({ concurrency: 2 });
    const gated = gatedHandler();
    queue.run(gated.handler);
    for (const key of ['a', 'b', 'c']) queue.add(key);
    await until(() => gated.calls.length === 2);
    await tick(20);
    expect(gated.calls).to.deep.equal(['a', 'b']);
    gated.releaseAll();
    await until(() => gated.calls.length === 3);
    gated.releaseAll();
  });

  it('doubles the retry delay per consecutive failure of a key, up to the cap, and forgets it on success', async () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000 });
    expect([0, 1, 2, 3, 4, 10].map((n) => queue.delayFor(n))).to.deep.equal([100, 200, 400, 800, 1000, 1000]);

    const errors: string[] = [];
    const attempts: number[] = [];
    let failuresLeft = 3;
    const started = Date.now();
    const fastQueue = new WorkQueue({ baseDelayMs: 10, onError: (key) => errors.push(key) });
    fastQueue.run(() => {
      attempts.push(Date.now() - started);
      return failuresLeft-- > 0 ? Promise.reject(new Error('transient')) : Promise.resolve();
    });
    fastQueue.add('k');
    await until(() => attempts.length === 4);
    expect(errors).to.deep.equal(['k', 'k', 'k']);
    // Gaps grow: 10, 20, 40 ms at least.
    expect(attempts[1]! - attempts[0]!).to.be.at.least(9);
    expect(attempts[3]! - attempts[2]!).to.be.at.least(39);
    await fastQueue.shutDown();
  });

  it('adds a key after a delay, keeping the earlier of two pending delayed adds', async () => {
    const queue = new WorkQueue();
    const seen: string[] = [];
    queue.run((key) => {
      seen.push(key);
      return Promise.resolve();
    });
    queue.addAfter('later', 10_000);
    queue.addAfter('later', 20);
    await until(() => seen.length === 1);
    expect(seen).to.deep.equal(['later']);
    await queue.shutDown();
  });

  it('keeps collecting keys while paused and works them when run again', async () => {
    const queue = new WorkQueue();
    const seen: string[] = [];
    const handler = (key: string): Promise<void> => {
      seen.push(key);
      return Promise.resolve();
    };
    queue.run(handler);
    await queue.pause();
    queue.add('x');
    await tick(20);
    expect(seen).to.deep.equal([]);
    expect(queue.length).to.equal(1);
    queue.run(handler);
    await until(() => seen.length === 1);
  });

  it('waits for the work in flight when paused', async () => {
    const queue = new WorkQueue();
    const gated = gatedHandler();
    queue.run(gated.handler);
    queue.add('a');
    await until(() => gated.calls.length === 1);
    let paused = false;
    const pausing = queue.pause().then(() => {
      paused = true;
    });
    await tick(20);
    expect(paused).to.equal(false);
    gated.releaseAll();
    await pausing;
    expect(paused).to.equal(true);
  });

  it('takes no keys after shutdown', async () => {
    const queue = new WorkQueue();
    await queue.shutDown();
    queue.add('a');
    queue.addAfter('b', 1);
    expect(queue.length).to.equal(0);
  });
});
