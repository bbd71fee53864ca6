// The Rebrandly source against a Rebrandly REST API test server (test/helpers/import-servers/rebrandly.ts, which names
// the reference pages it follows on developers.rebrandly.com and says where they are silent).
// This file reads the source alone. The import of this source through the API and through `linkplane import`, with
// tags, a custom domain, an expiry and a taken slug (or what the source lacks of these, said and checked absent), is
// in imports-run.test.ts and imports-cli.test.ts, from the cases of test/helpers/import-cases.ts.
import { expect } from 'chai';
import { createRebrandlySource } from '../../src/imports/sources/rebrandly.ts';
import { encodeCursor } from '../../src/imports/sources/cursor.ts';
import type { SourceOptions } from '../../src/imports/source.ts';
import { startRebrandlyServer, type RebrandlyLinkFixture, type RebrandlyServer } from '../helpers/import-servers/rebrandly.ts';
import { sourceDeps } from '../helpers/import-http.ts';
import { bareLink, failure, readAll, readSome } from '../helpers/import-source-reading.ts';

const KEY = 'rebrandly-api-key';
const signal = new AbortController().signal;

const many: RebrandlyLinkFixture[] = Array.from({ length: 60 }, (_, i) => ({ slashtag: `s${i}`, destination: `https://example.com/s/${i}` }));

function options(server: RebrandlyServer, params: Record<string, string> = {}): SourceOptions {
  return { token: KEY, baseUrl: server.url, params, file: null };
}

const slugs = (links: Array<{ slug: string | null }>) => links.map((l) => l.slug);

