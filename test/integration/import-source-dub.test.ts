// The Dub source against a Dub REST API test server (test/helpers/import-servers/dub.ts, which names the reference it
// follows: Dub's published OpenAPI document, the API introduction and the rate-limits page).
// This file reads the source alone. The import of this source through the API and through `linkplane import`, with
// tags, a custom domain, an expiry and a taken slug (or what the source lacks of these, said and checked absent), is
// in imports-run.test.ts and imports-cli.test.ts, from the cases of test/helpers/import-cases.ts.
import { expect } from 'chai';
import { createDubSource } from '../../src/imports/sources/dub.ts';
import type { SourceOptions } from '../../src/imports/source.ts';
import { startDubServer, type DubLinkFixture, type DubServer } from '../helpers/import-servers/dub.ts';
import { sourceDeps } from '../helpers/import-http.ts';
import { bareLink, failure, readAll, readSome } from '../helpers/import-source-reading.ts';

const TOKEN = 'dub_test_key';
const signal = new AbortController().signal;

const unsorted: DubLinkFixture[] = Array.from({ length: 150 }, (_, i) => ({ key: `u${i}`, url: `https://example.com/u/${i}` }));
const inFolder: DubLinkFixture[] = Array.from({ length: 120 }, (_, i) => ({ key: `f${i}`, url: `https://example.com/f/${i}`, folderId: 'fld_a', archived: i % 10 === 0 }));

const rich: DubLinkFixture = {
  domain: 'go.example.com',
  key: 'spring',
  url: 'https://shop.example.com/spring',
  title: 'Spring sale',
  tags: ['campaign', 'spring'],
  createdAt: '2025-03-01T09:30:00.000Z',
  expiresAt: '2026-03-01T00:00:00.000Z',
  expiredUrl: 'https://shop.example.com/over',
  password: 'open sesame',
  ios: 'https://apps.apple.com/app/id1',
  android: 'https://play.google.com/store/apps/details?id=shop',
  geo: { US: 'https://shop.example.com/us', CA: 'https://shop.example.com/us', DE: 'https://shop.example.com/de' },
  utm_source: 'newsletter',
  utm_medium: 'email',
  utm_campaign: 'spring',
  utm_term: null,
  utm_content: 'hero',
  clicks: 4321,
  archived: true,
};

function options(server: DubServer, params: Record<string, string> = {}): SourceOptions {
  return { token: TOKEN, baseUrl: server.url, params, file: null };
}

const keys = (links: Array<{ slug: string | null }>) => links.map((l) => l.slug);

