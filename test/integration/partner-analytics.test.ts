import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Json } from '../helpers/http.ts';
import { bruteSelect, distinctVisitors, pick, randomClick, rawValue, seeded, type BruteFilter, type TestLink } from '../helpers/analytics-clicks.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import type { LinkDoc } from '../../src/links/link.store.ts';
import { RollupWriter } from '../../src/analytics/rollup.store.ts';
import { ConversionRollup } from '../../src/analytics/conversion-rollup.ts';

// The partner analytics against a recount of the raw clicks of the partner's three clients, over random ranges,
// zones (UTC, and America/New_York across the 8 March 2026 DST change), bots modes, client and visitor filters. The
// clients share one pool of visitors, so a sum of per-client unique visitors would be far above the true count.
// Another partner's client and a workspace of no partner get clicks in the same buckets: they never count.
const ZONES = ['UTC', 'America/New_York'] as const;
const Q = 15 * 60_000;
const H = 3_600_000;
const D = 86_400_000;
const PERIOD = { from: Date.parse('2026-02-20T00:00:00Z'), to: Date.parse('2026-06-20T00:00:00Z') };
const CLUSTER = [Date.parse('2026-03-06T00:00:00Z'), Date.parse('2026-03-11T00:00:00Z')] as const;

function uniquesClose(actual: number, exact: number, what: string): void {
  const tolerance = Math.max(3, Math.ceil(exact * 0.13));
  expect(Math.abs(actual - exact), `${what}: ${actual} unique visitors, exactly ${exact}`).to.be.at.most(tolerance);
}

interface Figures {
  clicks: number;
  unique_visitors: number;
}
interface Row extends Figures {
  value: string | null;
  share: number;
}

