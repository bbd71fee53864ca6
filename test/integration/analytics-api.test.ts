import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { randomClick, seeded, type TestLink } from '../helpers/analytics-clicks.ts';
import type { ClickRecord } from '../../src/visitor/click-record.ts';
import { RollupWriter } from '../../src/analytics/rollup.store.ts';
import { ConversionRollup } from '../../src/analytics/conversion-rollup.ts';
import { EXPORT_COLUMNS } from '../../src/analytics/export.ts';
import { rebuildRollups } from '../../src/analytics/rebuild.ts';
import type { ConversionDoc } from '../../src/conversions/conversion.store.ts';

interface ErrorBody {
  error: { code: string; message: string; details?: Array<{ path: string; message: string }> };
}

describe('analytics endpoints: access, validation, conversions, rebuild and the CSV export', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let tenants: Tenants;
  let key: string;
  let workspaceId: string;
  let writer: RollupWriter;
  const links: TestLink[] = [{ id: 'lnk_api', domain_id: 'dom_api', domain: 'a.example', slug: 'x', tag_ids: [], folder_id: null }];

  const get = (path: string, params: Record<string, string> = {}, k = key) =>
    fetch(`${api.url}/v1/analytics/${path}?${new URLSearchParams(params).toString()}`, { headers: bearer(k) });

  async function ingest(clicks: ClickRecord[]): Promise<void> {
    await api.infra.stores.clicks.insert(clicks);
    await writer.rollUp(clicks);
  }

  before(async () => {
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business', timezone: 'Asia/Kolkata' });
    workspaceId = ws._id;
    key = (await tenants.aWorkspaceKey(ws._id, ['analytics:read'])).key;
    writer = new RollupWriter({ client: api.infra.mongo.client, store: api.infra.stores.rollups, clicks: api.infra.stores.clicks.clicks });
  });

  after(async () => {
    await api?.stop();
    await tenants?.close();
    await mongo?.stop();
  });

  describe('access', () => {
    it('answers 403 forbidden to a partner key, 403 insufficient_scope without analytics:read, 401 without a key', async () => {
      const partner = (await tenants.aPartnerKey(await tenants.aPartner())).key;
      let res = await get('summary', {}, partner);
      expect(res.status).to.equal(403);
      expect(((await res.json()) as ErrorBody).error.code).to.equal('forbidden');
      const scopeless = (await tenants.aWorkspaceKey(workspaceId, ['links:read'])).key;
      res = await get('timeseries', {}, scopeless);
      expect(res.status).to.equal(403);
      const body = (await res.json()) as ErrorBody;
      expect(body.error.code).to.equal('insufficient_scope');
      expect(body.error.message).to.contain('analytics:read');
      res = await fetch(`${api.url}/v1/analytics/breakdown?dimension=country`);
      expect(res.status).to.equal(401);
    });

    it('answers 403 plan_restricted for a range older than the plan keeps, and for an export on a plan without it', async () => {
      const free = await tenants.aWorkspace({ plan_id: 'free' });
      const freeKey = (await tenants.aWorkspaceKey(free._id, ['analytics:read'])).key;
      expect((await get('summary', { interval: '30d' }, freeKey)).status).to.equal(200);
      const tooOld: Array<Record<string, string>> = [{ interval: '90d' }, { start: '2020-01-01T00:00:00Z', end: '2020-02-01T00:00:00Z' }];
      for (const params of tooOld) {
        const res = await get('summary', params, freeKey);
        expect(res.status, JSON.stringify(params)).to.equal(403);
        expect(((await res.json()) as ErrorBody).error.code).to.equal('plan_restricted');
      }
      const all = (await (await get('summary', { interval: 'all' }, freeKey)).json()) as { range: { start: string } };
      expect(Date.now() - Date.parse(all.range.start), '`all` is cut at the retention').to.be.at.most(31 * 86_400_000);
      const res = await get('export.csv', {}, freeKey);
      expect(res.status).to.equal(403);
      expect(((await res.json()) as ErrorBody).error.code).to.equal('plan_restricted');
    });
  });

  describe('validation (422 validation_failed naming the parameter)', () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['summary', { timezone: 'Mars/Olympus' }, 'timezone'],
      ['summary', { start: '2026-03-02T00:00:00Z', end: '2026-03-01T00:00:00Z' }, 'end'],
      ['summary', { start: '2026-03-02T00:00:00Z' }, 'end'],
      ['summary', { start: 'yesterday', end: '2026-03-01T00:00:00Z' }, 'start'],
      ['summary', { interval: '7d', start: '2026-03-01T00:00:00Z', end: '2026-03-02T00:00:00Z' }, 'interval'],
      ['summary', { interval: '3w' }, 'interval'],
      ['summary', { bots: 'some' }, 'bots'],
      ['summary', { country: 'us' }, 'country'],
      ['summary', { device: 'phone' }, 'device'],
      ['summary', { country: Array.from({ length: 51 }, (_, i) => `A${String.fromCharCode(65 + (i % 26))}`).join(',') }, 'country'],
      ['breakdown', {}, 'dimension'],
      ['breakdown', { dimension: 'shoe_size' }, 'dimension'],
      ['breakdown', { dimension: 'country', limit: '1001' }, 'limit'],
      ['links/top', { limit: '101' }, 'limit'],
      ['links/top', { sort: 'revenue' }, 'sort'],
      ['timeseries', { interval: '90d', granularity: 'hour' }, 'granularity'],
      ['timeseries', { granularity: 'year' }, 'granularity'],
      ['summary', { colour: 'red' }, 'colour'],
    ];
    for (const [path, params, name] of cases) {
      it(`${path} ${JSON.stringify(params)} names ${name}`, async () => {
        const res = await get(path, params);
        const body = (await res.json()) as ErrorBody;
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(body.error.code).to.equal('validation_failed');
        expect(body.error.details!.map((d) => d.path)).to.include(name);
      });
    }
  });

  describe('answers', () => {
    it('defaults to the last 30 days in the workspace time zone, zero-filled, and echoes the range', async () => {
      const res = await get('timeseries');
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { range: { start: string; end: string; timezone: string; interval: string }; granularity: string; data: Array<{ start: string; clicks: number; hours: number }> };
      expect(body.range.timezone).to.equal('Asia/Kolkata');
      expect(body.range.interval).to.equal('30d');
      expect(body.range.start).to.match(/T00:00:00\+05:30$/);
      expect(body.granularity).to.equal('day');
      expect(body.data).to.have.length(30);
      expect(body.data.every((b) => b.hours === 24)).to.equal(true);
    });

    it('says in a breakdown whether visitor locations and networks can be resolved: countries and networks from the open data by default, none without it', async () => {
      const res = await get('breakdown', { dimension: 'country' });
      expect(res.status).to.equal(200);
      expect(((await res.json()) as { geo: unknown }).geo).to.deep.equal({ country: true, location: false, network: true });
      const bare = await startApi(testEnv(mongo, { GEOIP_OPEN_DATA: 'false' }));
      try {
        const answer = await fetch(`${bare.url}/v1/analytics/breakdown?dimension=country`, { headers: bearer(key) });
        expect(((await answer.json()) as { geo: unknown }).geo).to.deep.equal({ country: false, location: false, network: false });
      } finally {
        await bare.stop();
      }
      const edge = await startApi(testEnv(mongo, { TRUST_EDGE_HEADERS: 'true' }));
      try {
        const answer = await fetch(`${edge.url}/v1/analytics/breakdown?dimension=device`, { headers: bearer(key) });
        expect(((await answer.json()) as { geo: unknown }).geo).to.deep.equal({ country: true, location: true, network: true });
      } finally {
        await edge.stop();
      }
    });

    it('counts conversions in the buckets of their click, and rebuild rolls up clicks stored before the rollups, once', async () => {
      const rand = seeded(5);
      const t = Date.parse('2026-11-10T10:00:00Z');
      const clicks = Array.from({ length: 30 }, () => randomClick(rand, workspaceId, links, t, t + 3_600_000, 20));
      await ingest(clicks.slice(0, 20));
      // Ten clicks stored the way an earlier version stored them: no rolled_up field.
      const { stores } = api.infra;
      await stores.clicks.insert(clicks.slice(20));
      await stores.clicks.clicks.updateMany({ _id: { $in: clicks.slice(20).map((c) => c.id) } }, { $unset: { rolled_up: '' } });
      const range = { start: '2026-11-10T00:00:00Z', end: '2026-11-11T00:00:00Z', bots: 'include' };
      const total = async () => ((await (await get('summary', range)).json()) as { clicks: number; conversions: number });
      expect((await total()).clicks).to.equal(20);
      for (let run = 0; run < 2; run++) {
        const result = await rebuildRollups({ db: api.infra.mongo.db, clicks: stores.clicks.clicks, store: stores.rollups, writer, workspaceId, full: false });
        expect(result.clicks_rolled_up, `run ${run}`).to.equal(run === 0 ? 10 : 0);
        expect((await total()).clicks).to.equal(30);
      }
      const full = await rebuildRollups({ db: api.infra.mongo.db, clicks: stores.clicks.clicks, store: stores.rollups, writer, workspaceId, full: true });
      expect(full.clicks_rolled_up).to.equal(30);
      expect((await total()).clicks).to.equal(30);

      await new ConversionRollup(api.infra.mongo.client, stores.rollups, stores.clicks.clicks).counted({ click_id: clicks[3]!.id, workspace_id: workspaceId, amount: null, currency: null });
      const summary = await total();
      expect(summary.conversions).to.equal(1);
      const byLink = (await (await get('links/top', range)).json()) as { data: Array<{ id: string; conversions: number }> };
      expect(byLink.data.find((r) => r.id === 'lnk_api')!.conversions).to.equal(1);

      // A full rebuild empties the cells and rolls the raw clicks up again: the conversions and revenue the clicks
      // carry come back with them, once.
      await new ConversionRollup(api.infra.mongo.client, stores.rollups, stores.clicks.clicks).counted({ click_id: clicks[4]!.id, workspace_id: workspaceId, amount: 1250, currency: 'EUR' });
      const before = (await (await get('summary', range)).json()) as { clicks: number; conversions: number; revenue: Record<string, number> };
      expect(before).to.include({ clicks: 30, conversions: 2 });
      expect(before.revenue).to.deep.equal({ EUR: 1250 });
      for (let run = 0; run < 2; run++) {
        await rebuildRollups({ db: api.infra.mongo.db, clicks: stores.clicks.clicks, store: stores.rollups, writer, workspaceId, full: true });
        const after = (await (await get('summary', range)).json()) as { clicks: number; conversions: number; revenue: Record<string, number> };
        expect(after, `full rebuild ${run}`).to.include({ clicks: 30, conversions: 2 });
        expect(after.revenue, `full rebuild ${run}`).to.deep.equal({ EUR: 1250 });
      }
    });

    it('answers revenue per currency (integer minor units, never summed across currencies) in summary, time series, breakdowns and the CSV export', async () => {
      const { stores } = api.infra;
      const rand = seeded(21);
      const t = Date.parse('2026-11-16T10:00:00Z');
      const two: TestLink[] = [links[0]!, { id: 'lnk_rev', domain_id: 'dom_api', domain: 'a.example', slug: 'rev', tag_ids: [], folder_id: null }];
      const clicks = [0, 1, 2].map(() => randomClick(rand, workspaceId, two, t, t + 60_000, 10));
      clicks.forEach((c, i) => {
        c.visitor.visitor_type = 'human';
        c.visitor.country = i === 0 ? 'FR' : 'US';
        c.link_id = i === 0 ? 'lnk_api' : 'lnk_rev';
      });
      await ingest(clicks);
      const counted = new ConversionRollup(api.infra.mongo.client, stores.rollups, stores.clicks.clicks).counted;
      const convert = (i: number, amount: number | null, currency: string | null) =>
        counted({ click_id: clicks[i]!.id, workspace_id: workspaceId, amount, currency } satisfies Pick<ConversionDoc, 'click_id' | 'workspace_id' | 'amount' | 'currency'>);
      await convert(0, 1250, 'EUR');
      await convert(0, 300, 'USD');
      await convert(1, 100, 'EUR');
      await convert(1, null, null); // a lead: counted, no revenue
      await convert(2, 5, 'JPY');

      const range = { start: '2026-11-16T00:00:00Z', end: '2026-11-17T00:00:00Z', bots: 'include' };
      interface Figures { clicks: number; conversions: number; revenue: Record<string, number> }
      const summary = (await (await get('summary', range)).json()) as Figures & { previous: Figures };
      expect(summary.conversions).to.equal(5);
      expect(summary.revenue).to.deep.equal({ EUR: 1350, JPY: 5, USD: 300 });
      expect(summary.previous.revenue).to.deep.equal({});

      const series = (await (await get('timeseries', { ...range, granularity: 'hour' })).json()) as { data: Array<Figures & { start: string; end: string }> };
      // The workspace's zone (+05:30) puts the clicks in the local hour 15:00-16:00, 09:30-10:30 UTC.
      const hour = series.data.find((b) => Date.parse(b.start) <= t && t < Date.parse(b.end))!;
      expect(Date.parse(hour.start)).to.equal(t - 30 * 60_000);
      expect(hour.conversions).to.equal(5);
      expect(hour.revenue).to.deep.equal({ EUR: 1350, JPY: 5, USD: 300 });
      for (const b of series.data) if (b !== hour) expect(b.revenue, b.start).to.deep.equal({});

      type Rows = { data: Array<Figures & { value: string | null }> };
      const byLink = (await (await get('breakdown', { ...range, dimension: 'link' })).json()) as Rows;
      expect(byLink.data.find((r) => r.value === 'lnk_api')!.revenue).to.deep.equal({ EUR: 1250, USD: 300 });
      const rev = byLink.data.find((r) => r.value === 'lnk_rev')!;
      expect(rev.conversions).to.equal(3);
      expect(rev.revenue).to.deep.equal({ EUR: 100, JPY: 5 });
      const byCountry = (await (await get('breakdown', { ...range, dimension: 'country' })).json()) as Rows;
      expect(byCountry.data.find((r) => r.value === 'FR')).to.deep.include({ conversions: 2, revenue: { EUR: 1250, USD: 300 } });
      expect(byCountry.data.find((r) => r.value === 'US')).to.deep.include({ conversions: 3, revenue: { EUR: 100, JPY: 5 } });
      // A visitor filter answers from that dimension's cells, revenue included.
      const fr = (await (await get('summary', { ...range, country: 'FR' })).json()) as Figures;
      expect(fr.revenue).to.deep.equal({ EUR: 1250, USD: 300 });
      const top = (await (await get('links/top', range)).json()) as { data: Array<{ id: string; revenue: Record<string, number> }> };
      expect(top.data.find((r) => r.id === 'lnk_rev')!.revenue).to.deep.equal({ EUR: 100, JPY: 5 });

      const csv = await get('export.csv', range);
      expect(csv.status).to.equal(200);
      const rows = parse<Record<string, string>>(await csv.text(), { columns: true });
      const of = (i: number) => rows.find((r) => r.click_id === clicks[i]!.id)!;
      expect(of(0)).to.deep.include({ conversions: '2', revenue: 'EUR 1250;USD 300' });
      expect(of(1)).to.deep.include({ conversions: '2', revenue: 'EUR 100' });
      expect(of(2)).to.deep.include({ conversions: '1', revenue: 'JPY 5' });
    });
  });

  describe('CSV export', () => {
    it('streams RFC 4180 CSV that a parser reads back: commas, quotes, newlines, unicode, formula cells neutralised, no raw IP', async () => {
      const rand = seeded(11);
      const t = Date.parse('2026-11-12T08:00:00Z');
      const clicks = Array.from({ length: 40 }, () => randomClick(rand, workspaceId, links, t, t + 3_600_000, 10));
      const nasty = [
        'Saint-Denis, "la" ville',
        'line one\nline two\r\nthree',
        '=HYPERLINK("http://evil.example","x")',
        '+1+2',
        '-2+3',
        '@SUM(A1)',
        '\tcmd',
        '\rcr',
        'Zürich 東京 🚀',
        '=1+1\n=2+2',
      ];
      nasty.forEach((city, i) => {
        clicks[i]!.visitor.city = city;
        clicks[i]!.visitor.visitor_type = 'human';
      });
      clicks[0]!.visitor.ip = 'a1b2c3d4e5';
      await ingest(clicks);
      const res = await get('export.csv', { start: '2026-11-12T00:00:00Z', end: '2026-11-13T00:00:00Z', bots: 'include' });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
      expect(res.headers.get('transfer-encoding')).to.equal('chunked');
      const text = await res.text();
      // RFC 4180 records end with CRLF, the last one included.
      expect(text.slice(0, text.indexOf('\n') + 1)).to.equal(`${EXPORT_COLUMNS.join(',')}\r\n`);
      expect(text.endsWith('\r\n')).to.equal(true);
      const rows = parse<Record<string, string>>(text, { columns: true });
      expect(Object.keys(rows[0]!)).to.deep.equal([...EXPORT_COLUMNS]);
      expect(rows.map((r) => r.click_id).sort()).to.deep.equal(clicks.map((c) => c.id).sort());
      const cityOf = (id: string) => rows.find((r) => r.click_id === id)!.city;
      expect(cityOf(clicks[0]!.id)).to.equal('Saint-Denis, "la" ville');
      expect(cityOf(clicks[1]!.id)).to.equal('line one\nline two\r\nthree');
      expect(cityOf(clicks[2]!.id)).to.equal(`'=HYPERLINK("http://evil.example","x")`);
      expect(cityOf(clicks[3]!.id)).to.equal(`'+1+2`);
      expect(cityOf(clicks[4]!.id)).to.equal(`'-2+3`);
      expect(cityOf(clicks[5]!.id)).to.equal(`'@SUM(A1)`);
      expect(cityOf(clicks[6]!.id)).to.equal(`'\tcmd`);
      expect(cityOf(clicks[7]!.id)).to.equal(`'\rcr`);
      expect(cityOf(clicks[8]!.id)).to.equal('Zürich 東京 🚀');
      // A formula is neutralised whatever follows its first line.
      expect(cityOf(clicks[9]!.id)).to.equal(`'=1+1\n=2+2`);
      // The campaign of a destination is itself a formula: neutralised in its own column too.
      for (const row of rows) if (row.utm_campaign !== '') expect(row.utm_campaign).to.not.match(/^[=+\-@\t\r]/);
      expect(rows.find((r) => r.click_id === clicks[0]!.id)!.ip).to.equal('a1b2c3d4e5');
      // Filters apply as in the other endpoints: bots excluded by default.
      const humans = parse<Record<string, string>>(await (await get('export.csv', { start: '2026-11-12T00:00:00Z', end: '2026-11-13T00:00:00Z' })).text(), { columns: true });
      expect(humans).to.have.length(rows.filter((r) => r.bot === 'false').length);
    });

    it('fills every column from the stored click (derived columns as the dimensions define them) and applies link, referer and UTM filters', async () => {
      const rand = seeded(13);
      const t = Date.parse('2026-11-09T12:34:56.789Z');
      const base = randomClick(rand, workspaceId, links, t, t + 1, 1);
      const full: ClickRecord = {
        ...base,
        ts: new Date(t).toISOString(),
        link_id: 'lnk_api',
        outcome: 'redirect',
        destination: 'https://shop.example/p?utm_source=news&utm_medium=email&utm_campaign=spring',
        decision: { step: 'rotator', ruleId: 'rule_x', workspaceRule: false, targetingIndex: null, variantIndex: 2, destinationId: 'dst_1', rotatorFallback: false },
        visitor: {
          ...base.visitor,
          ip: '198.51.100.0',
          device: 'mobile',
          os: 'android',
          browser: 'Chrome',
          language: 'de',
          country: 'DE',
          region: 'Berlin',
          city: 'Berlin',
          asn: 3320,
          visitor_type: 'search_bot',
          verified_bot: true,
          bot_name: 'Googlebot',
          proxy_type: null,
          quality: 12,
          referer: 'https://www.News.Example/a?b=1',
          visit: 'repeat',
        },
      };
      // A second click of another link, without referer, UTM, variant, rotator destination, rule nor IP.
      const plain: ClickRecord = {
        ...base,
        id: randomClick(rand, workspaceId, links, t, t + 1, 1).id,
        ts: new Date(t + 1000).toISOString(),
        link_id: 'lnk_other',
        destination: 'https://shop.example/q',
        decision: { ...full.decision, ruleId: null, variantIndex: null, destinationId: null },
        visitor: { ...full.visitor, referer: null, ip: null, asn: null, verified_bot: false, bot_name: null, visitor_type: 'human' },
      };
      await ingest([full, plain]);
      const range = { start: '2026-11-09T00:00:00Z', end: '2026-11-10T00:00:00Z', bots: 'include', timezone: 'America/New_York' };
      const read = async (params: Record<string, string>) => parse<Record<string, string>>(await (await get('export.csv', { ...range, ...params })).text(), { columns: true });
      const rows = await read({});
      expect(rows.map((r) => r.click_id)).to.deep.equal([full.id, plain.id]);
      expect(rows[0]).to.deep.equal({
        click_id: full.id,
        timestamp: '2026-11-09T12:34:56.789Z',
        local_time: '2026-11-09T07:34:56-05:00',
        link_id: 'lnk_api',
        domain: full.domain,
        slug: full.slug,
        destination: full.destination,
        outcome: 'redirect',
        country: 'DE',
        region: 'Berlin',
        city: 'Berlin',
        asn: '3320',
        device: 'mobile',
        os: 'android',
        browser: 'Chrome',
        language: 'de',
        referer: 'news.example',
        referer_url: 'https://www.News.Example/a?b=1',
        visitor_type: 'search_bot',
        bot: 'true',
        verified_bot: 'true',
        bot_name: 'Googlebot',
        proxy_type: '',
        quality: '12',
        visit: 'repeat',
        ab_variant: '2',
        rotator_destination: 'dst_1',
        rule: 'rule_x',
        utm_source: 'news',
        utm_medium: 'email',
        utm_campaign: 'spring',
        ip: '198.51.100.0',
        conversions: '0',
        revenue: '',
      });
      const second = rows[1]!;
      expect([second.asn, second.referer, second.referer_url, second.ab_variant, second.rotator_destination, second.rule, second.utm_source, second.utm_medium, second.utm_campaign, second.ip, second.bot]).to.deep.equal(['', '', '', '', '', '', '', '', '', '', 'false']);
      // Filters that only the click itself answers (not the stored fields the database narrows on).
      expect((await read({ referer: 'news.example' })).map((r) => r.click_id)).to.deep.equal([full.id]);
      expect((await read({ utm_source: 'news' })).map((r) => r.click_id)).to.deep.equal([full.id]);
      expect((await read({ link_id: 'lnk_other' })).map((r) => r.click_id)).to.deep.equal([plain.id]);
      expect((await read({ bots: 'only' })).map((r) => r.click_id)).to.deep.equal([full.id]);
    });

    it('lets two exports of a workspace run at once and answers a third 429 with Retry-After; a closed one frees its slot', async () => {
      const rand = seeded(12);
      const t = Date.parse('2026-11-14T08:00:00Z');
      const many = Array.from({ length: 20_000 }, () => randomClick(rand, workspaceId, links, t, t + 600_000, 50));
      await api.infra.stores.clicks.insert(many);
      const params = { start: '2026-11-14T00:00:00Z', end: '2026-11-15T00:00:00Z', bots: 'include' };
      const first = new AbortController();
      const second = new AbortController();
      const a = await fetch(`${api.url}/v1/analytics/export.csv?${new URLSearchParams(params).toString()}`, { headers: bearer(key), signal: first.signal });
      const b = await fetch(`${api.url}/v1/analytics/export.csv?${new URLSearchParams(params).toString()}`, { headers: bearer(key), signal: second.signal });
      expect([a.status, b.status]).to.deep.equal([200, 200]);
      // Both are held open (not read): a third is refused.
      const third = await get('export.csv', params);
      expect(third.status).to.equal(429);
      expect(((await third.json()) as ErrorBody).error.code).to.equal('rate_limited');
      expect(Number(third.headers.get('retry-after'))).to.be.at.least(1);
      // The client of the first goes away: its cursor is closed and its slot freed.
      first.abort();
      await a.body?.cancel().catch(() => undefined);
      const slots = api.infra.stores.exportSlots.collection;
      const deadline = Date.now() + 20_000;
      while ((await slots.countDocuments({ _id: { $regex: `^${workspaceId}\\|` } })) > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await slots.countDocuments({ _id: { $regex: `^${workspaceId}\\|` } }), 'the first export\'s slot is free').to.equal(1);
      const fourth = await get('export.csv', params);
      expect(fourth.status).to.equal(200);
      const rows = parse<Record<string, string>>(await fourth.text(), { columns: true });
      expect(rows).to.have.length(20_000);
      // Many cursor batches, each click once, oldest first.
      expect(new Set(rows.map((row) => row.click_id)).size).to.equal(20_000);
      const times = rows.map((row) => Date.parse(row.timestamp!));
      expect(times.every((t, i) => i === 0 || t >= times[i - 1]!), 'rows in time order').to.equal(true);
      second.abort();
    });
  });
});
