// Unique visitors over HTTP: never more than the clicks they count, and exact for a few hundred visitors, at every
// level (workspace, link, dimension value). The visitor ids are the ones whose sketch estimates were off before
// (100 mobile visitors estimated 103, 100 desktop ones 96).
import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { randomClick, seeded, type TestLink } from '../helpers/analytics-clicks.ts';
import { RollupWriter } from '../../src/analytics/rollup.store.ts';

describe('unique visitors over HTTP: bounded by clicks, exact at small counts', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let key: string;
  let busyKey: string;
  const link: TestLink = { id: 'lnk_uniques', domain_id: 'dom_u', domain: 'u.example', slug: 'u', tag_ids: [], folder_id: null };
  const range = { start: '2026-11-10T00:00:00Z', end: '2026-11-11T00:00:00Z', bots: 'include' };

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id, ['analytics:read'])).key;
    const rand = seeded(200);
    const t = Date.parse('2026-11-10T10:00:00Z');
    // 200 distinct visitors of a new link, one click each: odd ones on mobile, even ones on desktop.
    const clicks = Array.from({ length: 200 }, (_, i) => {
      const click = randomClick(rand, ws._id, [link], t, t + 3_600_000, 1);
      click.visitor.visitor_id = `visitor-0-${i}`;
      click.visitor.device = i % 2 ? 'mobile' : 'desktop';
      return click;
    });
    const writer = new RollupWriter({ client: api.infra.mongo.client, store: api.infra.stores.rollups, clicks: api.infra.stores.clicks.clicks });
    await api.infra.stores.clicks.insert(clicks);
    await writer.rollUp(clicks);

    // A busier workspace: 1,100 human visitors on mobile in one hour, past the exact set of one dimension value (1,024)
    // but not of the totals (3,276).
    const busy = await tenants.aWorkspace({ plan_id: 'business' });
    busyKey = (await tenants.aWorkspaceKey(busy._id, ['analytics:read'])).key;
    const many = Array.from({ length: 1_100 }, (_, i) => {
      const click = randomClick(rand, busy._id, [link], t, t + 3_600_000, 1);
      click.visitor.visitor_id = `busy-${i}`;
      click.visitor.device = 'mobile';
      click.visitor.visitor_type = 'human';
      return click;
    });
    await api.infra.stores.clicks.insert(many);
    await writer.rollUp(many);
  });

  after(async () => {
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  const get = async <T>(path: string, params: Record<string, string> = {}, k = key): Promise<T> => {
    const res = await fetch(`${api.url}/v1/analytics/${path}?${new URLSearchParams({ ...range, ...params }).toString()}`, { headers: bearer(k) });
    expect(res.status, await res.clone().text()).to.equal(200);
    return (await res.json()) as T;
  };

  it('counts 200 visitors of a link as 200 in the workspace summary, the link’s summary and its time series', async () => {
    for (const params of [{}, { link_id: link.id }] as Array<Record<string, string>>) {
      const summary = await get<{ clicks: number; unique_visitors: number; unique_visitors_error: number }>('summary', params);
      expect(summary.clicks).to.equal(200);
      expect(summary.unique_visitors, JSON.stringify(params)).to.equal(200);
      expect(summary.unique_visitors_error, 'an exact count has no error').to.equal(0);
    }
    const series = await get<{ data: Array<{ clicks: number; unique_visitors: number }> }>('timeseries', { granularity: 'day' });
    const day = series.data.find((b) => b.clicks > 0)!;
    expect(day.unique_visitors).to.equal(200);
  });

  it('counts 100 mobile and 100 desktop visitors exactly in the device breakdown, of the workspace and of the link', async () => {
    for (const params of [{}, { link_id: link.id }] as Array<Record<string, string>>) {
      const breakdown = await get<{ data: Array<{ value: string; clicks: number; unique_visitors: number }> }>('breakdown', { dimension: 'device', ...params });
      const rows = Object.fromEntries(breakdown.data.map((r) => [r.value, [r.clicks, r.unique_visitors]]));
      expect((breakdown as unknown as { unique_visitors_error: number }).unique_visitors_error).to.equal(0);
      expect(rows, JSON.stringify(params)).to.deep.equal({ mobile: [100, 100], desktop: [100, 100] });
    }
  });

  it('never answers more unique visitors than clicks in any row', async () => {
    for (const dimension of ['device', 'os', 'browser', 'country', 'referer', 'link']) {
      const breakdown = await get<{ data: Array<{ value: string; clicks: number; unique_visitors: number }> }>('breakdown', { dimension });
      for (const row of breakdown.data) expect(row.unique_visitors, `${dimension} ${row.value}`).to.be.at.most(row.clicks);
    }
    const top = await get<{ data: Array<{ clicks: number; unique_visitors: number }> }>('links/top', { sort: 'unique_visitors' });
    for (const row of top.data) expect(row.unique_visitors).to.be.at.most(row.clicks);
  });

  it('says in the OpenAPI document where unique visitors are exact, where an estimate, and its error', async () => {
    const text = await (await fetch(`${api.url}/v1/openapi.json`)).text();
    expect(text).to.contain('never more than the clicks').and.contain('Exact while').and.contain('0.81 %').and.contain('3.25 %');
  });

  it('answers an estimate with its error past the exact set, never above the clicks, and the exact total beside it', async () => {
    const summary = await get<{ clicks: number; unique_visitors: number; unique_visitors_error: number }>('summary', {}, busyKey);
    expect([summary.clicks, summary.unique_visitors, summary.unique_visitors_error]).to.deep.equal([1_100, 1_100, 0]);
    const breakdown = await get<{ unique_visitors_error: number; data: Array<{ value: string; clicks: number; unique_visitors: number }> }>('breakdown', { dimension: 'device' }, busyKey);
    const mobile = breakdown.data.find((r) => r.value === 'mobile')!;
    expect(mobile.clicks).to.equal(1_100);
    expect(mobile.unique_visitors).to.be.at.most(1_100).and.at.least(1_100 * (1 - 4 * 0.0325));
    expect(breakdown.unique_visitors_error).to.be.closeTo(0.0325, 1e-9);
  });
});
