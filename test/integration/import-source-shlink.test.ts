// The Shlink reader against a server that speaks Shlink's REST API v3 as its OpenAPI definition describes it
// (test/helpers/import-servers/shlink.ts names the reference files), over real HTTP.
// This file reads the source alone. The import of this source through the API and through `linkplane import`, with
// tags, a custom domain, an expiry and a taken slug (or what the source lacks of these, said and checked absent), is
// in imports-run.test.ts and imports-cli.test.ts, from the cases of test/helpers/import-cases.ts.
import { expect } from 'chai';
import { SourceError, type SourceOptions } from '../../src/imports/source.ts';
import { createShlinkSource, SHLINK_PAGE_SIZE } from '../../src/imports/sources/shlink.ts';
import { sourceDeps } from '../helpers/import-http.ts';
import { failureOf, idsOf, readPages } from '../helpers/import-read.ts';
import { startShlinkServer, type ShlinkServerOptions, type ShlinkShortUrlFixture } from '../helpers/import-servers/shlink.ts';
import type { ServiceServer } from '../helpers/import-servers/base.ts';

const API_KEY = 'a7c1e2b0-3f4d-4c5e-9a8b-7c6d5e4f3a2b';

/** Short URL n, created n minutes after a start, unless `second` puts a group of them in the same second. */
function aShortUrl(n: number, overrides: Partial<ShlinkShortUrlFixture> = {}): ShlinkShortUrlFixture {
  const created = new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString().replace('.000Z', '+00:00');
  return { shortCode: `code${n}`, longUrl: `https://example.com/page/${n}`, dateCreated: created, tags: [], visits: { total: n }, ...overrides };
}

const optionsFor = (server: ServiceServer, overrides: Partial<SourceOptions> = {}): SourceOptions => ({ token: API_KEY, baseUrl: server.url, params: {}, file: null, ...overrides });

