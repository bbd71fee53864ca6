import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import type { ClickDoc } from '../../src/clicks/click.store.ts';
import { connectNats, type Nats } from '../../src/platform/nats.ts';
import { startWorker, type RunningWorker } from '../helpers/api.ts';
import { testEnv } from '../helpers/env.ts';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { until } from '../helpers/wait.ts';
import { aClickRecord } from '../helpers/click-builders.ts';

const DAY_MS = 86_400_000;

function aClick(id: string, ts: Date): ClickRecord {
  return aClickRecord(id, { ts: ts.toISOString(), workspace_id: 'ws_retention', link_id: 'lnk_retention', slug: 'kept' });
}

// MongoDB's TTL monitor runs every 60 s, devdb's every second: the waits below allow for the slower one.
describe('raw click retention (CLICK_RETENTION_DAYS) through the TTL monitor', function () {
  this.timeout(150_000);
  let mongo: TestMongo;
  let client: MongoClient;
  let worker: RunningWorker;
  let nats: Nats;

  before(async () => {
    mongo = await startTestMongo();
    const env = testEnv(mongo, { CLICK_RETENTION_DAYS: '2' });
    worker = await startWorker(env);
    nats = await connectNats({ url: env.NATS_URL!, prefix: env.NATS_PREFIX!, name: 'retention-test', logger: pino({ level: 'silent' }) });
    client = new MongoClient(mongo.uri);
    await client.connect();
  });

  after(async () => {
    await nats.drain();
    await client.close();
    await worker.stop();
    await mongo.stop();
  });

  it('stores a click until CLICK_RETENTION_DAYS after it happened, then the TTL monitor removes it', async () => {
    const clicks = client.db(mongo.dbName).collection<ClickDoc>('clicks');
    const now = Date.now();
    const recent = aClick('clk_retention_recent', new Date(now - DAY_MS));
    const old = aClick('clk_retention_old', new Date(now - 3 * DAY_MS));
    // One message, so both are stored in the same batch.
    await nats.js.publish(nats.subjects.click('ws_retention'), JSON.stringify([old, recent]));

    const ingested = () => worker.infra.metrics.registry.getSingleMetric('linkplane_clicks_ingested_total')!.get().then((m) => m.values[0]?.value ?? 0);
    await until(async () => (await ingested()) === 2, 20_000, 'both clicks are written');
    const stored = (await clicks.findOne({ _id: recent.id }))!;
    // No workspace document: the default plan's retention is longer, so CLICK_RETENTION_DAYS decides.
    expect(stored.expire_at?.toISOString()).to.equal(new Date(Date.parse(recent.ts) + 2 * DAY_MS).toISOString());
    // The old click expired a day before it arrived: written with the recent one, then removed by the monitor.
    await until(async () => (await clicks.countDocuments({ _id: old.id })) === 0, 120_000, 'the expired click is removed');
    expect(await clicks.countDocuments({ _id: recent.id })).to.equal(1);
  });
});