describe('import source: Rebrandly (REST API)', () => {
  let server: RebrandlyServer;

  afterEach(async () => {
    await server?.close();
  });

  it('reads every link of the main workspace, 25 at a time, newest first, with the count for progress', async () => {
    server = await startRebrandlyServer({ token: KEY, links: many });
    const reading = await readAll(createRebrandlySource(options(server), sourceDeps()));
    expect(slugs(reading.links)).to.deep.equal(many.map((f) => f.slashtag));
    expect(reading.pages.map((p) => p.links.length)).to.deep.equal([25, 25, 10]);
    expect(reading.pages.map((p) => p.total)).to.deep.equal([60, null, null]);
    const lists = server.requests.filter((r) => r.path === '/v1/links');
    expect(Object.fromEntries(lists[0]!.query)).to.deep.equal({ orderBy: 'createdAt', orderDir: 'desc', limit: '25' });
    expect(lists[1]!.query.get('last')).to.equal(reading.pages[0]!.links.at(-1)!.sourceId);
    expect(server.requests.every((r) => r.headers['workspace'] === undefined)).to.equal(true);
  });

  it('maps every field Rebrandly gives: slashtag, branded domain, title, tags, creation date, clicks', async () => {
    server = await startRebrandlyServer({
      token: KEY,
      links: [{ slashtag: 'spring', destination: 'https://shop.example.com/spring', domain: 'go.example.com', title: 'Spring sale', tags: ['promo', 'tracked'], createdAt: '2025-03-01T09:30:00.000Z', clicks: 42 }],
    });
    const page = await createRebrandlySource(options(server), sourceDeps()).page(null, signal);
    expect(page.links).to.deep.equal([
      bareLink(`${'0'.repeat(31)}1`, 'https://shop.example.com/spring', {
        domain: 'go.example.com',
        slug: 'spring',
        title: 'Spring sale',
        tags: ['promo', 'tracked'],
        createdAt: new Date('2025-03-01T09:30:00Z'),
        clicksTotal: 42,
      }),
    ]);
  });

  it('reads the workspace and the domain it is given', async () => {
    server = await startRebrandlyServer({
      token: KEY,
      links: many,
      workspace: { id: 'ws0123456789abcdef', links: [{ slashtag: 'a', domain: 'go.example.com' }, { slashtag: 'b', domain: 'rebrand.ly' }, { slashtag: 'c', domain: 'go.example.com' }] },
    });
    const reading = await readAll(createRebrandlySource(options(server, { workspace: 'ws0123456789abcdef', domain: 'Go.Example.com' }), sourceDeps()));
    expect(slugs(reading.links)).to.deep.equal(['a', 'c']);
    // Rebrandly counts by domain id only: with a domain chosen by name the total is unknown rather than wrong
    expect(reading.pages[0]!.total).to.equal(null);
    expect(server.requests.map((r) => r.path)).to.deep.equal(['/v1/links']);
    expect(server.requests[0]!.headers['workspace']).to.equal('ws0123456789abcdef');
    expect(server.requests[0]!.query.get('domain.fullName')).to.equal('go.example.com');
    await failure(createRebrandlySource(options(server, { workspace: 'unknown' }), sourceDeps()).page(null, signal), 'input');
  });

  it('resumes from a stored cursor with exactly the rest, and past links deleted in between', async () => {
    server = await startRebrandlyServer({ token: KEY, links: many });
    const first = await readSome(createRebrandlySource(options(server), sourceDeps()), null, 1);
    const rest = await readAll(createRebrandlySource(options(server), sourceDeps()), first.pages[0]!.next);
    expect(slugs([...first.links, ...rest.links])).to.deep.equal(many.map((f) => f.slashtag));
    for (const link of first.links.slice(-2)) server.remove(link.sourceId);
    const afterDeletion = await readAll(createRebrandlySource(options(server), sourceDeps()), first.pages[0]!.next);
    expect(slugs(afterDeletion.links)).to.deep.equal(slugs(rest.links));
  });

  it('waits until the reset a 429 names and reads on', async () => {
    const now = Date.parse('2025-06-01T12:00:00.250Z');
    server = await startRebrandlyServer({ token: KEY, links: many, resetSeconds: 5, now: () => now });
    const deps = sourceDeps({ now: () => now });
    const source = createRebrandlySource(options(server), deps);
    const first = await source.page(null, signal);
    server.limitNext(1);
    const rest = await readAll(source, first.next);
    expect(deps.waits).to.deep.equal([5_750]);
    expect(slugs([...first.links, ...rest.links])).to.deep.equal(many.map((f) => f.slashtag));
  });

  it('fails as auth when Rebrandly refuses the key, and as input (not auth) when it refuses a parameter with 403', async () => {
    server = await startRebrandlyServer({ token: KEY, links: many });
    await failure(createRebrandlySource({ ...options(server), token: 'wrong' }, sourceDeps()).page(null, signal), 'auth');
    await server.close();
    // Rebrandly answers an invalid parameter with 403 InvalidFormat (here: its page maximum lowered, as its pagination
    // page warns it may be): that is not a refused key
    server = await startRebrandlyServer({ token: KEY, links: many, maxLimit: 20 });
    const error = await failure(createRebrandlySource(options(server), sourceDeps()).page(null, signal), 'input');
    expect(error.message).to.contain('InvalidFormat limit');
  });

  it('fails as input when every link it would resume after is gone', async () => {
    server = await startRebrandlyServer({ token: KEY, links: many });
    const cursor = encodeCursor('rebrandly', { a: ['deleted1', 'deleted2'] });
    const error = await failure(createRebrandlySource(options(server), sourceDeps()).page(cursor, signal), 'input');
    expect(error.message).to.contain('cannot resume');
    expect(server.requests.map((r) => r.query.get('last'))).to.deep.equal(['deleted2', 'deleted1']);
  });

  it('makes a link without a usable destination or id a row error and keeps the others', async () => {
    server = await startRebrandlyServer({
      token: KEY,
      links: [{ slashtag: 'ok' }, { slashtag: 'bad', destination: 'www.example.com/no-scheme' }, { slashtag: 'noid', id: undefined }],
    });
    const page = await createRebrandlySource(options(server), sourceDeps()).page(null, signal);
    expect(slugs(page.links)).to.deep.equal(['ok']);
    expect(page.errors).to.deep.equal([
      { ref: `${'0'.repeat(31)}2`, message: 'the destination "www.example.com/no-scheme" is not an absolute http(s) URL' },
      { ref: 'rebrand.ly/noid', message: 'the link has no id' },
    ]);
  });

  it('refuses options it cannot use before any request', async () => {
    server = await startRebrandlyServer({ token: KEY, links: many });
    expect(() => createRebrandlySource({ ...options(server), token: '' }, sourceDeps())).to.throw('needs an API token');
    expect(() => createRebrandlySource(options(server, { workspace: 'a b' }), sourceDeps())).to.throw('not a Rebrandly workspace id');
    expect(() => createRebrandlySource(options(server, { domain: 'https://go.example.com' }), sourceDeps())).to.throw('not a domain name');
    expect(() => createRebrandlySource(options(server, { group: 'x' }), sourceDeps())).to.throw('has no option group');
    expect(server.requests).to.have.length(0);
  });
});
