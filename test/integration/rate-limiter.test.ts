import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { RateLimiter } from '../../src/platform/rate-limiter.ts';

describe('RateLimiter (sliding one-minute window in MongoDB)', () => {
  let mongo: TestMongo;
  let client: MongoClient;
  let now = 0;
  let limiter: RateLimiter;
  let n = 0;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
  });
  after(async () => {
    await client.close();
    await mongo.stop();
  });
  beforeEach(() => {
    now = 1_700_000_000_000;
    limiter = new RateLimiter(client.db(mongo.dbName), pino({ level: 'silent' }), () => now);
    n += 1;
  });

  it('counts down, then refuses with the seconds until room returns', async () => {
    const key = `key_${n}`;
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.check(key, 3));
    expect(decisions.map((d) => d.allowed)).to.deep.equal([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).to.deep.equal([2, 1, 0, 0]);
    expect(decisions[3]!.retryAfter).to.equal(60);
    expect(decisions[0]!.resetAt).to.equal(now / 1000 + 60);
  });

  it('slides: requests leave the window one minute after they were made', async () => {
    const key = `key_${n}`;
    await limiter.check(key, 2);
    now += 30_000;
    await limiter.check(key, 2);
    const full = await limiter.check(key, 2);
    expect(full.allowed).to.equal(false);
    // The first request leaves at +60 s; but the refused one (at +30 s) counts too, so room returns at +90 s.
    expect(full.retryAfter).to.equal(60);
    now += 31_000;
    expect((await limiter.check(key, 2)).allowed, 'two requests still inside the window').to.equal(false);
    now += 60_000;
    expect((await limiter.check(key, 2)).allowed).to.equal(true);
  });

  it('counts concurrent requests for one key exactly, folded into few round trips', async () => {
    const key = `key_${n}`;
    const decisions = await Promise.all(Array.from({ length: 50 }, () => Promise.resolve(limiter.check(key, 20))));
    expect(decisions.filter((d) => d.allowed)).to.have.length(20);
    const remaining = decisions.filter((d) => d.allowed).map((d) => d.remaining).sort((a, b) => a - b);
    expect(remaining).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
  });

  it('admits from local reservations far from the limit; two replicas never pass it and count every request', async () => {
    const key = `key_${n}`;
    const db = client.db(mongo.dbName);
    const replicas = [limiter, new RateLimiter(db, pino({ level: 'silent' }), () => now)];
    let admitted = 0;
    let immediate = 0;
    for (let i = 0; i < 4000; i++) {
      const pending = replicas[i % 2]!.check(key, 2000);
      if (!(pending instanceof Promise)) immediate += 1;
      if ((await pending).allowed) admitted += 1;
      // Let background refills land now and then, as they would between requests.
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    expect(immediate, 'most requests far from the limit did not wait for the database').to.be.greaterThan(500);
    expect(admitted).to.be.at.most(2000);
    expect(admitted, 'reservations held back at most a little').to.be.at.least(1900);
    await Promise.all(replicas.map((r) => r.close()));
    const doc = await db.collection<{ _id: string; b: Record<string, number> }>('rate_limits').findOne({ _id: key });
    const counted = Object.values(doc!.b).reduce((a, b) => a + b, 0);
    expect(counted, 'every request counted once, unused reservations given back').to.equal(4000);
  });

  it('keeps keys apart', async () => {
    expect((await limiter.check(`a_${n}`, 1)).allowed).to.equal(true);
    expect((await limiter.check(`b_${n}`, 1)).allowed).to.equal(true);
    expect((await limiter.check(`a_${n}`, 1)).allowed).to.equal(false);
  });
});
