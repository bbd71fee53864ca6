// The Bitly source against a Bitly API v4 test server (test/helpers/import-servers/bitly.ts, which names the
// reference pages it follows: dev.bitly.com/api-reference, the search_after change note, the rate-limits page).
// This file reads the source alone. The import of this source through the API and through `linkplane import`, with
// tags, a custom domain, an expiry and a taken slug (or what the source lacks of these, said and checked absent), is
// in imports-run.test.ts and imports-cli.test.ts, from the cases of test/helpers/import-cases.ts.
import { expect } from 'chai';
import { createBitlySource } from '../../src/imports/sources/bitly.ts';
import type { SourceOptions } from '../../src/imports/source.ts';
import { startBitlyServer, type BitlyLinkFixture, type BitlyServer } from '../helpers/import-servers/bitly.ts';
import { sourceDeps } from '../helpers/import-http.ts';
import { bareLink, failure, readAll } from '../helpers/import-source-reading.ts';

const TOKEN = 'bitly-generic-access-token';
const signal = new AbortController().signal;

/** 230 plain bitlinks: three pages of Bitly's 100 at most. */
const plain: BitlyLinkFixture[] = Array.from({ length: 230 }, (_, index) => ({
  id: `bit.ly/p${index}`,
  long_url: `https://example.com/plain/${index}`,
  created_at: new Date(Date.UTC(2024, 0, 1) + index * 60_000).toISOString().replace('.000Z', '+0000'),
}));

const branded: BitlyLinkFixture = {
  id: 'bit.ly/3launch',
  long_url: 'https://shop.example.com/spring?utm_source=news',
  title: 'Spring launch',
  tags: ['campaign', 'spring'],
  created_at: '2025-03-01T09:30:00+0000',
  expiration_at: '2026-03-01T00:00:00+0000',
  custom_bitlinks: ['https://go.example.com/launch', 'https://bit.ly/3launch'],
  archived: true,
  clicks: 1234,
};

function options(params: Record<string, string> = {}, server?: BitlyServer): SourceOptions {
  return { token: TOKEN, baseUrl: server?.url ?? null, params, file: null };
}

