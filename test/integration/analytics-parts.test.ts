import { expect } from 'chai';
import { Binary, MongoClient, type Db } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { randomClick, seeded, type TestLink } from '../helpers/analytics-clicks.ts';
import { CELL_PRECISION, Hll, TOTAL_PRECISION, hashVisitor } from '../../src/analytics/hll.ts';
import { COMPACT_AFTER, RollupStore, rollupId, type RollupView } from '../../src/analytics/rollup.store.ts';
import { migrateLegacyRollups } from '../../src/analytics/legacy-rollups.ts';
import { RollupSettler } from '../../src/analytics/settler.ts';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { EstimateMemo, PartCache } from '../../src/analytics/part-cache.ts';
import { AnalyticsService, type AnalyticsScope } from '../../src/analytics/analytics.service.ts';
import { EdgeClickStore } from '../../src/analytics/edge-clicks.store.ts';
import { PLANS } from '../../src/tenancy/plans.ts';
import { isBot } from '../../src/analytics/dimensions.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';

const HOUR = Date.parse('2026-11-10T10:00:00Z');
const links: TestLink[] = [
  { id: 'lnk_s1', domain_id: 'dom_s', domain: 'go.s.example', slug: 's1', tag_ids: [], folder_id: null },
  { id: 'lnk_s2', domain_id: 'dom_s', domain: 'go.s.example', slug: 's2', tag_ids: [], folder_id: null },
];

/** The registers of the humans among the clicks, at precision p: what the union of the stored parts must hold. */
function humansOf(clicks: readonly ClickRecord[], p: number): Uint8Array {
  const sketch = new Hll(p);
  for (const c of clicks) if (!isBot(c.visitor.visitor_type)) sketch.add(hashVisitor(c.visitor.visitor_id));
  return sketch.registers;
}

/** Every part of the hour's rollup of one dimension, as read for a query. */
async function readAll(store: RollupStore, workspaceId: string, dimension: '_' | 'country'): Promise<RollupView[]> {
  const docs: RollupView[] = [];
  for await (const doc of store.read({ workspaceId, links: null, dimension, runs: [{ grain: 'h', from: HOUR, to: HOUR + 3_600_000 }] })) docs.push(doc);
  return docs;
}

/** A cell summed over the parts read: clicks, and the union of the human sketches at precision p. */
function cellOf(views: readonly RollupView[], key: string, p: number): { clicks: number; humans: Uint8Array } {
  const sketch = new Hll(p);
  let clicks = 0;
  for (const view of views) {
    for (const cell of view.cells) {
      if (cell.key !== key) continue;
      clicks += cell.c;
      if (cell.humans) sketch.mergeBytes(cell.humans);
    }
  }
  return { clicks, humans: sketch.registers };
}

/** The rollups the parts belong to, each once. */
const rollupsOf = (parts: ReadonlyArray<{ r: string }>) => [...new Set(parts.map((part) => part.r))];

const randomClicks = (rand: () => number, w: string, n: number) => Array.from({ length: n }, () => randomClick(rand, w, links, HOUR, HOUR + 3_600_000, 400));