describe('import source: Shlink REST API v3', () => {
  const servers: ServiceServer[] = [];
  async function aServer(options: Partial<ShlinkServerOptions> & Pick<ShlinkServerOptions, 'shortUrls'>) {
    const server = await startShlinkServer({ apiKey: API_KEY, ...options });
    servers.push(server);
    return server;
  }
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('reads every short URL exactly once over several pages, a tie of one creation second larger than a page included', async () => {
    // Shlink's own CSV import dates all it creates at one second, and the server orders that tie differently per query.
    const tie = '2024-03-01T12:00:00+00:00';
    const shortUrls = [
      ...Array.from({ length: 60 }, (_, n) => aShortUrl(n)),
      ...Array.from({ length: SHLINK_PAGE_SIZE + 50 }, (_, n) => aShortUrl(1000 + n, { dateCreated: tie })),
      ...Array.from({ length: 70 }, (_, n) => aShortUrl(100_000 + n)),
    ];
    const server = await aServer({ shortUrls });
    const read = await readPages(createShlinkSource(optionsFor(server), sourceDeps()));
    expect(read.errors).to.deep.equal([]);
    expect(idsOf(read.links)).to.have.length(shortUrls.length);
    expect(new Set(idsOf(read.links))).to.deep.equal(new Set(shortUrls.map((s) => `s.test/${s.shortCode}`)));
    expect(read.cursors.length).to.be.at.least(3);
    expect(read.totals[0]).to.equal(shortUrls.length);
    const lists = server.requests.filter((request) => request.path === '/rest/v3/short-urls');
    expect(lists[0]!.query.get('orderBy')).to.equal('dateCreated-ASC');
    expect(lists[1]!.query.get('startDate')).to.be.a('string');
    expect(lists.every((request) => request.headers['x-api-key'] === API_KEY)).to.equal(true);
  });

  it('maps every field Shlink has, and says what a link loses', async () => {
    const full = aShortUrl(1, {
      shortCode: 'launch',
      domain: 'Go.Example.COM',
      longUrl: 'https://example.com/launch?ref=1',
      title: 'Launch day',
      tags: ['product', 'q3'],
      dateCreated: '2024-05-01T10:00:00+02:00',
      validSince: '2024-05-02T00:00:00+02:00',
      validUntil: '2024-12-31T23:59:59+01:00',
      maxVisits: 500,
      visits: { total: 328, bots: 28 },
      redirectRules: [
        { longUrl: 'https://example.com/ios', conditions: [{ type: 'device', matchValue: 'ios' }] },
        { longUrl: 'https://example.com/q', conditions: [{ type: 'query-param', matchKey: 'foo', matchValue: 'bar' }] },
        { longUrl: 'https://example.com/de', conditions: [{ type: 'geolocation-country-code', matchValue: 'DE' }, { type: 'language', matchValue: 'de' }] },
      ],
    });
    const plain = aShortUrl(2, { shortCode: 'plain', dateCreated: '2024-05-03T08:00:00+00:00', visits: { total: 0 } });
    const server = await aServer({ shortUrls: [full, plain] });
    const { links, errors } = await readPages(createShlinkSource(optionsFor(server), sourceDeps()));
    expect(errors).to.deep.equal([]);
    expect(links).to.deep.equal([
      {
        sourceId: 'go.example.com/launch',
        url: 'https://example.com/launch?ref=1',
        domain: 'go.example.com',
        slug: 'launch',
        title: 'Launch day',
        tags: ['product', 'q3'],
        createdAt: new Date('2024-05-01T08:00:00Z'),
        expiresAt: new Date('2024-12-31T22:59:59Z'),
        expiredUrl: null,
        password: null,
        utm: null,
        targeting: [
          { match: { os: ['ios'] }, url: 'https://example.com/ios' },
          { match: { country: ['DE'], language: ['de'] }, url: 'https://example.com/de' },
        ],
        ios: null,
        android: null,
        clicksTotal: 328,
        warnings: [
          'Shlink stops it after 500 visits; Linkplane links have no visit limit',
          'Shlink only redirects it from 2024-05-02T00:00:00+02:00; Linkplane links have no start date',
          'redirect rule 2 (to https://example.com/q) was not imported: Linkplane targeting cannot match on a query-param condition',
        ],
      },
      {
        sourceId: 's.test/plain',
        url: 'https://example.com/page/2',
        domain: 's.test',
        slug: 'plain',
        title: null,
        tags: [],
        createdAt: new Date('2024-05-03T08:00:00Z'),
        expiresAt: null,
        expiredUrl: null,
        password: null,
        utm: null,
        targeting: [],
        ios: null,
        android: null,
        clicksTotal: 0,
      },
    ]);
    // Rules are asked only of the short URL that has them, with its domain.
    const ruleRequests = server.requests.filter((request) => request.path.endsWith('/redirect-rules'));
    expect(ruleRequests.map((request) => `${request.path}?${request.query.toString()}`)).to.deep.equal(['/rest/v3/short-urls/launch/redirect-rules?domain=Go.Example.COM']);
  });

  it("reads Shlink 3.7's device long URLs and visit count, without asking for redirect rules", async () => {
    const server = await aServer({
      release: '3.7',
      shortUrls: [aShortUrl(1, { shortCode: 'app', visits: { total: 12 }, deviceLongUrls: { ios: 'https://apps.apple.com/app/x', android: 'https://play.google.com/store/apps/x', desktop: null } })],
    });
    const { links } = await readPages(createShlinkSource(optionsFor(server), sourceDeps()));
    expect(links[0]!.targeting).to.deep.equal([
      { match: { os: ['ios'] }, url: 'https://apps.apple.com/app/x' },
      { match: { os: ['android'] }, url: 'https://play.google.com/store/apps/x' },
    ]);
    expect(links[0]!.clicksTotal).to.equal(12);
    expect(server.requests.filter((request) => request.path.endsWith('/redirect-rules'))).to.have.length(0);
  });

  it('resumes from a cursor after a restart with exactly the short URLs not yet read', async () => {
    const shortUrls = Array.from({ length: SHLINK_PAGE_SIZE * 3 + 10 }, (_, n) => aShortUrl(n, { dateCreated: `2024-02-0${1 + (n % 4)}T00:00:00+00:00` }));
    const server = await aServer({ shortUrls });
    const whole = await readPages(createShlinkSource(optionsFor(server), sourceDeps()));
    const before = await readPages(createShlinkSource(optionsFor(server), sourceDeps()), null, 2);
    // A new source, as a restarted worker builds it, from the cursor the job stored.
    const after = await readPages(createShlinkSource(optionsFor(server), sourceDeps()), before.cursors.at(-1));
    expect([...idsOf(before.links), ...idsOf(after.links)]).to.deep.equal(idsOf(whole.links));
    expect(idsOf(whole.links)).to.have.length(shortUrls.length);
    expect(new Set(idsOf(whole.links)).size).to.equal(shortUrls.length);
  });

  it('also reads short URLs created while the import runs, once each', async () => {
    const shortUrls = Array.from({ length: SHLINK_PAGE_SIZE + 20 }, (_, n) => aShortUrl(n));
    const server = await aServer({ shortUrls });
    const source = createShlinkSource(optionsFor(server), sourceDeps());
    const first = await readPages(source, null, 1);
    shortUrls.push(aShortUrl(500_000, { shortCode: 'late' }));
    const rest = await readPages(source, first.cursors[0]);
    const ids = [...idsOf(first.links), ...idsOf(rest.links)];
    expect(ids).to.have.length(shortUrls.length);
    expect(new Set(ids).size).to.equal(shortUrls.length);
    expect(ids).to.include('s.test/late');
  });

  it('waits as long as a 429 asks and reads on', async () => {
    const server = await aServer({ shortUrls: Array.from({ length: SHLINK_PAGE_SIZE + 5 }, (_, n) => aShortUrl(n)) });
    const deps = sourceDeps();
    const source = createShlinkSource(optionsFor(server), deps);
    const first = await source.page(null, new AbortController().signal);
    server.throttleNext(2, 7);
    const second = await source.page(first.next, new AbortController().signal);
    expect(deps.waits).to.deep.equal([7000, 7000]);
    expect(first.links.length + second.links.length).to.equal(SHLINK_PAGE_SIZE + 5);
    expect(second.next).to.equal(null);
  });

  it('fails as auth on a refused API key, and as input without one', async () => {
    const server = await aServer({ shortUrls: [aShortUrl(1)] });
    const refused = await failureOf(createShlinkSource(optionsFor(server, { token: 'wrong' }), sourceDeps()).page(null, new AbortController().signal));
    expect(refused).to.be.instanceOf(SourceError);
    expect(refused.kind).to.equal('auth');
    expect(() => createShlinkSource(optionsFor(server, { token: '  ' }), sourceDeps())).to.throw(SourceError).with.property('kind', 'input');
  });

  it('fails as input on a missing or unusable base URL, a base URL that is not Shlink, an unknown option or a damaged cursor', async () => {
    const server = await aServer({ shortUrls: [aShortUrl(1)] });
    for (const baseUrl of [null, 'not a url', 'ftp://s.test', 'https://user:pw@s.test', 'https://s.test/?x=1']) {
      expect(() => createShlinkSource(optionsFor(server, { baseUrl }), sourceDeps()), String(baseUrl)).to.throw(SourceError).with.property('kind', 'input');
    }
    expect(() => createShlinkSource(optionsFor(server, { params: { domian: 'x' } }), sourceDeps())).to.throw(SourceError).with.property('kind', 'input');
    const notShlink = await failureOf(createShlinkSource(optionsFor(server, { baseUrl: `${server.url}/somewhere` }), sourceDeps()).page(null, new AbortController().signal));
    expect(notShlink.kind).to.equal('input');
    const damaged = await failureOf(createShlinkSource(optionsFor(server), sourceDeps()).page('{"since":3}', new AbortController().signal));
    expect(damaged.kind).to.equal('input');
  });

  it('accepts the API URL pasted as the base URL', async () => {
    const server = await aServer({ shortUrls: [aShortUrl(1)] });
    const { links } = await readPages(createShlinkSource(optionsFor(server, { baseUrl: `${server.url}/rest/v3/` }), sourceDeps()));
    expect(idsOf(links)).to.deep.equal(['s.test/code1']);
  });

  it('fails as remote when Shlink keeps answering 503', async () => {
    const server = await aServer({ shortUrls: [aShortUrl(1)] });
    server.failNext(6, 503);
    const failure = await failureOf(createShlinkSource(optionsFor(server), sourceDeps()).page(null, new AbortController().signal));
    expect(failure.kind).to.equal('remote');
    expect(server.requests).to.have.length(6);
  });

  it('gives a short URL it cannot import as a row error and reads the others', async () => {
    const server = await aServer({ shortUrls: [aShortUrl(1), aShortUrl(2, { shortCode: 'call', longUrl: 'tel:+15550100' }), aShortUrl(3)] });
    const { links, errors } = await readPages(createShlinkSource(optionsFor(server), sourceDeps()));
    expect(idsOf(links)).to.deep.equal(['s.test/code1', 's.test/code3']);
    expect(errors).to.deep.equal([{ ref: 's.test/call', message: 'its long URL "tel:+15550100" is not an absolute http(s) URL' }]);
  });
});
