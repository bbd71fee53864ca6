// The Short.io source against a Short.io REST API test server (test/helpers/import-servers/shortio.ts, which names the
// reference it follows: Short.io's OpenAPI document, the list-of-links guide, the official SDK's rate-limit notes).
// This file reads the source alone. The import of this source through the API and through `linkplane import`, with
// tags, a custom domain, an expiry and a taken slug (or what the source lacks of these, said and checked absent), is
// in imports-run.test.ts and imports-cli.test.ts, from the cases of test/helpers/import-cases.ts.
import { expect } from 'chai';
import { createShortioSource } from '../../src/imports/sources/shortio.ts';
import type { SourceOptions } from '../../src/imports/source.ts';
import { startShortioServer, type ShortioLinkFixture, type ShortioServer } from '../helpers/import-servers/shortio.ts';
import { sourceDeps } from '../helpers/import-http.ts';
import { bareLink, failure, readAll, readSome } from '../helpers/import-source-reading.ts';

const KEY = 'sk_shortio_secret';
const signal = new AbortController().signal;
const DOMAINS = ['go.example.com', 'empty.example.com', 'links.example.org'];

const first: ShortioLinkFixture[] = Array.from({ length: 230 }, (_, i) => ({ domain: 'go.example.com', path: `g${i}`, originalURL: `https://example.com/g/${i}` }));
const third: ShortioLinkFixture[] = Array.from({ length: 7 }, (_, i) => ({ domain: 'links.example.org', path: `l${i}`, originalURL: `https://example.org/l/${i}` }));

function options(server: ShortioServer, params: Record<string, string> = {}): SourceOptions {
  return { token: KEY, baseUrl: server.url, params, file: null };
}

const slugs = (links: Array<{ slug: string | null }>) => links.map((l) => l.slug);

