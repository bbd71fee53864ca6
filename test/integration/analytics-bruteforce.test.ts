import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { bruteSelect, distinctVisitors, isBotType, pick, randomClick, rawValue, seeded, type BruteFilter, type TestLink } from '../helpers/analytics-clicks.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import type { LinkDoc } from '../../src/links/link.store.ts';
import { RollupWriter } from '../../src/analytics/rollup.store.ts';
import { DIMENSIONS } from '../../src/analytics/dimensions.ts';

// Every endpoint's answer against a recount of the raw clicks, over random clicks, filters, ranges and zones:
// America/New_York across both 2026 DST changes (8 March, 1 November), Asia/Kolkata (+5:30), Asia/Kathmandu
// (+5:45) and UTC. The clicks cluster around the DST changes so the 23- and 25-hour days hold some.
const ZONES = ['America/New_York', 'Asia/Kolkata', 'UTC', 'Asia/Kathmandu'] as const;
const Q = 15 * 60_000;
const H = 3_600_000;
const D = 86_400_000;
const PERIOD = { from: Date.parse('2026-02-20T00:00:00Z'), to: Date.parse('2026-11-20T00:00:00Z') };
const CLUSTERS = [
  [Date.parse('2026-03-06T00:00:00Z'), Date.parse('2026-03-11T00:00:00Z')],
  [Date.parse('2026-10-30T00:00:00Z'), Date.parse('2026-11-04T00:00:00Z')],
] as const;

interface Range {
  start: string;
  end: string;
  timezone: string;
  interval: string | null;
}

/** Instant at a local wall time of a zone, computed with Intl alone (independent of src/analytics/time.ts). */
function localMidnight(zone: string, y: number, m: number, d: number): number {
  let guess = Date.UTC(y, m, d);
  for (let i = 0; i < 3; i++) {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' })
        .formatToParts(new Date(guess))
        .filter((p) => p.type !== 'literal')
        .map((p) => [p.type, Number(p.value)]),
    ) as Record<string, number>;
    const asUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute);
    guess += Date.UTC(y, m, d) - asUtc;
  }
  return guess;
}

function localClock(zone: string, ms: number): { hour: number; minute: number; weekday: string; day: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', hour: 'numeric', minute: 'numeric', weekday: 'short', day: 'numeric' })
      .formatToParts(new Date(ms))
      .filter((p) => p.type !== 'literal')
      .map((p) => [p.type, p.value]),
  ) as Record<string, string>;
  return { hour: Number(parts.hour), minute: Number(parts.minute), weekday: parts.weekday!, day: Number(parts.day) };
}

function uniquesClose(actual: number, exact: number, what: string): void {
  const tolerance = Math.max(3, Math.ceil(exact * 0.13));
  expect(Math.abs(actual - exact), `${what}: ${actual} unique visitors, exactly ${exact}`).to.be.at.most(tolerance);
}