describe('import source: Bitly (API v4)', () => {
  let server: BitlyServer;

  afterEach(async () => {
    await server?.close();
  });

  it('reads every bitlink of the default group over several pages, archived ones included, in Bitly order', async () => {
    server = await startBitlyServer({ token: TOKEN, links: [branded, ...plain] });
    const reading = await readAll(createBitlySource(options({}, server), sourceDeps()));

    expect(reading.pages).to.have.length(3);
    expect(reading.errors).to.deep.equal([]);
    // the bitlink, then its custom back-half on the branded domain (the bit.ly alias of itself is not repeated)
    expect(reading.links.map((l) => l.sourceId)).to.deep.equal(['bit.ly/3launch', 'go.example.com/launch', ...plain.map((f) => f.id).reverse()]);
    expect(reading.links.at(-1)).to.deep.equal(
      bareLink('bit.ly/p0', 'https://example.com/plain/0', { domain: 'bit.ly', slug: 'p0', createdAt: new Date('2024-01-01T00:00:00Z') }),
    );
    const asked = server.requests.map((r) => r.path);
    expect(asked[0]).to.equal('/v4/user');
    expect(asked.slice(1)).to.deep.equal(Array(3).fill(`/v4/groups/${server.groupGuid}/bitlinks`));
    for (const request of server.requests.slice(1)) {
      expect(Object.fromEntries(request.query)).to.include({ size: '100', archived: 'both' });
    }
  });

  it('maps every field Bitly has: back-half, domain, title, tags, dates, expiry, custom back-halves, click totals', async () => {
    server = await startBitlyServer({ token: TOKEN, links: [branded] });
    const page = await createBitlySource(options({ clicks: 'per_link' }, server), sourceDeps()).page(null, signal);

    const bitlink = bareLink('bit.ly/3launch', 'https://shop.example.com/spring?utm_source=news', {
      domain: 'bit.ly',
      slug: '3launch',
      title: 'Spring launch',
      tags: ['campaign', 'spring'],
      createdAt: new Date('2025-03-01T09:30:00Z'),
      expiresAt: new Date('2026-03-01T00:00:00Z'),
      clicksTotal: 1234,
    });
    expect(page.links).to.deep.equal([bitlink, { ...bitlink, sourceId: 'go.example.com/launch', domain: 'go.example.com', slug: 'launch', clicksTotal: null }]);
    expect(page.next).to.equal(null);
    const summary = server.requests.find((r) => r.path.endsWith('/clicks/summary'))!;
    expect(summary.path).to.equal('/v4/bitlinks/bit.ly/3launch/clicks/summary');
    expect(Object.fromEntries(summary.query)).to.deep.equal({ unit: 'day', units: '-1' });
  });

  it('reads click totals only when asked, since they take one request per bitlink', async () => {
    server = await startBitlyServer({ token: TOKEN, links: [branded] });
    const page = await createBitlySource(options({}, server), sourceDeps()).page(null, signal);
    expect(page.links[0]!.clicksTotal).to.equal(null);
    expect(server.requests.some((r) => r.path.endsWith('/clicks/summary'))).to.equal(false);
  });

  it('resumes from a stored cursor with exactly the rest, in a new source as after a restart', async () => {
    server = await startBitlyServer({ token: TOKEN, links: plain });
    const whole = await readAll(createBitlySource(options({}, server), sourceDeps()));
    const rest = await readAll(createBitlySource(options({}, server), sourceDeps()), whole.pages[0]!.next);
    expect(rest.links).to.deep.equal(whole.links.slice(100));
    expect(rest.links).to.have.length(130);
    // the group chosen on the first page is kept in the cursor: no second look at the user's default group
    expect(server.requests.filter((r) => r.path === '/v4/user')).to.have.length(1);
  });

  it('reads the group it is given rather than the default one, and says so when the token does not see it', async () => {
    server = await startBitlyServer({ token: TOKEN, links: [branded], groupGuid: 'Bsecond01' });
    const page = await createBitlySource(options({ group: 'Bsecond01' }, server), sourceDeps()).page(null, signal);
    expect(page.links).to.have.length(2);
    expect(server.requests.map((r) => r.path)).to.deep.equal(['/v4/groups/Bsecond01/bitlinks']);
    await failure(createBitlySource(options({ group: 'Bother999' }, server), sourceDeps()).page(null, signal), 'input');
  });

  it('waits for the next minute on a 429, as Bitly names no wait and its per-minute limit resets on the minute', async () => {
    server = await startBitlyServer({ token: TOKEN, links: plain });
    const deps = sourceDeps({ now: () => Date.parse('2025-06-01T12:00:42.500Z') });
    const source = createBitlySource(options({}, server), deps);
    const first = await source.page(null, signal);
    server.limitNext(1);
    const second = await source.page(first.next, signal);
    expect(deps.waits).to.deep.equal([60_000 - 42_500 + 1000]);
    expect(second.links.map((l) => l.sourceId)).to.deep.equal(plain.slice(30, 130).map((f) => f.id).reverse());
  });

  it('keeps reading when every third request is rate limited', async () => {
    server = await startBitlyServer({ token: TOKEN, links: plain, rateLimitEvery: 3 });
    const deps = sourceDeps();
    const reading = await readAll(createBitlySource(options({}, server), deps));
    expect(reading.links).to.have.length(230);
    expect(deps.waits).to.have.length(1);
  });

  it('fails as remote at once when the monthly allowance is used up, which no wait would cure', async () => {
    server = await startBitlyServer({ token: TOKEN, links: plain });
    server.rateLimitMessage('MONTHLY_LIMIT_EXCEEDED');
    server.limitNext(1);
    const deps = sourceDeps();
    const error = await failure(createBitlySource(options({ group: server.groupGuid }, server), deps).page(null, signal), 'remote');
    expect(error.message).to.contain('monthly');
    expect(deps.waits).to.deep.equal([]);
  });

  it('fails as auth when Bitly refuses the token', async () => {
    server = await startBitlyServer({ token: TOKEN, links: plain });
    await failure(createBitlySource({ ...options({}, server), token: 'wrong' }, sourceDeps()).page(null, signal), 'auth');
    expect(server.requests).to.have.length(1);
  });

  it('makes a bitlink without a usable destination or id a row error and keeps the others', async () => {
    const broken: BitlyLinkFixture[] = [
      { id: 'bit.ly/ok1', long_url: 'https://example.com/ok1' },
      { id: 'bit.ly/bad', long_url: 'javascript:alert(1)' },
      { id: 'bit.ly/none', long_url: undefined },
      { long_url: 'https://example.com/x', created_at: '2025-01-01T00:00:00+0000' },
    ];
    server = await startBitlyServer({ token: TOKEN, links: broken });
    const page = await createBitlySource(options({}, server), sourceDeps()).page(null, signal);
    expect(page.links.map((l) => l.sourceId)).to.deep.equal(['bit.ly/ok1']);
    expect(page.errors).to.deep.equal([
      { ref: 'bit.ly/bad', message: 'the destination "javascript:alert(1)" is not an absolute http(s) URL' },
      { ref: 'bit.ly/none', message: 'the link has no destination URL' },
      { ref: 'row 4 of the page', message: 'the bitlink has no id' },
    ]);
  });

  it('refuses options it cannot use before any request: no token, a malformed group, an unknown option', async () => {
    server = await startBitlyServer({ token: TOKEN, links: plain });
    const deps = sourceDeps();
    expect(() => createBitlySource({ ...options({}, server), token: ' ' }, deps)).to.throw('needs an API token');
    expect(() => createBitlySource(options({ group: 'a/b' }, server), deps)).to.throw('not a Bitly group guid');
    expect(() => createBitlySource(options({ domain: 'bit.ly' }, server), deps)).to.throw('has no option domain');
    expect(() => createBitlySource(options({ clicks: 'yes' }, server), deps)).to.throw('per_link');
    await failure(createBitlySource(options({}, server), deps).page('not-a-cursor', signal), 'input');
    expect(server.requests).to.have.length(0);
  });
});
