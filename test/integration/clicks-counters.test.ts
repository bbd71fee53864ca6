import { expect } from 'chai';
import { MongoClient, type Db } from 'mongodb';
import { pino } from 'pino';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { aClickRecord } from '../helpers/click-builders.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import { ClickStore, type DestinationCount } from '../../src/clicks/click.store.ts';
import { RotatorCounters } from '../../src/clicks/counters.ts';
import { RotatorHealthStore } from '../../src/clicks/rotator-health.store.ts';
import { RollupStore, RollupWriter, rollupPrefix, type RollupPartDoc } from '../../src/analytics/rollup.store.ts';
import { decodeCells } from '../../src/analytics/cells.ts';

const logger = pino({ level: 'silent' });

/** Only what the counters read of a click: link, destination, time. */
function aRotatorClick(linkId: string, destinationId: string, ts: string): ClickRecord {
  return {
    id: `clk_${linkId}_${destinationId}_${ts}_${Math.random()}`,
    ts,
    workspace_id: 'ws_c',
    link_id: linkId,
    decision: { step: 'rotator', ruleId: null, workspaceRule: false, targetingIndex: null, variantIndex: null, destinationId, rotatorFallback: false },
  } as ClickRecord;
}

/** A store whose reads can be made to fail, as when MongoDB is unreachable. */
class FlakyClickStore extends ClickStore {
  failing = false;
  override destinationCounts(linkIds: readonly string[], today: string): Promise<Map<string, Map<string, DestinationCount>>> {
    if (this.failing) return Promise.reject(new Error('MongoDB unreachable'));
    return super.destinationCounts(linkIds, today);
  }
}

describe('rotator counters snapshot (MongoDB protocol, controlled clock)', () => {
  let mongo: TestMongo;
  let client: MongoClient;
  let db: Db;
  let clock: number;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
  });

  after(async () => {
    await client.close();
    await mongo.stop();
  });

  function counters(store: ClickStore): RotatorCounters {
    return new RotatorCounters({ clicks: store, health: new RotatorHealthStore(db), refreshMs: 60_000, logger, forgetAfterMs: 60_000, now: () => clock });
  }

  it('resets today at UTC midnight while the total carries on, for stored and local clicks alike', async () => {
    const store = new ClickStore(db);
    await store.count([aRotatorClick('lnk_day', 'a', '2026-03-01T10:00:00.000Z'), aRotatorClick('lnk_day', 'a', '2026-03-01T23:00:00.000Z')]);
    clock = Date.parse('2026-03-01T23:59:00.000Z');
    const c = counters(store);
    c.watch('lnk_day');
    await c.refresh();
    c.add('lnk_day', 'a');
    expect(c.counts('lnk_day', 'a')).to.deep.equal({ total: 3, today: 3 });

    clock = Date.parse('2026-03-02T00:00:01.000Z');
    expect(c.counts('lnk_day', 'a'), 'a new day before any refresh').to.deep.equal({ total: 3, today: 0 });
    c.add('lnk_day', 'a');
    expect(c.counts('lnk_day', 'a')).to.deep.equal({ total: 4, today: 1 });
  });

  it('keeps the last snapshot and every local click while MongoDB cannot be read, and drops them once it can', async () => {
    const store = new FlakyClickStore(db);
    const day = '2026-04-01';
    await store.count([aRotatorClick('lnk_flaky', 'a', `${day}T08:00:00.000Z`)]);
    clock = Date.parse(`${day}T09:00:00.000Z`);
    const c = counters(store);
    c.watch('lnk_flaky');
    await c.refresh();
    c.add('lnk_flaky', 'a');

    store.failing = true;
    await c.refresh();
    c.add('lnk_flaky', 'a');
    expect(c.counts('lnk_flaky', 'a'), 'snapshot 1 + two local clicks').to.deep.equal({ total: 3, today: 3 });

    // Both local clicks were ingested meanwhile: the next good snapshot has them.
    await store.count([aRotatorClick('lnk_flaky', 'a', `${day}T09:00:00.000Z`), aRotatorClick('lnk_flaky', 'a', `${day}T09:00:00.000Z`)]);
    store.failing = false;
    await c.refresh();
    expect(c.counts('lnk_flaky', 'a')).to.deep.equal({ total: 3, today: 3 });
  });

  it('stops reading a link nobody asked for within forgetAfterMs', async () => {
    const store = new ClickStore(db);
    await store.count([aRotatorClick('lnk_old', 'a', '2026-05-01T08:00:00.000Z')]);
    clock = Date.parse('2026-05-01T09:00:00.000Z');
    const c = counters(store);
    c.watch('lnk_old');
    await c.refresh();
    expect(c.counts('lnk_old', 'a').total).to.equal(1);
    clock += 61_000;
    await c.refresh();
    expect(c.counts('lnk_old', 'a').total, 'not in the new snapshot').to.equal(0);
  });
});

