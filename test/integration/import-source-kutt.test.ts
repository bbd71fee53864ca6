// The Kutt reader against a server that speaks Kutt's API v2 as its reference describes it (test/helpers/
// import-servers/kutt.ts names the reference files), over real HTTP.
// This file reads the source alone. The import of this source through the API and through `linkplane import`, with
// tags, a custom domain, an expiry and a taken slug (or what the source lacks of these, said and checked absent), is
// in imports-run.test.ts and imports-cli.test.ts, from the cases of test/helpers/import-cases.ts.
import { expect } from 'chai';
import { SourceError, type SourceOptions } from '../../src/imports/source.ts';
import { createKuttSource, KUTT_PAGE_SIZE } from '../../src/imports/sources/kutt.ts';
import { sourceDeps } from '../helpers/import-http.ts';
import { failureOf, idsOf, readPages } from '../helpers/import-read.ts';
import { startKuttServer, type KuttLinkFixture, type KuttServerOptions } from '../helpers/import-servers/kutt.ts';
import type { ServiceServer } from '../helpers/import-servers/base.ts';

const API_KEY = 'kutt-key-0123456789abcdef0123456789abcdef';

const aLink = (n: number, overrides: Partial<KuttLinkFixture> = {}): KuttLinkFixture => ({ address: `k${n}`, target: `https://example.com/${n}`, visitCount: n, ...overrides });
/** Fixtures are oldest first; Kutt lists newest first. */
const newestFirst = (links: KuttLinkFixture[]) => [...links].reverse().map((link) => link.id!);
const optionsFor = (server: ServiceServer, overrides: Partial<SourceOptions> = {}): SourceOptions => ({ token: API_KEY, baseUrl: server.url, params: {}, file: null, ...overrides });
const signal = new AbortController().signal;