describe('import source: Dub (REST API)', () => {
  let server: DubServer;

  afterEach(async () => {
    await server?.close();
  });

  it('reads every link of the workspace, folder by folder, archived ones included, each exactly once', async () => {
    server = await startDubServer({ token: TOKEN, links: [...unsorted, ...inFolder], folders: ['fld_a', 'fld_empty'] });
    const reading = await readAll(createDubSource(options(server), sourceDeps()));

    expect(reading.errors).to.deep.equal([]);
    expect(keys(reading.links)).to.deep.equal([...unsorted, ...inFolder].map((f) => f.key));
    expect(reading.pages[0]!.total).to.equal(270);
    expect(reading.pages.length).to.be.greaterThan(3);
    const lists = server.requests.filter((r) => r.path === '/links');
    for (const request of lists) expect(Object.fromEntries(request.query)).to.include({ showArchived: 'true' });
    expect(new Set(lists.map((r) => r.query.get('folderId')))).to.deep.equal(new Set(['unsorted', 'fld_a', 'fld_empty']));
  });

  it('maps every field Dub has: slug, domain, title, tags, dates, expiry, password, UTM, geo and device targeting, clicks', async () => {
    server = await startDubServer({ token: TOKEN, links: [rich, { key: '_root', url: 'https://example.com/home' }] });
    const reading = await readAll(createDubSource(options(server), sourceDeps()));
    expect(reading.links).to.deep.equal([
      bareLink('link_000001', 'https://shop.example.com/spring', {
        domain: 'go.example.com',
        slug: 'spring',
        title: 'Spring sale',
        tags: ['campaign', 'spring'],
        createdAt: new Date('2025-03-01T09:30:00Z'),
        expiresAt: new Date('2026-03-01T00:00:00Z'),
        expiredUrl: 'https://shop.example.com/over',
        password: 'open sesame',
        utm: { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring', utm_content: 'hero' },
        targeting: [
          { match: { country: ['US', 'CA'] }, url: 'https://shop.example.com/us' },
          { match: { country: ['DE'] }, url: 'https://shop.example.com/de' },
        ],
        ios: 'https://apps.apple.com/app/id1',
        android: 'https://play.google.com/store/apps/details?id=shop',
        clicksTotal: 4321,
      }),
    ]);
    // the domain's root redirect (key `_root`) is not a short link: neither imported nor an error
    expect(reading.errors).to.deep.equal([]);
  });

  it('resumes from a stored cursor with exactly the rest, in a new source as after a restart', async () => {
    server = await startDubServer({ token: TOKEN, links: [...unsorted, ...inFolder], folders: ['fld_a'] });
    const whole = await readAll(createDubSource(options(server), sourceDeps()));
    for (const at of [1, 2, 3]) {
      const rest = await readAll(createDubSource(options(server), sourceDeps()), whole.pages[at - 1]!.next);
      const before = whole.pages.slice(0, at).reduce((sum, page) => sum + page.links.length, 0);
      expect(keys(rest.links), `from page ${at}`).to.deep.equal(keys(whole.links.slice(before)));
    }
  });

  it('resumes without a gap or a repeat when the links the cursor points at were deleted in between', async () => {
    server = await startDubServer({ token: TOKEN, links: unsorted });
    const source = createDubSource(options(server), sourceDeps());
    const first = await readSome(source, null, 2);
    const seen = keys(first.links);
    // the last three links read are deleted at Dub before the import resumes
    for (const page of first.pages.slice(-1)) for (const link of page.links.slice(-3)) server.remove(link.sourceId);
    const rest = await readAll(createDubSource(options(server), sourceDeps()), first.pages.at(-1)!.next);
    expect([...seen, ...keys(rest.links)]).to.deep.equal(unsorted.map((f) => f.key));
  });

  it('takes in a link created at Dub while the import runs', async () => {
    server = await startDubServer({ token: TOKEN, links: unsorted.slice(0, 5) });
    const source = createDubSource(options(server), sourceDeps());
    const pivot = await source.page(null, signal);
    server.add({ key: 'late', url: 'https://example.com/late' });
    const rest = await readAll(source, pivot.next);
    expect([...keys(pivot.links), ...keys(rest.links)].sort()).to.deep.equal(['late', 'u0', 'u1', 'u2', 'u3', 'u4']);
  });

  it('waits as long as a 429 Retry-After says and reads on', async () => {
    server = await startDubServer({ token: TOKEN, links: unsorted, retryAfterSeconds: 13 });
    const deps = sourceDeps();
    const source = createDubSource(options(server), deps);
    const first = await source.page(null, signal);
    server.limitNext(1);
    const rest = await readAll(source, first.next);
    expect(deps.waits).to.deep.equal([13_000]);
    expect(keys([...first.links, ...rest.links])).to.deep.equal(unsorted.map((f) => f.key));
  });

  it('fails as auth when Dub refuses the key', async () => {
    server = await startDubServer({ token: TOKEN, links: unsorted });
    await failure(createDubSource({ ...options(server), token: 'dub_wrong' }, sourceDeps()).page(null, signal), 'auth');
    expect(server.requests).to.have.length(1);
  });

  it('makes a link without a usable destination or id a row error and keeps the others', async () => {
    server = await startDubServer({
      token: TOKEN,
      links: [
        { key: 'ok', url: 'https://example.com/ok' },
        { key: 'relative', url: '/path' },
        { key: 'noid', id: undefined, url: 'https://example.com/noid' },
        { key: 'ok2', url: 'https://example.com/ok2' },
      ],
    });
    const reading = await readAll(createDubSource(options(server), sourceDeps()));
    expect(keys(reading.links)).to.deep.equal(['ok', 'ok2']);
    expect(reading.errors).to.deep.equal([
      { ref: 'link_000002', message: 'the destination "/path" is not an absolute http(s) URL' },
      { ref: 'https://dub.sh/noid', message: 'the link has no id' },
    ]);
  });

  it('stops, rather than skip a folder, when the link it would walk the folder from comes without an id', async () => {
    server = await startDubServer({ token: TOKEN, links: [{ key: 'noid', id: undefined }, { key: 'ok' }] });
    const error = await failure(readAll(createDubSource(options(server), sourceDeps())), 'remote');
    expect(error.message).to.contain('without its id');
  });

  it('leaves the total unknown rather than count folder by folder in a workspace of many folders', async () => {
    const folders = Array.from({ length: 11 }, (_, i) => `fld_${i}`);
    server = await startDubServer({ token: TOKEN, links: unsorted.slice(0, 3), folders });
    const reading = await readAll(createDubSource(options(server), sourceDeps()));
    expect(reading.pages[0]!.total).to.equal(null);
    expect(reading.links).to.have.length(3);
    expect(server.requests.some((r) => r.path === '/links/count')).to.equal(false);
  });

  it('refuses what it cannot use before any request: no key, an option Dub has no use for, a foreign cursor', async () => {
    server = await startDubServer({ token: TOKEN, links: unsorted });
    expect(() => createDubSource({ ...options(server), token: null }, sourceDeps())).to.throw('needs an API token');
    expect(() => createDubSource(options(server, { workspace: 'ws_1' }), sourceDeps())).to.throw('has no option workspace');
    await failure(createDubSource(options(server), sourceDeps()).page('eyJrIjoiYml0bHkiLCJzIjp7fX0', signal), 'input');
    expect(server.requests).to.have.length(0);
  });
});