describe('raw click insert of a large batch (MongoDB protocol)', () => {
  let mongo: TestMongo;
  let client: MongoClient;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
  });

  after(async () => {
    await client.close();
    await mongo.stop();
  });

  /**
   * A batch of 2,500 clicks (one of them twice) of which six were stored before, three counted and three not, in
   * every chunk of a thousand: `write` must answer exactly the new clicks and the uncounted duplicates.
   */
  async function writeOverStored(db: Db, write: (store: ClickStore, batch: ClickRecord[]) => Promise<ClickRecord[]>, before?: (store: ClickStore, stored: ClickRecord[]) => Promise<void>): Promise<void> {
    const store = new ClickStore(db);
    await store.ensureIndexes();
    const click = (i: number) => aClickRecord(`clk_big${i}`, { workspace_id: 'ws_big' });
    // Stored before: some counted, some not (a worker died before counting them), in every chunk of the batch below.
    const stored = [5, 999, 1000, 1001, 1998, 2400].map(click);
    await store.insert(stored);
    await store.markCounted(stored.filter((_, k) => k % 2 === 0));
    await before?.(store, stored);
    const batch = Array.from({ length: 2500 }, (_, i) => click(i));
    // The same id twice in one batch (a retried publish outside JetStream's window) is counted once.
    batch.push(click(1500));
    const returned = (await write(store, batch)).map((r) => r.id);
    const uncounted = new Set(['clk_big999', 'clk_big1001', 'clk_big2400']);
    const counted = new Set(['clk_big5', 'clk_big1000', 'clk_big1998']);
    expect(returned).to.have.length(2500 - counted.size);
    expect(new Set(returned).size).to.equal(returned.length);
    for (const id of counted) expect(returned).not.to.include(id);
    for (const id of uncounted) expect(returned).to.include(id);
    expect(await db.collection('clicks').countDocuments({ workspace_id: 'ws_big' })).to.equal(2500);
  }

  it('written a thousand at a time, returns exactly the new clicks and the uncounted duplicates, wherever they fall', async () => {
    await writeOverStored(client.db(`${mongo.dbName}_insert`), (store, batch) => store.insert(batch));
  });

  it('written with its rollup parts (rollups on), answers the same, and rolls up each click once', async () => {
    const db = client.db(`${mongo.dbName}_storing`);
    const rollups = new RollupStore(db);
    await rollups.ensureIndexes();
    let writer: RollupWriter | undefined;
    const expires = new Date('2031-01-01T00:00:00Z');
    await writeOverStored(
      db,
      // Every click to insert gets its expiry (raw click retention), on the sorting path too.
      (_, batch) => writer!.storing(batch, () => expires),
      // Stored while the rollups were off; two of them rolled up since (the rebuild).
      async (store, stored) => {
        writer = new RollupWriter({ client, store: rollups, clicks: store.clicks });
        await writer.rollUp(stored.slice(0, 2));
      },
    );
    expect(await db.collection('clicks').countDocuments({ workspace_id: 'ws_big', rolled_up: { $ne: true } })).to.equal(0);
    expect(await db.collection('clicks').countDocuments({ workspace_id: 'ws_big', expire_at: expires }), 'inserted now, with their expiry').to.equal(2500 - 6);
    let total = 0;
    const prefix = rollupPrefix('ws_big', '_', 'q');
    for await (const part of db.collection<RollupPartDoc>('analytics_parts').find({ r: { $gte: prefix, $lt: `${prefix}~` } })) {
      for (const cell of decodeCells(part.c._!.buffer)) total += cell.c;
    }
    expect(total, 'clicks in the rollups').to.equal(2500);
  });
});
