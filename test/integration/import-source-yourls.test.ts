// The YOURLS reader against a server that speaks yourls-api.php as YOURLS documents it and its code answers
// (test/helpers/import-servers/yourls.ts names the reference pages and files), over real HTTP.
// This file reads the source alone. The import of this source through the API and through `linkplane import`, with
// tags, a custom domain, an expiry and a taken slug (or what the source lacks of these, said and checked absent), is
// in imports-run.test.ts and imports-cli.test.ts, from the cases of test/helpers/import-cases.ts.
import { expect } from 'chai';
import { SourceError, type SourceOptions } from '../../src/imports/source.ts';
import { createYourlsSource, YOURLS_PAGE_SIZE } from '../../src/imports/sources/yourls.ts';
import { sourceDeps } from '../helpers/import-http.ts';
import { failureOf, idsOf, readPages } from '../helpers/import-read.ts';
import { startYourlsServer, type YourlsLinkFixture, type YourlsServerOptions } from '../helpers/import-servers/yourls.ts';
import type { ServiceServer } from '../helpers/import-servers/base.ts';

const USER = { username: 'admin', password: 'correct horse', signature: '1002a612b4' };

/** Link n, created n seconds after a start, unless `timestamp` puts it in a tie. */
function aLink(n: number, overrides: Partial<YourlsLinkFixture> = {}): YourlsLinkFixture {
  const timestamp = new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString().slice(0, 19).replace('T', ' ');
  return { keyword: `y${n}`, url: `https://example.com/${n}`, title: `Page ${n}`, timestamp, clicks: n, ...overrides };
}
/** YOURLS lists newest first; within a second, in any order. */
const keywords = (links: YourlsLinkFixture[]) => links.map((link) => link.keyword);
const optionsFor = (server: ServiceServer, overrides: Partial<SourceOptions> = {}): SourceOptions => ({ token: USER.signature, baseUrl: server.url, params: {}, file: null, ...overrides });
const signal = new AbortController().signal;