describe('import source: Kutt API v2', () => {
  const servers: ServiceServer[] = [];
  async function aServer(options: Partial<KuttServerOptions> & Pick<KuttServerOptions, 'links'>) {
    const server = await startKuttServer({ apiKey: API_KEY, ...options });
    servers.push(server);
    return server;
  }
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('reads every link exactly once over several pages, newest first, with the key in X-API-KEY', async () => {
    const links = Array.from({ length: KUTT_PAGE_SIZE * 2 + 7 }, (_, n) => aLink(n));
    const server = await aServer({ links });
    const read = await readPages(createKuttSource(optionsFor(server), sourceDeps()));
    expect(read.errors).to.deep.equal([]);
    expect(idsOf(read.links)).to.deep.equal(newestFirst(links));
    expect(read.cursors).to.have.length(3);
    expect(read.totals).to.deep.equal([links.length, links.length, links.length]);
    expect(server.requests.every((request) => request.headers['x-api-key'] === API_KEY && Number(request.query.get('limit')) <= 50)).to.equal(true);
  });

  it('maps every field Kutt has, and says what a link loses', async () => {
    const links = [
      aLink(1, { address: 'launch', target: 'https://example.com/launch', description: 'Launch day', domain: 'Go.Example.com', expireIn: '2025-01-31T12:00:00Z', createdAt: '2024-05-01T08:00:00Z', visitCount: 42, password: 'hunter2' }),
      aLink(2, { address: 'plain', target: 'https://example.com/plain', createdAt: '2024-05-02T08:00:00Z', visitCount: 0 }),
    ];
    const server = await aServer({ links });
    const read = await readPages(createKuttSource(optionsFor(server), sourceDeps()));
    const empty = { tags: [], expiredUrl: null, password: null, utm: null, targeting: [], ios: null, android: null };
    expect(read.links).to.deep.equal([
      { sourceId: links[1]!.id, url: 'https://example.com/plain', domain: 'kutt.test', slug: 'plain', title: null, createdAt: new Date('2024-05-02T08:00:00Z'), expiresAt: null, clicksTotal: 0, ...empty },
      {
        sourceId: links[0]!.id,
        url: 'https://example.com/launch',
        domain: 'go.example.com',
        slug: 'launch',
        title: 'Launch day',
        createdAt: new Date('2024-05-01T08:00:00Z'),
        expiresAt: new Date('2025-01-31T12:00:00Z'),
        clicksTotal: 42,
        ...empty,
        warnings: ['it is password-protected on Kutt, which never gives the password out: set one here if it must stay protected'],
      },
    ]);
  });

  it("reads the expiry of a Kutt on SQLite, which gives it as 'YYYY-MM-DD hh:mm:ss' in UTC", async () => {
    const server = await aServer({ database: 'sqlite', links: [aLink(1, { expireIn: '2025-01-31T12:34:56Z' })] });
    const { links } = await readPages(createKuttSource(optionsFor(server), sourceDeps()));
    const raw = JSON.parse((await fetch(`${server.url}/api/v2/links`, { headers: { 'x-api-key': API_KEY } }).then((r) => r.text()))) as { data: Array<{ expire_in: string }> };
    expect(raw.data[0]!.expire_in).to.equal('2025-01-31 12:34:56');
    expect(links[0]!.expiresAt).to.deep.equal(new Date('2025-01-31T12:34:56Z'));
  });

  it('resumes from a cursor after a restart with exactly the links not yet read', async () => {
    const links = Array.from({ length: KUTT_PAGE_SIZE * 3 + 1 }, (_, n) => aLink(n));
    const server = await aServer({ links });
    const before = await readPages(createKuttSource(optionsFor(server), sourceDeps()), null, 2);
    const after = await readPages(createKuttSource(optionsFor(server), sourceDeps()), before.cursors.at(-1));
    expect([...idsOf(before.links), ...idsOf(after.links)]).to.deep.equal(newestFirst(links));
  });

  it('neither repeats nor misses a link when links are created and deleted while the import runs', async () => {
    const links = Array.from({ length: KUTT_PAGE_SIZE * 3 }, (_, n) => aLink(n));
    const server = await aServer({ links });
    const source = createKuttSource(optionsFor(server), sourceDeps());
    const first = await readPages(source, null, 1);
    const order = newestFirst(links);
    // Three created (at the top), two deleted among the links already read: every offset moves.
    links.push(aLink(1001), aLink(1002), aLink(1003));
    const deleted = [order[3], order[10]];
    links.splice(0, links.length, ...links.filter((link) => !deleted.includes(link.id)));
    const rest = await readPages(source, first.cursors[0]);
    expect([...idsOf(first.links), ...idsOf(rest.links)]).to.deep.equal(order);
  });

  it('waits as long as a 429 asks and reads on', async () => {
    const server = await aServer({ links: Array.from({ length: KUTT_PAGE_SIZE + 3 }, (_, n) => aLink(n)) });
    const deps = sourceDeps();
    const source = createKuttSource(optionsFor(server), deps);
    server.throttleNext(1, 3);
    const read = await readPages(source);
    expect(deps.waits).to.deep.equal([3000]);
    expect(read.links).to.have.length(KUTT_PAGE_SIZE + 3);
    expect(server.requests[0]!.path).to.equal('/api/v2/links');
  });

  it('fails as auth on a refused API key, and as input without a key, a base URL, or on a base URL that is not Kutt', async () => {
    const server = await aServer({ links: [aLink(1)] });
    expect((await failureOf(createKuttSource(optionsFor(server, { token: 'nope' }), sourceDeps()).page(null, signal))).kind).to.equal('auth');
    expect(() => createKuttSource(optionsFor(server, { token: null }), sourceDeps())).to.throw(SourceError).with.property('kind', 'input');
    expect(() => createKuttSource(optionsFor(server, { baseUrl: null }), sourceDeps())).to.throw(SourceError).with.property('kind', 'input');
    expect((await failureOf(createKuttSource(optionsFor(server, { baseUrl: `${server.url}/kutt` }), sourceDeps()).page(null, signal))).kind).to.equal('input');
    expect((await failureOf(createKuttSource(optionsFor(server), sourceDeps()).page('{"skip":-1}', signal))).kind).to.equal('input');
  });

  it('accepts the API URL pasted as the base URL', async () => {
    const links = [aLink(1)];
    const server = await aServer({ links });
    const { links: read } = await readPages(createKuttSource(optionsFor(server, { baseUrl: `${server.url}/api/v2` }), sourceDeps()));
    expect(idsOf(read)).to.deep.equal([links[0]!.id]);
  });

  it('gives a banned link or one with a target it cannot import as a row error, and reads the others', async () => {
    const links = [aLink(1), aLink(2, { banned: true, target: 'https://malware.example/x' }), aLink(3, { target: 'mailto:sales@example.com' })];
    const server = await aServer({ links });
    const read = await readPages(createKuttSource(optionsFor(server), sourceDeps()));
    expect(idsOf(read.links)).to.deep.equal([links[0]!.id]);
    expect(read.errors).to.deep.equal([
      { ref: links[2]!.id, message: 'its target "mailto:sales@example.com" is not an absolute http(s) URL' },
      { ref: links[1]!.id, message: 'it is banned on Kutt (https://malware.example/x); it was not imported' },
    ]);
  });

  it('fails as remote when Kutt keeps answering 502', async () => {
    const server = await aServer({ links: [aLink(1)] });
    server.failNext(6, 502);
    expect((await failureOf(createKuttSource(optionsFor(server), sourceDeps()).page(null, signal))).kind).to.equal('remote');
  });
});
