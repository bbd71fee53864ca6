import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { NATS_URL, natsPrefix, testEnv } from '../helpers/env.ts';
import { startWorker } from '../helpers/api.ts';
import { OwnNatsServer } from '../helpers/nats-server.ts';
import { connectNats, provisionStreams, type Nats } from '../../src/platform/nats.ts';
import type { Invalidation } from '../../src/platform/cache-bus.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import { ClickIds } from '../../src/clicks/click-id.ts';
import { ClickPublisher } from '../../src/clicks/publisher.ts';
import { ClickSpool } from '../../src/clicks/click-spool.ts';
import { decodeClicks } from '../../src/clicks/click-wire.ts';
import { ClickStore } from '../../src/clicks/click.store.ts';
import { ClickIngestor, type BatchHook } from '../../src/clicks/ingest.ts';
import { RotatorCounters } from '../../src/clicks/counters.ts';
import { RotatorHealthStore } from '../../src/clicks/rotator-health.store.ts';
import { AbFeedback } from '../../src/clicks/ab-feedback.ts';
import { ConversionStore, type ConversionDoc } from '../../src/conversions/conversion.store.ts';
import { LinkStore, type LinkDoc } from '../../src/links/link.store.ts';
import { ClickUsage } from '../../src/clicks/usage-meter.ts';
import { EventStore } from '../../src/events/event.store.ts';
import { WorkspaceStore } from '../../src/tenancy/workspace.store.ts';
import { UsageStore, periodOf } from '../../src/tenancy/usage.store.ts';
import { until } from '../helpers/wait.ts';
import { aClickRecord, type ClickOverrides } from '../helpers/click-builders.ts';
import { seeded } from '../helpers/analytics-clicks.ts';

const logger = pino({ level: 'silent' });
const ids = new ClickIds('a-test-secret-key-of-at-least-32-characters');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function aClick(overrides: ClickOverrides = {}): ClickRecord {
  return aClickRecord(ids.issue(overrides.workspace_id ?? 'ws_clicks'), overrides);
}

const rotated = (linkId: string, destinationId: string, ts?: string): ClickRecord =>
  aClick({ link_id: linkId, ...(ts ? { ts } : {}), decision: { step: 'rotator', destinationId } });

/** The click ids in the CLICKS stream, in stream order (a message holds one click or a batch of them). */
async function clicksInStream(nats: Nats): Promise<string[]> {
  const stream = nats.subjects.stream('CLICKS');
  let left = (await nats.jsm.streams.info(stream)).state.messages;
  const ids: string[] = [];
  if (left === 0) return ids;
  const consumer = await nats.js.consumers.get(stream);
  const messages = await consumer.fetch({ max_messages: left, expires: 5000 });
  for await (const msg of messages) {
    for (const click of decodeClicks(msg.json<unknown>()) ?? []) ids.push(click.id);
    if (--left === 0) break;
  }
  return ids;
}

/**
 * The same connection, seen on the wire: each message published with a Nats-Msg-Id is shown to `sent`, and a message
 * to a subscription (an ack) is lost on its way in while `lose()` says so.
 */