describe('import source: YOURLS yourls-api.php', () => {
  const servers: ServiceServer[] = [];
  async function aServer(options: Partial<YourlsServerOptions> & Pick<YourlsServerOptions, 'links'>) {
    const server = await startYourlsServer({ users: [USER], ...options });
    servers.push(server);
    return server;
  }
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('reads every link exactly once over several pages, a tie of one second larger than a page included', async () => {
    // A bulk import into YOURLS creates hundreds of links a second; the server orders a tie differently per offset.
    const tie = '2024-06-01 12:00:00';
    const links = [
      ...Array.from({ length: 80 }, (_, n) => aLink(n)),
      ...Array.from({ length: YOURLS_PAGE_SIZE + 30 }, (_, n) => aLink(10_000 + n, { timestamp: tie })),
      ...Array.from({ length: 90 }, (_, n) => aLink(100_000 + n)),
    ];
    const server = await aServer({ links });
    const read = await readPages(createYourlsSource(optionsFor(server), sourceDeps()));
    expect(read.errors).to.deep.equal([]);
    expect(idsOf(read.links)).to.have.length(links.length);
    expect(new Set(idsOf(read.links))).to.deep.equal(new Set(keywords(links)));
    expect(read.cursors.length).to.be.at.least(3);
    expect(read.totals[0]).to.equal(links.length);
  });

  it('maps every field YOURLS has', async () => {
    const links = [
      aLink(1, { keyword: 'launch', url: 'https://example.com/launch?ref=1', title: 'Launch day', timestamp: '2024-05-01 08:00:00', clicks: 328 }),
      aLink(2, { keyword: 'café', url: 'https://example.com/menu', title: '', timestamp: '2024-05-01 07:00:00', clicks: 0 }),
    ];
    const server = await aServer({ links, site: 'https://Sho.rt', numbersAsStrings: true });
    const { links: read } = await readPages(createYourlsSource(optionsFor(server), sourceDeps()));
    const empty = { tags: [], expiresAt: null, expiredUrl: null, password: null, utm: null, targeting: [], ios: null, android: null };
    expect(read).to.deep.equal([
      { sourceId: 'launch', url: 'https://example.com/launch?ref=1', domain: 'sho.rt', slug: 'launch', title: 'Launch day', createdAt: new Date('2024-05-01T08:00:00Z'), clicksTotal: 328, ...empty },
      { sourceId: 'café', url: 'https://example.com/menu', domain: 'sho.rt', slug: 'café', title: null, createdAt: new Date('2024-05-01T07:00:00Z'), clicksTotal: 0, ...empty },
    ]);
  });

  it('sends the credentials in the POST body, never in the URL, and signs in with a username and password too', async () => {
    const server = await aServer({ links: [aLink(1)] });
    await readPages(createYourlsSource(optionsFor(server), sourceDeps()));
    const byPassword = await readPages(createYourlsSource(optionsFor(server, { token: null, params: { username: USER.username, password: USER.password } }), sourceDeps()));
    expect(idsOf(byPassword.links)).to.deep.equal(['y1']);
    const [bySignature, byLogin] = server.requests;
    expect(bySignature!.method).to.equal('POST');
    expect([...bySignature!.query.keys(), ...byLogin!.query.keys()]).to.deep.equal([]);
    expect(new URLSearchParams(bySignature!.body).get('signature')).to.equal(USER.signature);
    expect(new URLSearchParams(byLogin!.body).get('password')).to.equal(USER.password);
    expect(new URLSearchParams(byLogin!.body).get('filter')).to.equal('last');
  });

  it('resumes from a cursor after a restart with exactly the links not yet read', async () => {
    const links = Array.from({ length: YOURLS_PAGE_SIZE * 3 + 17 }, (_, n) => aLink(n, { timestamp: `2024-02-0${1 + (n % 5)} 00:00:00` }));
    const server = await aServer({ links });
    const whole = await readPages(createYourlsSource(optionsFor(server), sourceDeps()));
    const before = await readPages(createYourlsSource(optionsFor(server), sourceDeps()), null, 2);
    const after = await readPages(createYourlsSource(optionsFor(server), sourceDeps()), before.cursors.at(-1));
    expect([...idsOf(before.links), ...idsOf(after.links)]).to.deep.equal(idsOf(whole.links));
    expect(new Set(idsOf(whole.links))).to.deep.equal(new Set(keywords(links)));
    expect(idsOf(whole.links)).to.have.length(links.length);
  });

  it('neither repeats nor misses a link when links are created and deleted while the import runs', async () => {
    const links = Array.from({ length: YOURLS_PAGE_SIZE * 3 }, (_, n) => aLink(n));
    const server = await aServer({ links });
    const source = createYourlsSource(optionsFor(server), sourceDeps());
    const first = await readPages(source, null, 1);
    // Newer links sort first and shift every offset down; deleting ones already read shifts them up, more than the
    // one row of overlap.
    links.push(aLink(900_000, { keyword: 'new1' }), aLink(900_001, { keyword: 'new2' }));
    const readAlready = new Set(idsOf(first.links).slice(0, 5));
    links.splice(0, links.length, ...links.filter((link) => !readAlready.has(link.keyword)));
    const rest = await readPages(source, first.cursors[0]);
    const ids = [...idsOf(first.links), ...idsOf(rest.links)];
    expect(new Set(ids).size).to.equal(ids.length);
    expect(ids).to.have.length(YOURLS_PAGE_SIZE * 3);
  });

  it('waits as long as a 429 asks and reads on', async () => {
    const server = await aServer({ links: Array.from({ length: YOURLS_PAGE_SIZE + 1 }, (_, n) => aLink(n)) });
    const deps = sourceDeps();
    server.throttleNext(1, 30);
    const read = await readPages(createYourlsSource(optionsFor(server), deps));
    expect(deps.waits).to.deep.equal([30_000]);
    expect(read.links).to.have.length(YOURLS_PAGE_SIZE + 1);
  });

  it('fails as auth on a wrong signature, a wrong password, or no credentials on a private install', async () => {
    const server = await aServer({ links: [aLink(1)] });
    for (const overrides of [{ token: 'f00f00f00f' }, { token: null, params: { username: USER.username, password: 'wrong' } }, { token: null }]) {
      const failure = await failureOf(createYourlsSource(optionsFor(server, overrides), sourceDeps()).page(null, signal));
      expect(failure.kind, JSON.stringify(overrides)).to.equal('auth');
    }
  });

  it('reads a public install without credentials', async () => {
    const server = await aServer({ private: false, links: [aLink(1)] });
    const { links } = await readPages(createYourlsSource(optionsFor(server, { token: null }), sourceDeps()));
    expect(idsOf(links)).to.deep.equal(['y1']);
  });

  it('fails as input on a half login, a missing base URL, a base URL without YOURLS or a damaged cursor', async () => {
    const server = await aServer({ links: [aLink(1)] });
    expect(() => createYourlsSource(optionsFor(server, { token: null, params: { username: 'admin' } }), sourceDeps())).to.throw(SourceError).with.property('kind', 'input');
    expect(() => createYourlsSource(optionsFor(server, { baseUrl: null }), sourceDeps())).to.throw(SourceError).with.property('kind', 'input');
    expect((await failureOf(createYourlsSource(optionsFor(server, { baseUrl: `${server.url}/other` }), sourceDeps()).page(null, signal))).kind).to.equal('input');
    expect((await failureOf(createYourlsSource(optionsFor(server), sourceDeps()).page('{"at":"x"}', signal))).kind).to.equal('input');
  });

  it('accepts the yourls-api.php URL pasted as the base URL', async () => {
    const server = await aServer({ links: [aLink(1)] });
    const { links } = await readPages(createYourlsSource(optionsFor(server, { baseUrl: `${server.url}/yourls-api.php` }), sourceDeps()));
    expect(idsOf(links)).to.deep.equal(['y1']);
  });

  it('gives a link it cannot import as a row error and reads the others', async () => {
    const server = await aServer({ links: [aLink(1), aLink(2, { keyword: 'js', url: 'javascript:alert(1)' }), aLink(3)] });
    const { links, errors } = await readPages(createYourlsSource(optionsFor(server), sourceDeps()));
    expect(idsOf(links)).to.deep.equal(['y3', 'y1']);
    expect(errors).to.deep.equal([{ ref: 'js', message: 'its long URL "javascript:alert(1)" is not an absolute http(s) URL' }]);
  });
});