describe('analytics answers equal a brute-force recount of the raw clicks (random clicks, filters, ranges, zones)', function () {
  this.timeout(240_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let key: string;
  let workspaceId: string;
  const clicks: ClickRecord[] = [];
  const links: TestLink[] = [];

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    workspaceId = ws._id;
    key = (await tenants.aWorkspaceKey(ws._id, ['analytics:read'])).key;
    const rand = seeded(20261108);
    for (let i = 0; i < 6; i++) {
      const domain = i % 2 === 0 ? { id: 'dom_a', host: 'go.example' } : { id: 'dom_b', host: 'l.example.org' };
      links.push({ id: `lnk_t${i}`, domain_id: domain.id, domain: domain.host, slug: `s${i}`, tag_ids: i < 3 ? ['tag_red'] : ['tag_blue'], folder_id: i % 3 === 0 ? 'fld_x' : null });
    }
    const now = new Date();
    await api.infra.stores.links.collection.insertMany(
      links.map(
        (l) =>
          ({
            _id: l.id,
            workspace_id: workspaceId,
            domain_id: l.domain_id,
            domain: l.domain,
            slug: l.slug,
            url: `https://example.com/${l.slug}`,
            tag_ids: l.tag_ids,
            folder_id: l.folder_id,
            archived: false,
            created_at: now,
            updated_at: now,
          }) as unknown as LinkDoc,
      ),
    );
    for (let i = 0; i < 150; i++) clicks.push(randomClick(rand, workspaceId, links, PERIOD.from, PERIOD.to, 300));
    for (const [a, b] of CLUSTERS) for (let i = 0; i < 600; i++) clicks.push(randomClick(rand, workspaceId, links, a, b, 250));
    // Mostly in time order, as the stream delivers them; a tail of out-of-order clicks (late publishers).
    clicks.sort((a, b) => a.ts.localeCompare(b.ts));
    for (let i = 0; i < 20; i++) clicks.push(randomClick(rand, workspaceId, links, PERIOD.from, PERIOD.to, 300));
    // A click of another workspace, in the same buckets: never counted.
    clicks.push(randomClick(rand, 'ws_other', links, CLUSTERS[0][0], CLUSTERS[0][1], 5));

    const began = performance.now();
    // Ingested in batches of random sizes, some of them delivered twice, each batch one of three ways:
    //   - as the click ingester does: the raw clicks and their rollup parts in one transaction (storing), some batches
    //     holding one click twice;
    //   - stored while the rollups were off, then delivered again to an ingester with the rollups on (storing sorts
    //     out which stored clicks are not rolled up yet);
    //   - raw insert, then the exactly-once rollup of stored clicks (rollUp, as the rebuild does).
    const { stores } = api.infra;
    const writer = new RollupWriter({ client: api.infra.mongo.client, store: stores.rollups, clicks: stores.clicks.clicks });
    let i = 0;
    const ways = { storing: 0, stored_before: 0, roll_up: 0 };
    while (i < clicks.length) {
      const size = 1 + Math.floor(rand() * 150);
      const batch = clicks.slice(i, i + size);
      const way = rand();
      if (way < 0.4) {
        ways.storing++;
        const delivered = rand() < 0.2 ? [...batch, batch[0]!] : batch;
        const toCount = await writer.storing(delivered);
        expect(toCount.map((c) => c.id), 'every click of a new batch is to count, each once').to.deep.equal(batch.map((c) => c.id));
        await stores.clicks.markCounted(toCount);
        if (rand() < 0.3) expect(await writer.storing(delivered), 'a redelivered batch has no click to count again').to.have.length(0);
      } else if (way < 0.7) {
        ways.stored_before++;
        await stores.clicks.insert(batch);
        expect((await writer.storing(batch)).map((c) => c.id), 'stored, not counted: counted now').to.deep.equal(batch.map((c) => c.id));
        await stores.clicks.markCounted(batch);
        if (rand() < 0.3) expect(await writer.storing(batch)).to.have.length(0);
      } else {
        ways.roll_up++;
        await stores.clicks.insert(batch);
        await writer.rollUp(batch);
        if (rand() < 0.3) {
          await stores.clicks.insert(batch);
          expect(await writer.rollUp(batch), 'a redelivered batch has no click to roll up again').to.have.length(0);
        }
      }
      i += size;
    }
    expect(Math.min(...Object.values(ways)), `batches per way: ${JSON.stringify(ways)}`).to.be.greaterThan(2);
    clicks.pop(); // the other workspace's
    console.log(`      (${clicks.length} clicks rolled up in ${Math.round(performance.now() - began)} ms)`);
  });

  after(async () => {
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  async function get<T>(path: string, params: Record<string, string>): Promise<T> {
    const res = await fetch(`${api.url}/v1/analytics/${path}?${new URLSearchParams(params).toString()}`, { headers: bearer(key) });
    const body = (await res.json()) as T;
    expect(res.status, `${path} ${JSON.stringify(params)}: ${JSON.stringify(body)}`).to.equal(200);
    return body;
  }

  interface Scenario {
    params: Record<string, string>;
    filter: BruteFilter;
    zone: string;
  }

  function aScenario(rand: () => number): Scenario {
    const zone = pick(rand, ZONES);
    let start: number;
    let end: number;
    const shape = rand();
    if (shape < 0.4) {
      // Whole local days around a DST change.
      const cluster = pick(rand, CLUSTERS);
      const first = new Date(cluster[0] + Math.floor(rand() * 2) * D);
      start = localMidnight(zone, first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate());
      end = localMidnight(zone, first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate() + 1 + Math.floor(rand() * 3));
    } else {
      const lengths = [3 * H + Q, D, 5 * D + 7 * Q, 33 * D, 200 * D];
      const length = pick(rand, lengths);
      start = PERIOD.from + Math.floor((rand() * (PERIOD.to - PERIOD.from - length)) / Q) * Q;
      end = start + length;
    }
    const params: Record<string, string> = { start: new Date(start).toISOString(), end: new Date(end).toISOString(), timezone: zone };
    const bots = pick(rand, ['exclude', 'include', 'only', undefined] as const);
    if (bots) params.bots = bots;
    const filter: BruteFilter = { start, end, bots: bots ?? 'exclude', links: null, visitor: null };
    const linkFilter = rand();
    if (linkFilter < 0.15) {
      const chosen = [pick(rand, links), pick(rand, links)];
      params.link_id = chosen.map((l) => l.id).join(',');
      filter.links = new Set(chosen.map((l) => l.id));
    } else if (linkFilter < 0.25) {
      params.domain_id = 'dom_b';
      filter.links = new Set(links.filter((l) => l.domain_id === 'dom_b').map((l) => l.id));
    } else if (linkFilter < 0.32) {
      params.tag = 'tag_red';
      filter.links = new Set(links.filter((l) => l.tag_ids.includes('tag_red')).map((l) => l.id));
    } else if (linkFilter < 0.38) {
      params.folder_id = 'fld_x';
      filter.links = new Set(links.filter((l) => l.folder_id === 'fld_x').map((l) => l.id));
    }
    if (rand() < 0.45) {
      const options: Array<[string, string[]]> = [
        ['country', ['US', 'IN']],
        ['device', ['mobile']],
        ['os', ['ios', 'android', 'linux']],
        ['browser', ['Mobile Safari']],
        ['referer', ['google.com', 'news.ycombinator.com']],
        ['visitor_type', ['human', 'search_bot']],
        ['utm_source', ['newsletter']],
        ['utm_medium', ['email']],
        ['utm_campaign', ['spring', "=cmd|' /C calc'!A0"]],
      ];
      const [dim, values] = pick(rand, options);
      params[dim] = values.join(',');
      filter.visitor = { dim, values: new Set(values) };
    }
    return { params, filter, zone };
  }

  it('summary, time series, breakdown and top links, 60 random scenarios', async () => {
    const rand = seeded(7);
    let nonEmpty = 0;
    for (let n = 0; n < 60; n++) {
      const s = aScenario(rand);
      const label = JSON.stringify(s.params);
      const selected = bruteSelect(clicks, s.filter);
      if (selected.length > 0) nonEmpty++;

      // Summary, and the previous period of equal length.
      const summary = await get<{ range: Range; clicks: number; human_clicks: number; bot_clicks: number; unique_visitors: number; conversions: number; previous: { start: string; end: string; clicks: number; unique_visitors: number } }>('summary', s.params);
      expect(Date.parse(summary.range.start), label).to.equal(s.filter.start);
      expect(Date.parse(summary.range.end), label).to.equal(s.filter.end);
      expect(summary.range.timezone).to.equal(s.zone);
      expect(summary.clicks, `summary clicks ${label}`).to.equal(selected.length);
      const all = bruteSelect(clicks, { ...s.filter, bots: 'include' });
      expect(summary.bot_clicks, `bot clicks ${label}`).to.equal(all.filter((c) => isBotType(c.visitor.visitor_type)).length);
      expect(summary.human_clicks + summary.bot_clicks).to.equal(all.length);
      expect(summary.conversions).to.equal(0);
      uniquesClose(summary.unique_visitors, distinctVisitors(selected), `summary ${label}`);
      const length = s.filter.end - s.filter.start;
      const before = bruteSelect(clicks, { ...s.filter, start: s.filter.start - length, end: s.filter.start });
      expect(summary.previous.clicks, `previous ${label}`).to.equal(before.length);
      uniquesClose(summary.previous.unique_visitors, distinctVisitors(before), `previous ${label}`);

      // Time series: zero-filled, contiguous buckets; each equal to the recount of its own span.
      const length_ = s.filter.end - s.filter.start;
      const granularity = length_ <= 6 * D ? pick(rand, ['hour', 'day'] as const) : length_ <= 40 * D ? pick(rand, ['day', 'week'] as const) : pick(rand, ['week', 'month'] as const);
      const series = await get<{ granularity: string; data: Array<{ start: string; end: string; hours: number; clicks: number; unique_visitors: number }> }>('timeseries', { ...s.params, granularity });
      expect(series.granularity).to.equal(granularity);
      expect(Date.parse(series.data[0]!.start)).to.equal(s.filter.start);
      expect(Date.parse(series.data.at(-1)!.end)).to.equal(s.filter.end);
      let total = 0;
      series.data.forEach((bucket, i) => {
        const from = Date.parse(bucket.start);
        const to = Date.parse(bucket.end);
        if (i > 0) expect(from, 'contiguous').to.equal(Date.parse(series.data[i - 1]!.end));
        expect(bucket.hours).to.equal((to - from) / H);
        // Inner boundaries sit on the zone's calendar.
        if (i > 0) {
          const clock = localClock(s.zone, from);
          expect(clock.minute, `${bucket.start} on a local boundary`).to.equal(0);
          if (granularity !== 'hour') expect(clock.hour, `${bucket.start} at local midnight`).to.equal(0);
          if (granularity === 'week') expect(clock.weekday).to.equal('Mon');
          if (granularity === 'month') expect(clock.day).to.equal(1);
        }
        const inBucket = bruteSelect(clicks, { ...s.filter, start: from, end: to });
        expect(bucket.clicks, `bucket ${bucket.start} ${label}`).to.equal(inBucket.length);
        uniquesClose(bucket.unique_visitors, distinctVisitors(inBucket), `bucket ${bucket.start} ${label}`);
        total += bucket.clicks;
      });
      expect(total).to.equal(selected.length);

      // Breakdown by a dimension the filters allow.
      const dimension = s.filter.visitor ? pick(rand, [s.filter.visitor.dim, 'link']) : pick(rand, DIMENSIONS);
      const breakdown = await get<{ total_clicks: number; data: Array<{ value: string | null; clicks: number; unique_visitors: number; share: number }> }>('breakdown', { ...s.params, dimension, limit: '1000' });
      const groups = new Map<string | null, ClickRecord[]>();
      for (const c of selected) {
        const v = rawValue(c, dimension);
        groups.set(v, [...(groups.get(v) ?? []), c]);
      }
      expect(breakdown.total_clicks, `breakdown total ${dimension} ${label}`).to.equal(selected.length);
      expect(breakdown.data.map((r) => [r.value, r.clicks]).sort(), `breakdown rows ${dimension} ${label}`).to.deep.equal(
        [...groups.entries()].map(([v, list]) => [v, list.length]).sort(),
      );
      for (let i = 1; i < breakdown.data.length; i++) expect(breakdown.data[i - 1]!.clicks).to.be.at.least(breakdown.data[i]!.clicks);
      for (const row of breakdown.data) {
        expect(row.share).to.be.closeTo(row.clicks / selected.length, 1e-9);
        uniquesClose(row.unique_visitors, distinctVisitors(groups.get(row.value)!), `${dimension}=${row.value} ${label}`);
      }

      // Top links.
      const top = await get<{ data: Array<{ id: string; clicks: number; unique_visitors: number; short_url: string | null }> }>('links/top', { ...s.params, limit: '100' });
      const perLink = new Map<string, number>();
      for (const c of selected) perLink.set(c.link_id, (perLink.get(c.link_id) ?? 0) + 1);
      const expected = [...perLink.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      expect(top.data.map((r) => [r.id, r.clicks]), `top links ${label}`).to.deep.equal(expected);
      for (const row of top.data) expect(row.short_url).to.equal(`https://${links.find((l) => l.id === row.id)!.domain}/${links.find((l) => l.id === row.id)!.slug}`);
    }
    expect(nonEmpty, 'most scenarios select clicks').to.be.greaterThan(40);
  });

  it('answers 422 for a breakdown by another dimension than the visitor filter, and for two visitor filters', async () => {
    const base = { start: '2026-03-01T00:00:00Z', end: '2026-03-20T00:00:00Z' };
    let res = await fetch(`${api.url}/v1/analytics/breakdown?${new URLSearchParams({ ...base, country: 'US', dimension: 'browser' }).toString()}`, { headers: bearer(key) });
    expect(res.status).to.equal(422);
    expect(((await res.json()) as { error: { details: Array<{ path: string }> } }).error.details[0]!.path).to.equal('dimension');
    res = await fetch(`${api.url}/v1/analytics/summary?${new URLSearchParams({ ...base, country: 'US', device: 'mobile' }).toString()}`, { headers: bearer(key) });
    expect(res.status).to.equal(422);
    expect(((await res.json()) as { error: { code: string; details: Array<{ path: string }> } }).error.details[0]!.path).to.equal('device');
  });
});