describe('import source: Short.io (REST API)', () => {
  let server: ShortioServer;

  afterEach(async () => {
    await server?.close();
  });

  it('reads every domain of the account when none is given, page by page, skipping empty domains', async () => {
    server = await startShortioServer({ token: KEY, domains: DOMAINS, links: [...first, ...third] });
    const reading = await readAll(createShortioSource(options(server), sourceDeps()));
    expect(slugs(reading.links)).to.deep.equal([...first, ...third].map((f) => f.path));
    expect(reading.links.map((l) => l.domain)).to.deep.equal([...first, ...third].map((f) => f.domain));
    expect(reading.pages.map((p) => p.links.length)).to.deep.equal([100, 100, 30, 7]);
    const lists = server.requests.filter((r) => r.path === '/api/links');
    expect(lists.map((r) => r.query.get('domain_id'))).to.deep.equal(['310001', '310001', '310001', '310002', '310003']);
    expect(Object.fromEntries(lists[0]!.query)).to.deep.equal({ domain_id: '310001', limit: '100', dateSortOrder: 'desc' });
    for (const request of server.requests) expect(request.headers.authorization).to.equal(KEY);
  });

  it('maps every field Short.io gives: path, domain, title, tags, dates, expiry, password, UTM, iOS and Android destinations', async () => {
    const created = Date.parse('2025-03-01T09:30:00Z');
    server = await startShortioServer({
      token: KEY,
      domains: DOMAINS,
      links: [
        {
          idString: 'lnk_4Th1_8MAbEyw',
          path: 'spring',
          originalURL: 'https://shop.example.com/spring',
          title: 'Spring sale',
          tags: ['promo', 'spring'],
          createdAt: created,
          expiresAt: '2026-03-01T00:00:00.000Z',
          expiredURL: 'https://shop.example.com/over',
          password: 'open sesame',
          hasPassword: true,
          utmSource: 'newsletter',
          utmMedium: 'email',
          utmCampaign: 'spring',
          iphoneURL: 'https://apps.apple.com/app/id1',
          androidURL: 'https://play.google.com/store/apps/details?id=shop',
        },
        { path: '', originalURL: 'https://example.com/home' },
      ],
    });
    const reading = await readAll(createShortioSource(options(server, { domain: 'go.example.com' }), sourceDeps()));
    expect(reading.links).to.deep.equal([
      bareLink('lnk_4Th1_8MAbEyw', 'https://shop.example.com/spring', {
        domain: 'go.example.com',
        slug: 'spring',
        title: 'Spring sale',
        tags: ['promo', 'spring'],
        createdAt: new Date(created),
        expiresAt: new Date('2026-03-01T00:00:00Z'),
        expiredUrl: 'https://shop.example.com/over',
        password: 'open sesame',
        utm: { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring' },
        ios: 'https://apps.apple.com/app/id1',
        android: 'https://play.google.com/store/apps/details?id=shop',
      }),
    ]);
    // the domain's root redirect (empty path) is not a short link: neither imported nor an error
    expect(reading.errors).to.deep.equal([]);
  });

  it('reads the one domain it is given, by id or by host name', async () => {
    server = await startShortioServer({ token: KEY, domains: DOMAINS, links: [...first, ...third] });
    for (const domain of [String(server.domainId('links.example.org')), 'LINKS.example.org']) {
      const reading = await readAll(createShortioSource(options(server, { domain }), sourceDeps()));
      expect(slugs(reading.links)).to.deep.equal(third.map((f) => f.path));
    }
    await failure(createShortioSource(options(server, { domain: 'other.example.net' }), sourceDeps()).page(null, signal), 'input');
  });

  it('resumes from a stored cursor with exactly the rest, across domains, in a new source as after a restart', async () => {
    server = await startShortioServer({ token: KEY, domains: DOMAINS, links: [...first, ...third] });
    const whole = await readAll(createShortioSource(options(server), sourceDeps()));
    for (const at of [1, 3]) {
      const done = await readSome(createShortioSource(options(server), sourceDeps()), null, at);
      const rest = await readAll(createShortioSource(options(server), sourceDeps()), done.pages.at(-1)!.next);
      expect(slugs([...done.links, ...rest.links]), `stopped after page ${at}`).to.deep.equal(slugs(whole.links));
    }
  });

  it('waits as long as a 429 Retry-After says and reads on', async () => {
    server = await startShortioServer({ token: KEY, domains: DOMAINS, links: first, retryAfterSeconds: 4 });
    const deps = sourceDeps();
    server.limitNext(2);
    const reading = await readAll(createShortioSource(options(server), deps));
    expect(deps.waits).to.deep.equal([4_000, 4_000]);
    expect(reading.links).to.have.length(230);
  });

  it('fails as auth when Short.io refuses the key', async () => {
    server = await startShortioServer({ token: KEY, domains: DOMAINS, links: first });
    await failure(createShortioSource({ ...options(server), token: 'sk_wrong' }, sourceDeps()).page(null, signal), 'auth');
    expect(server.requests).to.have.length(1);
  });

  it('makes a malformed link a row error, and a password-protected one without its password too, rather than open it', async () => {
    server = await startShortioServer({
      token: KEY,
      domains: DOMAINS,
      links: [
        { path: 'ok' },
        { idString: 'lnk_bad', path: 'bad', originalURL: 'mailto:someone@example.com' },
        { idString: undefined, path: 'noid' },
        { idString: 'lnk_locked', path: 'locked', hasPassword: true },
      ],
    });
    const page = await createShortioSource(options(server), sourceDeps()).page(null, signal);
    expect(slugs(page.links)).to.deep.equal(['ok']);
    expect(page.errors).to.deep.equal([
      { ref: 'lnk_bad', message: 'the destination "mailto:someone@example.com" is not an absolute http(s) URL' },
      { ref: 'https://go.example.com/noid', message: 'the link has no id' },
      { ref: 'lnk_locked', message: 'go.example.com/locked is password-protected and Short.io does not export its password; it was not imported, so as not to open it' },
    ]);
  });

  it('refuses options it cannot use before any request', async () => {
    server = await startShortioServer({ token: KEY, domains: DOMAINS, links: first });
    expect(() => createShortioSource({ ...options(server), token: null }, sourceDeps())).to.throw('needs an API token');
    expect(() => createShortioSource(options(server, { domain: 'go.example.com/x' }), sourceDeps())).to.throw('not a Short.io domain id or host name');
    expect(() => createShortioSource(options(server, { workspace: '1' }), sourceDeps())).to.throw('has no option workspace');
    expect(server.requests).to.have.length(0);
  });
});
