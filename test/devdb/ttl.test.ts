import { expect } from 'chai';
import { startHarness, type Harness } from './harness.ts';
import { until } from '../helpers/wait.ts';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('devdb TTL indexes', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ ttlIntervalMs: 50 });
  });
  after(async () => {
    await h.stop();
  });

  it('deletes documents once their date plus expireAfterSeconds has passed', async () => {
    const coll = h.db.collection('sessions');
    await coll.createIndex({ expires_at: 1 }, { expireAfterSeconds: 0 });
    const now = Date.now();
    await coll.insertMany([
      { name: 'expired', expires_at: new Date(now - 1000) },
      { name: 'earliest-in-array', expires_at: [new Date(now + 3_600_000), new Date(now - 5000)] },
      { name: 'future', expires_at: new Date(now + 3_600_000) },
      { name: 'not-a-date', expires_at: 'tomorrow' },
      { name: 'missing' },
    ]);
    await sleep(300);
    const names = (await coll.find({}).toArray()).map((d) => d.name as string).sort();
    expect(names).to.deep.equal(['future', 'missing', 'not-a-date']);
  });

  it('honors a non-zero expireAfterSeconds', async () => {
    const coll = h.db.collection('events');
    await coll.createIndex({ created_at: 1 }, { expireAfterSeconds: 60 });
    await coll.insertMany([{ created_at: new Date(Date.now() - 120_000) }, { created_at: new Date(Date.now() - 30_000) }]);
    await sleep(300);
    expect(await coll.countDocuments()).to.equal(1);
  });
});

describe('devdb TTL indexes, walked in date order', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ ttlIntervalMs: 50 });
  });
  after(async () => {
    await h.stop();
  });

  it('expires through a descending TTL index and among values of other types', async () => {
    const coll = h.db.collection('desc');
    await coll.createIndex({ at: -1 }, { expireAfterSeconds: 0 });
    const now = Date.now();
    await coll.insertMany([
      { name: 'old', at: new Date(now - 60_000) },
      { name: 'older', at: new Date(now - 120_000) },
      { name: 'text', at: 'yesterday' },
      { name: 'number', at: 5 },
      { name: 'null', at: null },
      { name: 'new', at: new Date(now + 3_600_000) },
      { name: 'mixed', at: [new Date(now + 3_600_000), 'x', new Date(now - 1000)] },
    ]);
    await until(async () => (await coll.countDocuments({ name: { $in: ['old', 'older', 'mixed'] } })) === 0 || false, 5000, 'the TTL sweep');
    const names = (await coll.find({}).toArray()).map((d) => d.name as string).sort();
    expect(names).to.deep.equal(['new', 'null', 'number', 'text']);
  });
});