describe('analytics rollups stored as parts (one per batch, merged, settled, read as their sum)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let client: MongoClient;
  let db: Db;

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
    await new RollupStore(db).ensureIndexes();
  });

  after(async () => {
    await client?.close();
    await mongo?.stop();
  });

  it('merges the parts of a rollup after COMPACT_AFTER batches, and the figures read stay those of every click', async () => {
    const store = new RollupStore(db);
    const rand = seeded(11);
    const clicks: ClickRecord[] = [];
    const id = rollupId('ws_compact', '', 'h', HOUR, '_');
    for (let batch = 0; batch < COMPACT_AFTER + 3; batch++) {
      const part = randomClicks(rand, 'ws_compact', 20);
      clicks.push(...part);
      await store.apply(part);
    }
    // COMPACT_AFTER parts became one, and three batches came after.
    expect(await store.parts.countDocuments({ r: id })).to.equal(4);
    const totals = cellOf(await readAll(store, 'ws_compact', '_'), '_', TOTAL_PRECISION);
    expect(totals.clicks).to.equal(clicks.length);
    expect(totals.humans).to.deep.equal(humansOf(clicks, TOTAL_PRECISION));
    // Per value too, at the cells' precision.
    const us = clicks.filter((c) => c.visitor.country === 'US');
    const country = cellOf(await readAll(store, 'ws_compact', 'country'), 'US', CELL_PRECISION);
    expect(country.clicks).to.equal(us.length);
    expect(country.humans).to.deep.equal(humansOf(us, CELL_PRECISION));
  });

  it('counts every click once when three processes merge the same rollups at once', async () => {
    const rand = seeded(12);
    const clicks: ClickRecord[] = [];
    const writer = new RollupStore(db);
    for (let batch = 0; batch < 6; batch++) {
      const part = randomClicks(rand, 'ws_race', 30);
      clicks.push(...part);
      await writer.apply(part);
    }
    const ids = [rollupId('ws_race', '', 'h', HOUR, '_'), rollupId('ws_race', '', 'h', HOUR, 'small'), rollupId('ws_race', 'lnk_s1', 'd', HOUR - (HOUR % 86_400_000), '*')];
    expect(await writer.parts.countDocuments({ r: ids[0] })).to.equal(6);
    await Promise.all([new RollupStore(db).compact(ids, true), new RollupStore(db).compact(ids, true), new RollupStore(db).compact(ids, false)]);
    expect(await writer.parts.countDocuments({ r: ids[0] })).to.be.within(1, 2);
    const totals = cellOf(await readAll(writer, 'ws_race', '_'), '_', TOTAL_PRECISION);
    expect(totals.clicks).to.equal(clicks.length);
    expect(totals.humans).to.deep.equal(humansOf(clicks, TOTAL_PRECISION));
    const us = clicks.filter((c) => c.visitor.country === 'US');
    expect(cellOf(await readAll(writer, 'ws_race', 'country'), 'US', CELL_PRECISION).clicks).to.equal(us.length);
  });

  it("an api's cache of part bytes answers as the database does, reads merged and new parts afresh, and keeps to its budget", async () => {
    const writer = new RollupStore(db);
    const registry = new Registry();
    const cache = new PartCache(1 << 20, registry);
    const reader = new RollupStore(db);
    reader.cacheParts(cache);
    const counter = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0;
    const rand = seeded(23);
    const clicks: ClickRecord[] = [];
    for (let batch = 0; batch < 3; batch++) {
      const part = randomClicks(rand, 'ws_cache', 30);
      clicks.push(...part);
      await writer.apply(part);
    }
    const id = rollupId('ws_cache', '', 'h', HOUR, '_');
    expect(await writer.parts.countDocuments({ r: id })).to.equal(3);
    const sorted = (views: RollupView[]) => views.map((v) => JSON.stringify(v)).sort();
    const uncached = sorted(await readAll(writer, 'ws_cache', '_'));
    // First read: every part fetched and kept; second read: every part from the cache, the same views.
    expect(sorted(await readAll(reader, 'ws_cache', '_'))).to.deep.equal(uncached);
    expect([await counter('linkplane_analytics_part_cache_misses_total'), await counter('linkplane_analytics_part_cache_hits_total')]).to.deep.equal([3, 0]);
    expect(sorted(await readAll(reader, 'ws_cache', '_'))).to.deep.equal(uncached);
    expect([await counter('linkplane_analytics_part_cache_misses_total'), await counter('linkplane_analytics_part_cache_hits_total')]).to.deep.equal([3, 3]);
    // Another dimension of the same parts is kept apart.
    expect(sorted(await readAll(reader, 'ws_cache', 'country'))).to.deep.equal(sorted(await readAll(writer, 'ws_cache', 'country')));
    expect(await counter('linkplane_analytics_part_cache_misses_total')).to.equal(6);
    // A merge replaces the three parts by a new one, and a batch after it adds another: both read afresh, nothing twice.
    await writer.compact([id], true);
    const late = randomClicks(rand, 'ws_cache', 5);
    clicks.push(...late);
    await writer.apply(late);
    const views = await readAll(reader, 'ws_cache', '_');
    expect(views).to.have.length(2);
    expect(await counter('linkplane_analytics_part_cache_misses_total')).to.equal(8);
    const totals = cellOf(views, '_', TOTAL_PRECISION);
    expect(totals.clicks).to.equal(clicks.length);
    expect(totals.humans).to.deep.equal(humansOf(clicks, TOTAL_PRECISION));
    // A budget that holds either part but not both: the older one goes, the answer stays whole.
    const entrySizes = (await writer.parts.find({ r: id }).toArray()).map((part) => 128 + PartCache.key(part._id.toHexString(), '_').length * 2 + part.c._!.buffer.byteLength);
    expect(entrySizes).to.have.length(2);
    const small = new PartCache(Math.max(...entrySizes) + Math.min(...entrySizes) - 1);
    const tight = new RollupStore(db);
    tight.cacheParts(small);
    for (let round = 0; round < 3; round++) {
      const read = cellOf(await readAll(tight, 'ws_cache', '_'), '_', TOTAL_PRECISION);
      expect(read.clicks).to.equal(clicks.length);
      expect(small.bytes).to.be.at.most(small.maxBytes);
    }
    expect(small.size).to.equal(1);
  });

  it('kept unique-visitor estimates answer exactly as estimates worked out afresh while parts are added, merged and settled', async () => {
    const store = new RollupStore(db);
    const registry = new Registry();
    const memo = new EstimateMemo(1 << 20, registry);
    const service = (kept?: EstimateMemo) => new AnalyticsService({ rollups: store, edges: new EdgeClickStore(db.collection('clicks')), links: db.collection('links'), defaultBaseUrl: 'https://lp.example', memo: kept });
    const [keeping, afresh] = [service(memo), service()];
    const scope: AnalyticsScope = { workspaceId: 'ws_memo', plan: PLANS.business! };
    // Three hours ending two days ago, answered in Kolkata (buckets of half hours: quarter-hour parts at the edges).
    const from = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 51 * 3_600_000;
    const range = { start: new Date(from).toISOString(), end: new Date(from + 3 * 3_600_000).toISOString(), timezone: 'Asia/Kolkata' };
    const answers = (s: AnalyticsService) =>
      Promise.all([
        s.summary(scope, { ...range, bots: 'include' }),
        s.timeseries(scope, { ...range, granularity: 'hour' }),
        s.timeseries(scope, { ...range, granularity: 'hour', bots: 'only', country: 'US,FR' }),
        s.timeseries(scope, { ...range, granularity: 'hour', bots: 'only', country: 'US' }),
        s.breakdown(scope, { ...range, dimension: 'country' }),
        s.breakdown(scope, { ...range, dimension: 'link', country: 'IN' }),
        s.topLinks(scope, { ...range, sort: 'unique_visitors' }),
      ]);
    const rand = seeded(31);
    const hits = async () => (await registry.getSingleMetric('linkplane_analytics_estimate_memo_hits_total')!.get()).values[0]?.value ?? 0;
    const batch = () => store.apply(Array.from({ length: 60 }, () => randomClick(rand, 'ws_memo', links, from, from + 3 * 3_600_000, 200)));
    await batch();
    for (const change of [() => Promise.resolve(), batch, async () => store.compact(rollupsOf(await store.parts.find({}).toArray()), false), batch, () => store.settle(new Date(from + 4 * 3_600_000))]) {
      await change();
      const before = await hits();
      const expected = await answers(afresh);
      expect(await answers(keeping), 'first answer').to.deep.equal(expected);
      expect(await answers(keeping), 'answer from kept estimates').to.deep.equal(expected);
      expect(await hits(), 'the second answer took its estimates from the memo').to.be.greaterThan(before);
    }
    expect(memo.size).to.be.greaterThan(0);
  });

  it('settles the buckets that ended into one part each, and leaves open buckets alone', async () => {
    const store = new RollupStore(db);
    const rand = seeded(15);
    const clicks: ClickRecord[] = [];
    for (let batch = 0; batch < 3; batch++) {
      const part = randomClicks(rand, 'ws_settle', 25);
      clicks.push(...part);
      await store.apply(part);
    }
    const hour = rollupId('ws_settle', '', 'h', HOUR, '_');
    const day = rollupId('ws_settle', '', 'd', HOUR - (HOUR % 86_400_000), '_');
    expect(await store.parts.countDocuments({ r: hour })).to.equal(3);
    // The hour has ended, its day has not.
    await store.settle(new Date(HOUR + 3_600_000 + 1));
    expect(await store.parts.find({ r: hour }).toArray()).to.have.length(1).and.satisfy((parts: Array<{ u?: Date }>) => parts[0]!.u === undefined);
    expect(await store.parts.countDocuments({ r: day })).to.equal(3);
    expect(cellOf(await readAll(store, 'ws_settle', '_'), '_', TOTAL_PRECISION).clicks).to.equal(clicks.length);
    // A late click adds a part to the settled hour; the next round settles it again.
    const late = randomClicks(rand, 'ws_settle', 1);
    await store.apply(late);
    expect(await store.parts.countDocuments({ r: hour })).to.equal(2);
    await store.settle(new Date(HOUR + 3_600_000 + 1));
    expect(await store.parts.countDocuments({ r: hour })).to.equal(1);
    const totals = cellOf(await readAll(store, 'ws_settle', '_'), '_', TOTAL_PRECISION);
    expect(totals.clicks).to.equal(clicks.length + 1);
    expect(totals.humans).to.deep.equal(humansOf([...clicks, ...late], TOTAL_PRECISION));
  });

  it('settles a backlog of ended buckets a few parts at a time, every one of them', async () => {
    // A database of its own (settling takes every workspace's ended buckets), through a client that shows the reads.
    const watched = new MongoClient(mongo.uri, { monitorCommands: true });
    await watched.connect();
    const limits: unknown[] = [];
    watched.on('commandStarted', (event) => {
      if (event.commandName === 'find' && (event.command.filter as { u?: unknown } | undefined)?.u) limits.push(event.command.limit);
    });
    const own = watched.db(`${mongo.dbName}_backlog`);
    const store = new RollupStore(own);
    await store.ensureIndexes();
    const rand = seeded(16);
    // Six hours of clicks in three batches: many rollups (hours, six hours, groups, link days), three parts each.
    const clicks: ClickRecord[] = [];
    for (let batch = 0; batch < 3; batch++) {
      const part = Array.from({ length: 40 }, () => randomClick(rand, 'ws_backlog', links, HOUR, HOUR + 6 * 3_600_000, 400));
      clicks.push(...part);
      await store.apply(part);
    }
    const before = new Date(HOUR + 6 * 3_600_000 + 1);
    const ended = new Set((await store.parts.find({ u: { $lt: before } }).toArray()).map((part) => part.r));
    expect(ended.size).to.be.greaterThan(30);
    limits.length = 0;
    expect(await store.settle(before, 7)).to.equal(ended.size);
    expect(await store.parts.countDocuments({ u: { $lt: before } })).to.equal(0);
    for (const r of ended) expect(await store.parts.countDocuments({ r }), r).to.equal(1);
    let counted = 0;
    for await (const doc of store.read({ workspaceId: 'ws_backlog', links: null, dimension: '_', runs: [{ grain: 'h', from: HOUR, to: HOUR + 6 * 3_600_000 }] })) {
      for (const cell of doc.cells) counted += cell.c;
    }
    expect(counted).to.equal(clicks.length);
    // Each read of the backlog asked for seven parts at most: never for all of them at once.
    expect(limits.length).to.be.greaterThan(4);
    expect(limits.every((limit) => limit === 7)).to.equal(true);
    await own.dropDatabase();
    await watched.close();
  });

  it('stops settling when a round finds the same rollups again, as when another process keeps merging them', async () => {
    const own = client.db(`${mongo.dbName}_given_way`);
    // Every merge gives way (compact leaves a chunk another process merged meanwhile to it): nothing gets settled.
    class GivingWay extends RollupStore {
      override async compact(): Promise<void> {}
    }
    const store = new GivingWay(own);
    await store.ensureIndexes();
    const rand = seeded(17);
    await store.apply(Array.from({ length: 30 }, () => randomClick(rand, 'ws_given_way', links, HOUR, HOUR + 3_600_000, 400)));
    const before = new Date(HOUR + 3_600_000 + 1);
    const left = await store.parts.countDocuments({ u: { $lt: before } });
    expect(left).to.be.greaterThan(3);
    // Chunks smaller than the backlog: without the check, the same first chunk would be read for ever.
    const settled = await store.settle(before, 3);
    expect(settled).to.be.at.most(3);
    expect(await store.parts.countDocuments({ u: { $lt: before } })).to.equal(left);
    await own.dropDatabase();
  });

  it('turns rollups of the earlier layout (counts in the document, sketches in it and apart) into parts, once', async () => {
    const store = new RollupStore(db);
    const rand = seeded(13);
    const old = randomClicks(rand, 'ws_legacy', 40);
    const apart = randomClicks(rand, 'ws_legacy', 40);
    const fresh = randomClicks(rand, 'ws_legacy', 40);
    const sketch = (clicks: ClickRecord[]) => {
      const hll = new Hll(TOTAL_PRECISION);
      for (const c of clicks) if (!isBot(c.visitor.visitor_type)) hll.add(hashVisitor(c.visitor.visitor_id));
      return new Binary(hll.toBytes());
    };
    const id = `ws_legacy||h|${HOUR}|_`;
    const all = [...old, ...apart];
    const bots = all.filter((c) => isBot(c.visitor.visitor_type)).length;
    await db.collection('analytics_rollups').insertOne({ _id: id as never, w: 'ws_legacy', l: '', g: 'h', t: new Date(HOUR), d: '_', v: { _: { _: { c: all.length, b: bots, cv: 2, rev: { EUR: 990 } } } }, s: { _: { _: { h: sketch(old) } } } });
    await db.collection('analytics_sketches').insertOne({ r: id, s: { _: { _: { h: sketch(apart) } } } });
    await store.apply(fresh);
    expect(await migrateLegacyRollups(db, store)).to.equal(1);
    expect(await migrateLegacyRollups(db, store)).to.equal(0);
    expect(await db.collection('analytics_rollups').countDocuments()).to.equal(0);
    expect(await db.collection('analytics_sketches').countDocuments()).to.equal(0);
    const views = await readAll(store, 'ws_legacy', '_');
    const totals = cellOf(views, '_', TOTAL_PRECISION);
    expect(totals.clicks).to.equal(old.length + apart.length + fresh.length);
    expect(totals.humans).to.deep.equal(humansOf([...old, ...apart, ...fresh], TOTAL_PRECISION));
    const legacy = views.flatMap((v) => v.cells).find((c) => c.cv === 2)!;
    expect([legacy.b, legacy.rev]).to.deep.equal([bots, { EUR: 990 }]);
    // The earlier layout had no six-hour rollups: the hour counts in its six hours too.
    const six = HOUR - (HOUR % (6 * 3_600_000));
    const quarterDay: RollupView[] = [];
    for await (const doc of store.read({ workspaceId: 'ws_legacy', links: null, dimension: '_', runs: [{ grain: 's', from: six, to: six + 6 * 3_600_000 }] })) quarterDay.push(doc);
    expect(cellOf(quarterDay, '_', TOTAL_PRECISION)).to.deep.equal(totals);
  });

  it("the worker's settling job turns legacy rollups into parts on its first round, and settles ended buckets every round", async () => {
    const store = new RollupStore(db);
    const rand = seeded(16);
    const id = `ws_job||h|${HOUR}|_`;
    await db.collection('analytics_rollups').insertOne({ _id: id as never, w: 'ws_job', l: '', g: 'h', t: new Date(HOUR), d: '_', v: { _: { _: { c: 5, b: 0, cv: 0 } } } });
    for (let batch = 0; batch < 3; batch++) await store.apply(randomClicks(rand, 'ws_job', 10));
    const settler = new RollupSettler({ db, store, logger: pino({ level: 'silent' }), intervalMs: 3_600_000 });
    await settler.runOnce(new Date(HOUR + 2 * 86_400_000));
    expect(await db.collection('analytics_rollups').countDocuments({ w: 'ws_job' })).to.equal(0);
    // Every bucket of the day has ended: one part per rollup, none left to settle.
    expect(await store.parts.countDocuments({ r: rollupId('ws_job', '', 'h', HOUR, '_') })).to.equal(1);
    expect(await store.parts.countDocuments({ r: { $regex: '^ws_job\\|' }, u: { $exists: true } })).to.equal(0);
    expect(cellOf(await readAll(store, 'ws_job', '_'), '_', TOTAL_PRECISION).clicks).to.equal(35);
  });

  it('deletes the parts of a workspace, and only of that workspace', async () => {
    const store = new RollupStore(db);
    const rand = seeded(14);
    await store.apply(randomClicks(rand, 'ws_del', 10));
    // A workspace id that the first one is a prefix of.
    await store.apply(randomClicks(rand, 'ws_delx', 10));
    const partsOf = (w: string) => store.parts.countDocuments({ r: { $regex: `^${w}\\|` } });
    expect(await partsOf('ws_del')).to.be.above(0);
    await store.deleteWorkspace('ws_del');
    expect(await partsOf('ws_del')).to.equal(0);
    expect(await partsOf('ws_delx')).to.be.above(0);
    expect(cellOf(await readAll(store, 'ws_delx', '_'), '_', TOTAL_PRECISION).clicks).to.equal(10);
  });
});