describe('partner analytics: summary, time series and breakdowns across the clients equal a brute-force recount', function () {
  this.timeout(240_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let partnerKey: string;
  let otherPartnerKey: string;
  let clientIds: string[];
  let foreignClient: string;
  let loneWorkspace: string;
  const clicks: ClickRecord[] = [];
  const links: TestLink[] = [];

  const get = (path: string, params: Record<string, string>, key = partnerKey) =>
    callApi(api.url, 'GET', `/partner/analytics/${path}?${new URLSearchParams(params).toString()}`, { key });

  async function ok<T>(path: string, params: Record<string, string>, key = partnerKey): Promise<T> {
    const res = await get(path, params, key);
    expect(res.status, `${path} ${JSON.stringify(params)}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body as T;
  }

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    const partner = await tenants.aPartner();
    const other = await tenants.aPartner();
    partnerKey = (await tenants.aPartnerKey(partner, ['analytics:read'])).key;
    otherPartnerKey = (await tenants.aPartnerKey(other, ['analytics:read'])).key;
    clientIds = [];
    for (let i = 0; i < 3; i++) clientIds.push((await tenants.aWorkspace({ partner_id: partner, plan_id: 'pro' }))._id);
    foreignClient = (await tenants.aWorkspace({ partner_id: other, plan_id: 'pro' }))._id;
    loneWorkspace = (await tenants.aWorkspace({ plan_id: 'business' }))._id;

    const owner = new Map<string, string>();
    for (const ws of [...clientIds, foreignClient, loneWorkspace]) {
      for (let i = 0; i < 3; i++) {
        const domain = i % 2 === 0 ? { id: 'dom_a', host: 'go.example' } : { id: 'dom_b', host: 'l.example.org' };
        const link = { id: `lnk_${ws}_${i}`, domain_id: domain.id, domain: domain.host, slug: `${ws}${i}`, tag_ids: [], folder_id: null };
        links.push(link);
        owner.set(link.id, ws);
      }
    }
    const now = new Date();
    await api.infra.stores.links.collection.insertMany(
      links.map((l) => ({ _id: l.id, workspace_id: owner.get(l.id), domain_id: l.domain_id, domain: l.domain, slug: l.slug, url: 'https://example.com/', tag_ids: [], folder_id: null, archived: false, created_at: now, updated_at: now }) as unknown as LinkDoc),
    );
    const rand = seeded(20261124);
    const linksOf = (ws: string) => links.filter((l) => owner.get(l.id) === ws);
    const all = [...clientIds, foreignClient, loneWorkspace];
    for (let i = 0; i < 900; i++) {
      const ws = pick(rand, all);
      const [from, to] = rand() < 0.6 ? CLUSTER : [PERIOD.from, PERIOD.to];
      clicks.push(randomClick(rand, ws, linksOf(ws), from, to, 150));
    }
    const { stores } = api.infra;
    const writer = new RollupWriter({ client: api.infra.mongo.client, store: stores.rollups, clicks: stores.clicks.clicks });
    for (let i = 0; i < clicks.length; i += 200) {
      const batch = clicks.slice(i, i + 200);
      await stores.clicks.insert(batch);
      await writer.rollUp(batch);
    }
  });

  after(async () => {
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  /** The clicks of these workspaces a filter selects. */
  function recount(workspaces: readonly string[], f: BruteFilter): ClickRecord[] {
    const set = new Set(workspaces);
    return bruteSelect(clicks, f).filter((c) => set.has(c.workspace_id));
  }

  it('answers 30 random scenarios as the recount of its own clients does, never counting another partner\'s', async () => {
    const rand = seeded(11);
    let nonEmpty = 0;
    for (let n = 0; n < 30; n++) {
      const zone = pick(rand, ZONES);
      let start: number;
      let end: number;
      if (rand() < 0.5) {
        // Around the DST change, on quarter-hours.
        start = CLUSTER[0] + Math.floor((rand() * 2 * D) / Q) * Q;
        end = start + pick(rand, [5 * H + Q, D, 3 * D]);
      } else {
        start = PERIOD.from + Math.floor((rand() * 40 * D) / Q) * Q;
        end = start + pick(rand, [10 * D, 60 * D]);
      }
      const params: Record<string, string> = { start: new Date(start).toISOString(), end: new Date(end).toISOString(), timezone: zone };
      const bots = pick(rand, ['exclude', 'include', 'only', undefined] as const);
      if (bots) params.bots = bots;
      const filter: BruteFilter = { start, end, bots: bots ?? 'exclude', links: null, visitor: null };
      let chosen: string[] = clientIds;
      if (rand() < 0.35) {
        chosen = clientIds.slice(0, 2);
        // Another partner's client named in the filter matches nothing.
        params.client_id = [...chosen, foreignClient].join(',');
      }
      if (rand() < 0.2) {
        params.domain_id = 'dom_b';
        filter.links = new Set(links.filter((l) => l.domain_id === 'dom_b').map((l) => l.id));
      }
      if (rand() < 0.3) {
        params.country = 'US,IN';
        filter.visitor = { dim: 'country', values: new Set(['US', 'IN']) };
      }
      const label = JSON.stringify(params);
      const selected = recount(chosen, filter);
      if (selected.length > 0) nonEmpty++;

      const summary = await ok<Figures & { range: { start: string; end: string; timezone: string }; previous: Figures }>('summary', params);
      expect(Date.parse(summary.range.start), label).to.equal(start);
      expect(summary.range.timezone).to.equal(zone);
      expect(summary.clicks, `summary ${label}`).to.equal(selected.length);
      uniquesClose(summary.unique_visitors, distinctVisitors(selected), `summary ${label}`);
      const before = recount(chosen, { ...filter, start: start - (end - start), end: start });
      expect(summary.previous.clicks, `previous ${label}`).to.equal(before.length);

      const granularity = end - start <= 3 * D ? pick(rand, ['hour', 'day'] as const) : pick(rand, ['day', 'week'] as const);
      const series = await ok<{ data: Array<Figures & { start: string; end: string }> }>('timeseries', { ...params, granularity });
      let total = 0;
      for (const bucket of series.data) {
        const inBucket = recount(chosen, { ...filter, start: Date.parse(bucket.start), end: Date.parse(bucket.end) });
        expect(bucket.clicks, `bucket ${bucket.start} ${label}`).to.equal(inBucket.length);
        uniquesClose(bucket.unique_visitors, distinctVisitors(inBucket), `bucket ${bucket.start} ${label}`);
        total += bucket.clicks;
      }
      expect(total).to.equal(selected.length);

      // By client: one row per chosen client with clicks, each its own recount.
      const byClient = await ok<{ dimension: string; total_clicks: number; data: Row[] }>('breakdown', { ...params, dimension: 'client' });
      expect(byClient.dimension).to.equal('client');
      expect(byClient.total_clicks).to.equal(selected.length);
      const expected = chosen.map((ws) => ({ ws, rows: recount([ws], filter) })).filter((x) => x.rows.length > 0);
      expect(byClient.data.map((r) => r.value).sort(), label).to.deep.equal(expected.map((x) => x.ws).sort());
      for (const { ws, rows } of expected) {
        const row = byClient.data.find((r) => r.value === ws)!;
        expect(row.clicks, `client ${ws} ${label}`).to.equal(rows.length);
        uniquesClose(row.unique_visitors, distinctVisitors(rows), `client ${ws} ${label}`);
      }

      // A workspace dimension across the clients (country: the filter's own, allowed with it).
      const byCountry = await ok<{ data: Row[] }>('breakdown', { ...params, dimension: 'country' });
      const counts = new Map<string | null, number>();
      for (const c of selected) counts.set(rawValue(c, 'country'), (counts.get(rawValue(c, 'country')) ?? 0) + 1);
      expect(new Map(byCountry.data.map((r) => [r.value, r.clicks])), `country ${label}`).to.deep.equal(counts);
    }
    expect(nonEmpty, 'most scenarios hold clicks').to.be.at.least(20);
  });

  it("merges the clients' sketches: a visitor of several clients counts once", async () => {
    const params = { start: new Date(PERIOD.from).toISOString(), end: new Date(PERIOD.to).toISOString(), bots: 'include' };
    const filter: BruteFilter = { start: PERIOD.from, end: PERIOD.to, bots: 'include', links: null, visitor: null };
    const selected = recount(clientIds, filter);
    const summary = await ok<Figures>('summary', params);
    uniquesClose(summary.unique_visitors, distinctVisitors(selected), 'all clients');
    const byClient = await ok<{ data: Row[] }>('breakdown', { ...params, dimension: 'client' });
    const summed = byClient.data.reduce((s, r) => s + r.unique_visitors, 0);
    const summedExact = clientIds.reduce((s, ws) => s + distinctVisitors(recount([ws], filter)), 0);
    expect(summedExact, 'the clients share visitors').to.be.greaterThan(distinctVisitors(selected) * 1.5);
    uniquesClose(summed, summedExact, 'per-client rows');
    expect(summary.unique_visitors).to.be.lessThan(summed / 1.3);
  });

  it("another partner sees its own client only; a partner without clients sees zeros", async () => {
    const params = { start: new Date(PERIOD.from).toISOString(), end: new Date(PERIOD.to).toISOString() };
    const filter: BruteFilter = { start: PERIOD.from, end: PERIOD.to, bots: 'exclude', links: null, visitor: null };
    const theirs = await ok<Figures>('summary', params, otherPartnerKey);
    expect(theirs.clicks).to.equal(recount([foreignClient], filter).length).and.to.be.greaterThan(0);
    const ours = await ok<Figures>('summary', { ...params, client_id: foreignClient });
    expect(ours.clicks, "another partner's client id matches nothing").to.equal(0);
    const empty = (await tenants.aPartnerKey(await tenants.aPartner(), ['analytics:read'])).key;
    const none = await ok<Figures & { previous: Figures }>('summary', params, empty);
    expect([none.clicks, none.unique_visitors, none.previous.clicks]).to.deep.equal([0, 0, 0]);
    const series = await ok<{ data: Figures[] }>('timeseries', { ...params, granularity: 'month' }, empty);
    expect(series.data.length).to.be.greaterThan(0);
    expect(series.data.every((b) => b.clicks === 0)).to.equal(true);
    expect((await ok<{ data: Row[] }>('breakdown', { ...params, dimension: 'client' }, empty)).data).to.deep.equal([]);
  });

  it('refuses a workspace key (403 forbidden), a key without analytics:read, and bad parameters', async () => {
    const wsKey = (await tenants.aWorkspaceKey(clientIds[0]!)).key;
    for (const path of ['summary', 'timeseries', 'breakdown']) {
      expectRefused(await get(path, { dimension: 'client' }, wsKey), 403, 'forbidden');
    }
    const partnerId = await tenants.aPartner();
    const clientsOnly = (await tenants.aPartnerKey(partnerId, ['clients:read'])).key;
    expectRefused(await get('summary', {}, clientsOnly), 403, 'insufficient_scope');
    const many = Array.from({ length: 51 }, (_, i) => `ws_${i}`).join(',');
    expectInvalid(await get('summary', { client_id: many }), 'client_id');
    expectInvalid(await get('breakdown', { dimension: 'planet' }), 'dimension');
    expectInvalid(await get('summary', { timezone: 'Mars/Olympus' }), 'timezone');
    expectInvalid(await get('breakdown', { dimension: 'device', country: 'US' }), 'dimension');
    const res = await get('summary', { interval: '7d' });
    expect(res.status).to.equal(200);
    expect((res.body.range as Json).timezone, 'UTC by default').to.equal('UTC');
  });

  it("sums the clients' revenue per currency, never another partner's, and keeps currencies apart", async () => {
    const { stores } = api.infra;
    const counted = new ConversionRollup(api.infra.mongo.client, stores.rollups, stores.clicks.clicks).counted;
    const clickOf = (ws: string) => clicks.find((c) => c.workspace_id === ws)!;
    await counted({ click_id: clickOf(clientIds[0]!).id, workspace_id: clientIds[0]!, amount: 1000, currency: 'EUR' });
    await counted({ click_id: clickOf(clientIds[1]!).id, workspace_id: clientIds[1]!, amount: 250, currency: 'EUR' });
    await counted({ click_id: clickOf(clientIds[1]!).id, workspace_id: clientIds[1]!, amount: 70, currency: 'USD' });
    await counted({ click_id: clickOf(foreignClient).id, workspace_id: foreignClient, amount: 9999, currency: 'EUR' });
    const range = { start: new Date(PERIOD.from).toISOString(), end: new Date(PERIOD.to).toISOString(), bots: 'include' };
    const summary = await ok<{ conversions: number; revenue: Record<string, number> }>('summary', range);
    expect(summary.conversions).to.equal(3);
    expect(summary.revenue).to.deep.equal({ EUR: 1250, USD: 70 });
    const byClient = await ok<{ data: Array<{ value: string; conversions: number; revenue: Record<string, number> }> }>('breakdown', { ...range, dimension: 'client' });
    expect(byClient.data.find((r) => r.value === clientIds[0])!.revenue).to.deep.equal({ EUR: 1000 });
    expect(byClient.data.find((r) => r.value === clientIds[1])!.revenue).to.deep.equal({ EUR: 250, USD: 70 });
    expect(byClient.data.map((r) => r.value)).to.not.include(foreignClient);
    const other = await ok<{ revenue: Record<string, number> }>('summary', range, otherPartnerKey);
    expect(other.revenue).to.deep.equal({ EUR: 9999 });
  });
});
