import { expect } from 'chai';
import { Binary, MongoClient, type Db } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { randomClick, seeded, type TestLink } from '../helpers/analytics-clicks.ts';
import { CELL_PRECISION, Hll, TOTAL_PRECISION, hashVisitor } from '../../src/analytics/hll.ts';
import { RollupStore, type RollupView } from '../../src/analytics/rollup.store.ts';
import { COMPACT_AFTER, SketchStore } from '../../src/analytics/sketch.store.ts';
import { isBot } from '../../src/analytics/dimensions.ts';
import type { ClickRecord } from '../../src/clicks/click-record.ts';

const HOUR = Date.parse('2026-11-10T10:00:00Z');
const links: TestLink[] = [{ id: 'lnk_s1', domain_id: 'dom_s', domain: 'go.s.example', slug: 's1', tag_ids: [], folder_id: null }];

/** The registers of the humans among the clicks, at precision p: what the union of the stored parts must hold. */
function humansOf(clicks: readonly ClickRecord[], p: number): Uint8Array {
  const sketch = new Hll(p);
  for (const c of clicks) if (!isBot(c.visitor.visitor_type)) sketch.add(hashVisitor(c.visitor.visitor_id));
  return sketch.registers;
}

/** The union of the parts read for one cell, as registers. */
function unionOf(parts: readonly Uint8Array[], p: number): Uint8Array {
  const sketch = new Hll(p);
  for (const part of parts) sketch.mergeBytes(part);
  return sketch.registers;
}

async function readAll(store: RollupStore, workspaceId: string, dimension: '_' | 'country'): Promise<RollupView[]> {
  const docs: RollupView[] = [];
  for await (const doc of store.read({ workspaceId, links: null, dimension, runs: [{ grain: 'h', from: HOUR, to: HOUR + 3_600_000 }], sketches: true })) docs.push(doc);
  return docs;
}

describe('analytics sketches kept apart from the counts (appended per batch, compacted, read as their union)', function () {
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

  it('compacts the parts of a document after COMPACT_AFTER batches, and the union read stays that of every click', async () => {
    const store = new RollupStore(db);
    const rand = seeded(11);
    const clicks: ClickRecord[] = [];
    const id = `ws_compact||h|${HOUR}|_`;
    for (let batch = 0; batch < COMPACT_AFTER + 3; batch++) {
      const part = Array.from({ length: 20 }, () => randomClick(rand, 'ws_compact', links, HOUR, HOUR + 3_600_000, 400));
      clicks.push(...part);
      await store.apply(part);
    }
    // COMPACT_AFTER parts became one, and three batches came after.
    expect(await store.sketches.parts.countDocuments({ r: id })).to.equal(4);
    const [doc] = await readAll(store, 'ws_compact', '_');
    expect(doc!.v._!._!.c).to.equal(clicks.length);
    expect(unionOf(doc!.s!._!._!.h, TOTAL_PRECISION)).to.deep.equal(humansOf(clicks, TOTAL_PRECISION));
    // Per value too, at the cells' precision.
    const us = clicks.filter((c) => c.visitor.country === 'US');
    const [small] = await readAll(store, 'ws_compact', 'country');
    expect(unionOf(small!.s!.country!.US!.h, CELL_PRECISION)).to.deep.equal(humansOf(us, CELL_PRECISION));
  });

  it('loses no visitor when two workers compact the same document at once', async () => {
    const store = new RollupStore(db);
    const rand = seeded(12);
    const clicks: ClickRecord[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const part = Array.from({ length: 30 }, () => randomClick(rand, 'ws_race', links, HOUR, HOUR + 3_600_000, 1000));
      clicks.push(...part);
      await store.apply(part);
    }
    const id = `ws_race||h|${HOUR}|_`;
    const before = await store.sketches.parts.countDocuments({ r: id });
    expect(before).to.equal(6);
    await Promise.all([new SketchStore(db).compact([id]), new SketchStore(db).compact([id]), new SketchStore(db).compact([id])]);
    expect(await store.sketches.parts.countDocuments({ r: id })).to.be.within(1, 3);
    const [doc] = await readAll(store, 'ws_race', '_');
    expect(unionOf(doc!.s!._!._!.h, TOTAL_PRECISION)).to.deep.equal(humansOf(clicks, TOTAL_PRECISION));
  });

  it('reads the sketches of documents written before they were kept apart together with the new parts', async () => {
    const store = new RollupStore(db);
    const rand = seeded(13);
    const old = Array.from({ length: 40 }, () => randomClick(rand, 'ws_legacy', links, HOUR, HOUR + 3_600_000, 300));
    const fresh = Array.from({ length: 40 }, () => randomClick(rand, 'ws_legacy', links, HOUR, HOUR + 3_600_000, 300));
    // The earlier layout: the sketches inside the rollup document, at `s`.
    const id = `ws_legacy||h|${HOUR}|_`;
    const legacy = new Hll(TOTAL_PRECISION);
    for (const c of old) if (!isBot(c.visitor.visitor_type)) legacy.add(hashVisitor(c.visitor.visitor_id));
    await store.rollups.insertOne({ _id: id, w: 'ws_legacy', l: '', g: 'h', t: new Date(HOUR), d: '_', v: { _: { _: { c: old.length, b: 0, cv: 0 } } }, s: { _: { _: { h: new Binary(legacy.toBytes()) } } } });
    await store.apply(fresh);
    const [doc] = await readAll(store, 'ws_legacy', '_');
    expect(unionOf(doc!.s!._!._!.h, TOTAL_PRECISION)).to.deep.equal(humansOf([...old, ...fresh], TOTAL_PRECISION));
  });

  it('deletes the sketches of a workspace with its rollups, and only of that workspace', async () => {
    const store = new RollupStore(db);
    const rand = seeded(14);
    await store.apply(Array.from({ length: 10 }, () => randomClick(rand, 'ws_del', links, HOUR, HOUR + 3_600_000, 50)));
    // A workspace id that the first one is a prefix of.
    await store.apply(Array.from({ length: 10 }, () => randomClick(rand, 'ws_delx', links, HOUR, HOUR + 3_600_000, 50)));
    const partsOf = (w: string) => store.sketches.parts.countDocuments({ r: { $regex: `^${w}\\|` } });
    expect(await partsOf('ws_del')).to.be.above(0);
    await store.deleteWorkspace('ws_del');
    expect(await partsOf('ws_del')).to.equal(0);
    expect(await store.rollups.countDocuments({ w: 'ws_del' })).to.equal(0);
    expect(await partsOf('ws_delx')).to.be.above(0);
    const [doc] = await readAll(store, 'ws_delx', '_');
    expect(doc!.v._!._!.c).to.equal(10);
  });
});