function onTheWire(nats: Nats, watch: { lose: () => boolean; sent: (id: string, data: string) => void }): Nats {
  const nc = new Proxy(nats.nc, {
    get(target, property) {
      if (property === 'subscribe') {
        return (subject: string, options: Parameters<typeof target.subscribe>[1]) =>
          target.subscribe(subject, {
            ...options,
            callback: (error, msg) => {
              if (error === null && watch.lose()) return;
              void options!.callback!(error, msg);
            },
          });
      }
      if (property === 'publish') {
        return (subject: string, data: string, options: Parameters<typeof target.publish>[2]) => {
          const id = options?.headers?.get('Nats-Msg-Id');
          if (id) watch.sent(id, data);
          target.publish(subject, data, options);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ...nats, nc };
}

function metric(registry: Registry, name: string): Promise<number> {
  return registry.getSingleMetric(name)!.get().then((m) => m.values[0]?.value ?? 0);
}

interface Pipeline {
  nats: Nats;
  store: ClickStore;
  ingestor: ClickIngestor;
  registry: Registry;
}

/** A database of the test's own, NATS streams of its own, and an ingestor over them. */
async function aPipeline(
  db: Db,
  options: { url?: string; store?: ClickStore; batchSize?: number; batchWaitMs?: number; counting?: BatchHook[]; derived?: BatchHook[] } = {},
): Promise<Pipeline> {
  const nats = await connectNats({ url: options.url ?? NATS_URL, prefix: natsPrefix(), name: 'clicks-test', logger });
  await provisionStreams(nats, 3_600_000);
  const store = options.store ?? new ClickStore(db);
  await store.ensureIndexes();
  const registry = new Registry();
  const ingestor = new ClickIngestor({
    nats,
    store,
    logger,
    registry,
    batchSize: options.batchSize ?? 10,
    batchWaitMs: options.batchWaitMs ?? 40,
    retryDelayMs: 100,
    ...(options.counting ? { counting: options.counting } : {}),
    ...(options.derived ? { derived: options.derived } : {}),
  });
  await ingestor.start();
  return { nats, store, ingestor, registry };
}

describe('click capture and ingestion (real NATS, MongoDB protocol)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let client: MongoClient;
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
  });

  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await client.close();
    await mongo.stop();
  });

  /** A fresh database per test, so counts never mix. */
  let dbCount = 0;
  function aDb(): Db {
    return client.db(`${mongo.dbName}_${dbCount++}`);
  }

  async function started(db: Db, options: Parameters<typeof aPipeline>[1] = {}): Promise<Pipeline> {
    const pipeline = await aPipeline(db, options);
    cleanups.push(async () => {
      await pipeline.ingestor.stop();
      await pipeline.nats.drain();
    });
    return pipeline;
  }

  function aPublisher(nats: Nats, bufferMax = 1000): { publisher: ClickPublisher; registry: Registry } {
    const registry = new Registry();
    return { publisher: new ClickPublisher({ nats, logger, registry, bufferMax, ackTimeoutMs: 1000 }), registry };
  }

  describe('publisher to MongoDB', () => {
    it('stores every recorded click once, as one document per click with its time as a Date, written in batches', async () => {
      const db = aDb();
      const batches: number[] = [];
      const store = new (class extends ClickStore {
        override insert(records: readonly ClickRecord[]): Promise<ClickRecord[]> {
          batches.push(records.length);
          return super.insert(records);
        }
      })(db);
      const { nats } = await started(db, { store, batchSize: 10 });
      const { publisher, registry } = aPublisher(nats);
      const clicks = Array.from({ length: 35 }, (_, i) => aClick({ slug: `s${i}` }));
      for (const click of clicks) publisher.record(click);

      await until(async () => (await store.clicks.countDocuments()) === 35 || false, 20_000, '35 clicks stored');
      const doc = await store.clicks.findOne({ _id: clicks[7]!.id });
      expect(doc?.ts).to.be.instanceOf(Date);
      expect(doc?.ts.toISOString()).to.equal(clicks[7]!.ts);
      expect(doc).to.include({ workspace_id: 'ws_clicks', link_id: 'lnk_plain', slug: 's7', counted: true });
      expect(Math.max(...batches), 'no batch above batchSize').to.be.at.most(10);
      expect(batches.length, 'fewer writes than clicks').to.be.below(35);
      expect(await metric(registry, 'linkplane_clicks_published_total')).to.equal(35);
      expect(publisher.depth()).to.equal(0);
    });

    it('measures how far behind its click each write is (linkplane_click_ingest_lag_seconds)', async () => {
      const db = aDb();
      const { nats, store, registry } = await started(db, { batchSize: 10 });
      const { publisher } = aPublisher(nats);
      const late = new Date(Date.now() - 90_000).toISOString();
      for (let i = 0; i < 4; i++) publisher.record(aClick({ slug: `late${i}`, ts: late }));
      publisher.record(aClick({ slug: 'fresh' }));
      await until(async () => (await store.clicks.countDocuments()) === 5 || false, 20_000, '5 clicks stored');
      type Sample = { metricName?: string; labels: Record<string, unknown>; value: number };
      const samples = async () => (await registry.getSingleMetric('linkplane_click_ingest_lag_seconds')!.get()).values as Sample[];
      // A click is observed once counted, after it is stored: wait for the five observations, not only the five clicks.
      const values = await until(async () => {
        const now = await samples();
        return now.find((v) => v.metricName?.endsWith('_count'))?.value === 5 ? now : false;
      }, 20_000, '5 lags observed');
      const bucket = (le: number) => values.find((v) => v.metricName?.endsWith('_bucket') && v.labels.le === le)?.value;
      expect(bucket(30), 'the fresh click only').to.equal(1);
      expect(bucket(120), 'and the four 90 s late').to.equal(5);
      expect(values.find((v) => v.metricName?.endsWith('_sum'))?.value).to.be.within(360, 400);
    });

    it('writes a batch as soon as batchSize clicks are in hand, however few messages carry them', async () => {
      const db = aDb();
      // No timer will flush within the test: only a full batch of clicks can.
      const { nats, store } = await started(db, { batchSize: 100, batchWaitMs: 600_000 });
      const { publisher } = aPublisher(nats);
      // Recorded in one turn: they travel as one message of 100 clicks.
      for (let i = 0; i < 100; i++) publisher.record(aClick());
      await until(async () => (await store.clicks.countDocuments()) === 100 || false, 10_000, 'a full batch of clicks written');
    });

    it('flush() resolves with nothing left once every held click is acknowledged', async () => {
      const db = aDb();
      const { nats, store } = await started(db);
      const { publisher } = aPublisher(nats);
      for (let i = 0; i < 20; i++) publisher.record(aClick());
      expect(await publisher.flush(10_000)).to.equal(0);
      await until(async () => (await store.clicks.countDocuments()) === 20 || false, 20_000, '20 clicks stored');
    });
    it('drops a click NATS refuses outright (an illegal subject) without holding back the clicks behind it', async () => {
      const db = aDb();
      const { nats, store } = await started(db);
      const { publisher, registry } = aPublisher(nats);
      const good = [aClick(), aClick()];
      publisher.record(aClick({ workspace_id: 'ws with spaces' }));
      for (const click of good) publisher.record(click);
      await until(async () => (await store.clicks.countDocuments()) === 2 || false, 10_000, 'the other clicks stored');
      expect(await metric(registry, 'linkplane_clicks_dropped_total')).to.equal(1);
      expect(publisher.depth()).to.equal(0);
    });

    it('keeps a click JetStream refused (no stream yet), counts the failure, and publishes it on a later attempt', async () => {
      const nats = await connectNats({ url: NATS_URL, prefix: natsPrefix(), name: 'clicks-test', logger });
      cleanups.push(() => nats.drain());
      const { publisher, registry } = aPublisher(nats);
      for (let i = 0; i < 3; i++) publisher.record(aClick());
      await until(async () => (await metric(registry, 'linkplane_click_publish_failures_total')) >= 3 || false, 10_000, 'failures counted');
      expect(publisher.depth(), 'refused clicks are kept').to.equal(3);

      await provisionStreams(nats, 3_600_000);
      await until(() => publisher.depth() === 0 || false, 10_000, 'published once the stream exists');
      expect((await clicksInStream(nats)).length).to.equal(3);
      expect(await metric(registry, 'linkplane_clicks_published_total')).to.equal(3);
    });

    it('sends a batch re-formed after lost acks under an id of its own contents, and stores every click', async () => {
      // JetStream stores a message and its ack is lost (as when a stream leader dies): the publisher sends the clicks
      // again, and failed batches come back to the queue in another order with new clicks among them. The stream
      // answers a message whose id it has seen as stored and drops it, so an id must never carry other clicks.
      const db = aDb();
      const { nats, store } = await started(db, { batchSize: 50 });
      const random = seeded(37);
      let losing = true;
      const sent = new Map<string, string>();
      const reused: string[] = [];
      const lossy = onTheWire(nats, {
        lose: () => losing && random() < 0.7,
        sent: (id, data) => {
          const carried = (decodeClicks(JSON.parse(data)) ?? []).map((c) => c.id).join(',');
          if ((sent.get(id) ?? carried) !== carried) reused.push(id);
          sent.set(id, carried);
        },
      });
      const registry = new Registry();
      // Batches of 3 at most and most acks lost: the same click starts re-formed batches of the same size again.
      const publisher = new ClickPublisher({ nats: lossy, logger, registry, bufferMax: 10_000, ackTimeoutMs: 120, maxBatch: 3 });
      const clicks: ClickRecord[] = [];
      for (let turn = 0; turn < 100; turn++) {
        for (let n = 1 + Math.floor(random() * 4); n > 0; n--) {
          const click = aClick();
          clicks.push(click);
          publisher.record(click);
        }
        await sleep(5 + Math.floor(random() * 40));
      }
      losing = false;
      await until(() => publisher.depth() === 0 || false, 20_000, 'every click acknowledged');
      expect(await metric(registry, 'linkplane_click_publish_failures_total'), 'acks were lost').to.be.greaterThan(20);
      expect(reused, 'message ids sent again with other clicks').to.deep.equal([]);
      await until(async () => (await store.clicks.countDocuments()) === clicks.length || false, 20_000, 'every click stored').catch(() => undefined);
      const stored = (await store.clicks.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
      expect(stored).to.have.members(clicks.map((c) => c.id));
    });
  });

  describe('redelivery', () => {
    it('stores and counts a click delivered twice (across batches) only once', async () => {
      const db = aDb();
      const { nats, store } = await started(db);
      const click = rotated('lnk_rot', 'd1');
      // No message id, so JetStream keeps both copies: the ingestion is what must not double count.
      await nats.js.publish(nats.subjects.click(click.workspace_id), JSON.stringify(click));
      await until(async () => (await store.clicks.countDocuments()) === 1 || false, 10_000, 'first copy stored');
      await nats.js.publish(nats.subjects.click(click.workspace_id), JSON.stringify(click));
      await nats.js.publish(nats.subjects.click(click.workspace_id), JSON.stringify(rotated('lnk_rot', 'd1')));
      await until(async () => (await store.clicks.countDocuments()) === 2 || false, 10_000, 'second click stored');
      await sleep(200);
      const counts = await store.destinationCounts(['lnk_rot'], click.ts.slice(0, 10));
      expect(counts.get('lnk_rot')?.get('d1')).to.deep.equal({ total: 2, today: 2 });
    });

    it('stores and counts a click that appears twice within one batch only once', async () => {
      const db = aDb();
      const { nats, store } = await started(db, { batchSize: 50 });
      const click = rotated('lnk_rot', 'd2');
      await Promise.all([1, 2, 3].map(() => nats.js.publish(nats.subjects.click(click.workspace_id), JSON.stringify(click))));
      await until(async () => (await store.clicks.countDocuments({ counted: true })) === 1 || false, 10_000, 'click stored');
      await sleep(200);
      const counts = await store.destinationCounts(['lnk_rot'], click.ts.slice(0, 10));
      expect(counts.get('lnk_rot')?.get('d2')).to.deep.equal({ total: 1, today: 1 });
    });

    it('counts a batch whose counters write failed after the insert exactly once, when it is redelivered', async () => {
      const db = aDb();
      let failures = 1;
      const store = new (class extends ClickStore {
        override count(records: readonly ClickRecord[]): Promise<void> {
          if (records.length > 0 && failures-- > 0) return Promise.reject(new Error('MongoDB went away'));
          return super.count(records);
        }
      })(db);
      const { nats, registry } = await started(db, { store, batchSize: 50 });
      const clicks = [rotated('lnk_rot', 'd3'), rotated('lnk_rot', 'd3'), rotated('lnk_rot', 'd3')];
      await Promise.all(clicks.map((c) => nats.js.publish(nats.subjects.click(c.workspace_id), JSON.stringify(c), { msgID: c.id })));
      await until(async () => (await store.clicks.countDocuments({ counted: true })) === 3 || false, 20_000, 'clicks counted');
      await sleep(200);
      expect(await metric(registry, 'linkplane_click_ingest_failures_total'), 'the first attempt failed').to.be.at.least(1);
      const counts = await store.destinationCounts(['lnk_rot'], clicks[0]!.ts.slice(0, 10));
      expect(counts.get('lnk_rot')?.get('d3')).to.deep.equal({ total: 3, today: 3 });
    });
  });

  describe('rotator counters', () => {
    it('sees ingested totals and today counts after a refresh, plus its own clicks since', async () => {
      const db = aDb();
      const { nats, store } = await started(db);
      const { publisher } = aPublisher(nats);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString();
      for (let i = 0; i < 4; i++) publisher.record(rotated('lnk_lim', 'a'));
      for (let i = 0; i < 2; i++) publisher.record(rotated('lnk_lim', 'a', yesterday));
      publisher.record(rotated('lnk_lim', 'b'));
      publisher.record(rotated('lnk_other', 'a'));
      await until(async () => (await store.clicks.countDocuments({ counted: true })) === 8 || false, 20_000, 'clicks counted');

      const counters = new RotatorCounters({ clicks: store, health: new RotatorHealthStore(db), refreshMs: 60_000, logger });
      counters.watch('lnk_lim');
      expect(counters.counts('lnk_lim', 'a'), 'nothing read before the first refresh').to.deep.equal({ total: 0, today: 0 });
      await counters.refresh();
      expect(counters.counts('lnk_lim', 'a')).to.deep.equal({ total: 6, today: 4 });
      expect(counters.counts('lnk_lim', 'b')).to.deep.equal({ total: 1, today: 1 });
      expect(counters.counts('lnk_other', 'a'), 'a link not watched is not read').to.deep.equal({ total: 0, today: 0 });

      counters.add('lnk_lim', 'b');
      counters.add('lnk_lim', 'b');
      expect(counters.counts('lnk_lim', 'b'), 'local clicks count until the next snapshot').to.deep.equal({ total: 3, today: 3 });
      await counters.refresh();
      expect(counters.counts('lnk_lim', 'b'), 'local clicks are dropped once a snapshot is taken').to.deep.equal({ total: 1, today: 1 });
    });
  });

  describe('A/B feedback', () => {
    const aFeedback = (db: Db, links: LinkStore, store: ClickStore, invalidations: Invalidation[]) =>
      new AbFeedback({
        client,
        links: links.collection,
        clicks: store,
        conversions: new ConversionStore(db),
        events: new EventStore(db),
        workspaces: new WorkspaceStore(db),
        invalidate: (m) => Promise.resolve(void invalidations.push(m)),
      });

    it('writes variant clicks and automatic weights into the link and broadcasts an invalidation', async () => {
      const db = aDb();
      const links = new LinkStore(db);
      const now = new Date();
      const link = {
        _id: 'lnk_ab',
        workspace_id: 'ws_clicks',
        domain_id: 'dom_default',
        domain: 'lp.test',
        slug: 'ab',
        url: 'https://example.com/',
        ab_test: {
          enabled: true,
          variants: [
            { url: 'https://example.com/a', weight: 50 },
            { url: 'https://example.com/b', weight: 50 },
          ],
          auto: { enabled: true, min_sample: 10, samples: { clicks: [0, 0], conversions: [0, 0] } },
        },
        created_at: now,
        updated_at: now,
      } as unknown as LinkDoc;
      await links.collection.insertOne(link);
      // Two clicks of variant 0 converted (one of them twice: it counts once), none of variant 1.
      const conversions = new ConversionStore(db);
      for (const clickId of ['clk_a', 'clk_a', 'clk_b']) {
        await conversions.collection.insertOne({ _id: `cnv_${Math.random()}`, link_id: 'lnk_ab', click_id: clickId, variant_index: 0 } as unknown as ConversionDoc);
      }
      const invalidations: Invalidation[] = [];
      const store = new ClickStore(db);
      const feedback = aFeedback(db, links, store, invalidations);
      const { nats } = await started(db, { store, derived: [feedback.afterBatch] });
      const { publisher } = aPublisher(nats);
      for (let i = 0; i < 12; i++) publisher.record(aClick({ link_id: 'lnk_ab', decision: { step: 'ab_test', variantIndex: i % 3 === 0 ? 1 : 0 } }));

      const updated = await until(async () => {
        const doc = await links.collection.findOne({ _id: 'lnk_ab' });
        return doc?.ab_test?.auto?.samples?.clicks.join() === '8,4' ? doc : false;
      }, 20_000, 'variant clicks written to the link');
      const auto = updated.ab_test!.auto!;
      expect(auto.samples!.conversions, 'converted clicks per variant, from the conversions').to.deep.equal([2, 0]);
      expect(auto.weights).to.have.length(2);
      expect(auto.weights![0]).to.be.greaterThan(auto.weights![1]!);
      expect(invalidations.at(-1)).to.deep.equal({ kind: 'link', id: 'lnk_ab', keys: ['lp.test/ab'] });
    });

    it('leaves weights alone before warmup_until, while still recording the variant clicks', async () => {
      const db = aDb();
      const links = new LinkStore(db);
      const now = new Date();
      await links.collection.insertOne({
        _id: 'lnk_warm',
        domain: 'lp.test',
        slug: 'warm',
        ab_test: {
          enabled: true,
          variants: [
            { url: 'https://example.com/a', weight: 50 },
            { url: 'https://example.com/b', weight: 50 },
          ],
          auto: { enabled: true, min_sample: 10, warmup_until: new Date(Date.now() + 3_600_000).toISOString() },
        },
        updated_at: now,
      } as unknown as LinkDoc);
      const store = new ClickStore(db);
      const invalidations: Invalidation[] = [];
      const feedback = aFeedback(db, links, store, invalidations);
      const { nats } = await started(db, { store, derived: [feedback.afterBatch] });
      const { publisher } = aPublisher(nats);
      for (let i = 0; i < 3; i++) publisher.record(aClick({ link_id: 'lnk_warm', decision: { step: 'ab_test', variantIndex: 1 } }));
      const updated = await until(async () => {
        const doc = await links.collection.findOne({ _id: 'lnk_warm' });
        return doc?.ab_test?.auto?.samples?.clicks.join() === '0,3' ? doc : false;
      }, 20_000, 'variant clicks written');
      expect(updated.ab_test!.auto!.weights).to.equal(undefined);
      expect(invalidations).to.have.length(0);
    });
  });

  describe('monthly tracked clicks', () => {
    it('adds ingested clicks to the month and raises click.threshold once at 80 % and once at 100 %', async () => {
      const db = aDb();
      const workspaces = new WorkspaceStore(db);
      const events = new EventStore(db);
      await workspaces.insert({
        _id: 'ws_quota',
        name: 'Quota',
        plan_id: 'free',
        partner_id: 'ptr_q',
        limits_override: { tracked_clicks_per_month: 10 },
        created_at: new Date(),
      });
      let nudges = 0;
      const usage = new ClickUsage({ db, client, workspaces, events, onEvent: () => nudges++ });
      const { nats, store } = await started(db, { counting: [usage.afterCount] });
      const { publisher } = aPublisher(nats);
      const quotaClick = () => aClick({ workspace_id: 'ws_quota' });
      const thresholds = async () => (await events.collection.find({ type: 'click.threshold' }).toArray()).map((e) => e.data.threshold);
      const stored = (n: number) => until(async () => (await store.clicks.countDocuments({ counted: true })) === n || false, 20_000, `${n} clicks counted`);

      for (let i = 0; i < 7; i++) publisher.record(quotaClick());
      await stored(7);
      expect(await thresholds(), 'below 80 %').to.deep.equal([]);

      const eighth = quotaClick();
      publisher.record(eighth);
      await stored(8);
      expect(await thresholds()).to.deep.equal([80]);

      // The same click again (a redelivery) adds nothing to the month.
      await nats.js.publish(nats.subjects.click('ws_quota'), JSON.stringify(eighth));
      for (let i = 0; i < 5; i++) publisher.record(quotaClick());
      await stored(13);
      await sleep(200);
      expect(await thresholds()).to.deep.equal([80, 100]);
      expect(await new UsageStore(db).trackedClicks('ws_quota', periodOf(new Date()).key)).to.equal(13);
      const event = await events.collection.findOne({ type: 'click.threshold', 'data.threshold': 100 });
      expect(event).to.include({ workspace_id: 'ws_quota', partner_id: 'ptr_q', published_at: null });
      expect(event?.data).to.deep.include({ threshold: 100, limit: 10, period: periodOf(new Date()).key });
      expect(nudges).to.equal(2);
    });
  });

  describe('worker process', () => {
    it('ingests the clicks a redirect publishes and counts them for the rotator', async () => {
      const running = await startWorker(testEnv(mongo, { CLICK_BATCH_WAIT_MS: '20' }));
      cleanups.push(() => running.stop());
      const { nats, stores } = running.infra;
      const { publisher } = aPublisher(nats);
      const clicks = [rotated('lnk_w', 'd1'), rotated('lnk_w', 'd1'), rotated('lnk_w', 'd2')];
      for (const click of clicks) publisher.record(click);
      await until(async () => (await stores.clicks.clicks.countDocuments({ link_id: 'lnk_w', counted: true })) === 3 || false, 20_000, 'clicks ingested by the worker');
      const counts = await stores.clicks.destinationCounts(['lnk_w'], clicks[0]!.ts.slice(0, 10));
      expect(counts.get('lnk_w')?.get('d1')).to.deep.equal({ total: 2, today: 2 });
      expect(counts.get('lnk_w')?.get('d2')).to.deep.equal({ total: 1, today: 1 });
      expect(await metric(running.infra.metrics.registry, 'linkplane_clicks_ingested_total')).to.equal(3);
      expect(await metric(running.infra.metrics.registry, 'linkplane_click_consumer_pending'), 'nothing left on the stream').to.equal(0);
    });
  });

  describe('NATS outage (a nats-server of the test, stopped and restarted)', () => {
    let server: OwnNatsServer;
    before(async () => {
      server = await OwnNatsServer.start();
      cleanups.push(() => server.destroy());
    });

    it('keeps record() synchronous while NATS is down, bounds the buffer by dropping the oldest, and delivers the rest once after it returns', async () => {
      const db = aDb();
      const { nats, store } = await started(db, { url: server.url, batchSize: 20 });
      const { publisher, registry } = aPublisher(nats, 50);
      const before = Array.from({ length: 5 }, () => aClick());
      for (const click of before) publisher.record(click);
      await until(async () => (await store.clicks.countDocuments()) === 5 || false, 20_000, 'clicks before the outage stored');

      await server.stop();
      await until(() => !nats.isConnected(), 20_000, 'the client saw the outage');
      const during = Array.from({ length: 80 }, (_, i) => aClick({ slug: `o${i}` }));
      for (const click of during) {
        expect(publisher.record(click), 'record returns nothing to wait for').to.equal(undefined);
      }
      expect(publisher.depth(), 'the buffer stops at its bound').to.equal(50);
      expect(await metric(registry, 'linkplane_clicks_dropped_total')).to.equal(30);
      expect(await metric(registry, 'linkplane_click_buffer_depth')).to.equal(50);

      await server.restart();
      await until(async () => (await store.clicks.countDocuments()) === 55 || false, 30_000, 'buffered clicks stored after NATS returned');
      await until(() => publisher.depth() === 0 || false, 10_000, 'buffer empty');
      const stored = (await store.clicks.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
      const kept = during.slice(30);
      expect(stored).to.have.members([...before, ...kept].map((c) => c.id));
      const inStream = await clicksInStream(nats);
      expect(inStream, 'each click reached the stream exactly once').to.have.members([...before, ...kept].map((c) => c.id));
      await sleep(300);
      expect(await store.clicks.countDocuments(), 'nothing arrives twice later').to.equal(55);
    });

    it('delivers clicks that were in flight when the server stopped, each once, after it returns', async () => {
      const db = aDb();
      const { nats, store } = await started(db, { url: server.url, batchSize: 20 });
      const { publisher } = aPublisher(nats, 1000);
      const clicks = Array.from({ length: 40 }, () => aClick());
      for (const click of clicks) publisher.record(click);
      // Stopped without waiting: some publishes are acknowledged, some on the wire, some not yet sent.
      await server.stop();
      await sleep(300);
      await server.restart();
      await until(async () => (await store.clicks.countDocuments()) === 40 || false, 30_000, 'every click stored');
      await until(() => publisher.depth() === 0 || false, 10_000, 'buffer empty');
      const stored = (await store.clicks.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
      expect(stored).to.have.members(clicks.map((c) => c.id));
      // A batch whose ack was lost may be re-sent grouped differently (another message id): the stream can then
      // hold a click twice, and ingestion, keyed by click id, stores it once (checked above). Every click is there.
      const inStream = await until(() => clicksInStream(nats).catch(() => false as const), 20_000, 'stream readable');
      expect(new Set(inStream)).to.deep.equal(new Set(clicks.map((c) => c.id)));
    });

    it('spools clicks beyond the buffer to disk while NATS is down, and stores each once after it returns', async () => {
      const db = aDb();
      const { nats, store } = await started(db, { url: server.url, batchSize: 50 });
      const dir = mkdtempSync(join(tmpdir(), 'lp-spool-'));
      cleanups.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
      const registry = new Registry();
      const publisher = new ClickPublisher({ nats, logger, registry, bufferMax: 50, ackTimeoutMs: 1000, spool: new ClickSpool({ dir, maxBytes: 64 * 1_048_576 }) });

      await server.stop();
      await until(() => !nats.isConnected(), 20_000, 'the client saw the outage');
      const during = Array.from({ length: 300 }, (_, i) => aClick({ slug: `s${i}` }));
      for (const click of during) publisher.record(click);
      expect(publisher.depth(), 'memory stays within its bound').to.be.at.most(50);
      expect(await metric(registry, 'linkplane_clicks_dropped_total'), 'nothing dropped').to.equal(0);
      expect(await metric(registry, 'linkplane_clicks_spilled_total')).to.be.at.least(250);
      expect(await metric(registry, 'linkplane_click_spool_bytes')).to.be.greaterThan(0);
      expect(readdirSync(dir).filter((f) => f.endsWith('.clicks.json')).length).to.be.greaterThan(0);

      await server.restart();
      await until(async () => (await store.clicks.countDocuments()) === 300 || false, 30_000, 'every click stored after NATS returned');
      await until(() => readdirSync(dir).length === 0 || false, 10_000, 'spool segments deleted once acknowledged');
      expect(await metric(registry, 'linkplane_click_spool_bytes')).to.equal(0);
      const stored = (await store.clicks.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
      expect(stored).to.have.members(during.map((c) => c.id));
      await sleep(300);
      expect(await store.clicks.countDocuments(), 'nothing arrives twice later').to.equal(300);
    });

    it('spools what is held at shutdown, and the next process publishes it', async () => {
      const db = aDb();
      const { nats, store } = await started(db, { url: server.url, batchSize: 50 });
      const dir = mkdtempSync(join(tmpdir(), 'lp-spool-'));
      cleanups.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
      await server.stop();
      await until(() => !nats.isConnected(), 20_000, 'the client saw the outage');
      const first = new ClickPublisher({ nats, logger, registry: new Registry(), bufferMax: 1000, ackTimeoutMs: 1000, spool: new ClickSpool({ dir, maxBytes: 64 * 1_048_576 }) });
      const clicks = Array.from({ length: 30 }, () => aClick());
      for (const click of clicks) first.record(click);
      expect(await first.flush(300), 'nothing is left unsaved').to.equal(0);
      expect(readdirSync(dir).filter((f) => f.endsWith('.clicks.json'))).to.have.length(1);

      await server.restart();
      await until(() => nats.isConnected(), 20_000, 'reconnected');
      // A process starting later (same pid here: an earlier run of this process) adopts the segment.
      new ClickPublisher({ nats, logger, registry: new Registry(), bufferMax: 1000, ackTimeoutMs: 1000, spool: new ClickSpool({ dir, maxBytes: 64 * 1_048_576 }) });
      await until(async () => (await store.clicks.countDocuments()) === 30 || false, 30_000, 'spooled clicks stored');
      await until(() => readdirSync(dir).length === 0 || false, 10_000, 'spool emptied');
    });

    it('drops clicks only when the spool is full too, counting them and logging once per interval, not per click', async () => {
      const db = aDb();
      const { nats } = await started(db, { url: server.url, batchSize: 50 });
      const dir = mkdtempSync(join(tmpdir(), 'lp-spool-'));
      cleanups.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
      const lines: Array<{ msg: string; clicks?: number }> = [];
      const capture = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
      const registry = new Registry();
      const publisher = new ClickPublisher({ nats, logger: capture, registry, bufferMax: 20, ackTimeoutMs: 1000, spool: new ClickSpool({ dir, maxBytes: 2048 }) });
      await server.stop();
      await until(() => !nats.isConnected(), 20_000, 'the client saw the outage');
      for (let i = 0; i < 500; i++) publisher.record(aClick());
      const dropped = await metric(registry, 'linkplane_clicks_dropped_total');
      expect(dropped, 'the spool held a few, the rest were dropped').to.be.within(400, 480);
      const dropLines = lines.filter((l) => l.msg.startsWith('clicks dropped'));
      expect(dropLines, 'one line for the first drop').to.have.length(1);
      await publisher.flush(100);
      const all = lines.filter((l) => l.msg.startsWith('clicks dropped'));
      expect(all.reduce((n, l) => n + (l.clicks ?? 0), 0), 'the lines account for every drop').to.equal(await metric(registry, 'linkplane_clicks_dropped_total'));
      await server.restart();
    });
  });
});
