import { expect } from 'chai';
import { PNG } from 'pngjs';
import jsQRModule from 'jsqr';
import { connect } from '@nats-io/transport-node';

// jsqr is CommonJS: under NodeNext its function is the default export's `default`.
const jsQR = jsQRModule.default;
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv, NATS_URL } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply } from '../helpers/http.ts';


describe('Links API over HTTP', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let env: Record<string, string>;
  let key: string;
  let otherKey: string;

  before(async () => {
    mongo = await startTestMongo();
    env = testEnv(mongo, { SHORT_LINK_BASE_URL: 'https://lnk.test', DEFAULT_SHORT_DOMAIN: 'lnk.test' });
    running = await startApi(env);
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id)).key;
    otherKey = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown, as: string = key, headers: Record<string, string> = {}): Promise<Reply> =>
    callApi(running.url, method, path, { key: as, body, headers });

  const create = (body: Json, as = key) => call('POST', '/links', body, as);

  describe('create, read, update, delete', () => {
    it('creates a link with a generated short slug and answers the whole resource', async () => {
      const res = await create({ url: 'https://example.com/page', title: 'Example' });
      expect(res.status).to.equal(201);
      const link = res.body;
      expect(link.slug).to.match(/^[0-9A-Za-z]{7}$/);
      expect(link).to.deep.include({ url: 'https://example.com/page', title: 'Example', domain: 'lnk.test', domain_id: 'dom_default', redirect_type: 302, has_password: false, archived: false, note: null, folder_id: null, ab_test: null, mobile: null, rotator: null, workspace_rules_off: false });
      expect(link.short_url).to.equal(`https://lnk.test/${String(link.slug)}`);
      expect(link.tags).to.deep.equal([]);
      expect(res.headers.get('location')).to.equal(`/v1/links/${String(link.id)}`);
      expect((await call('GET', `/links/${String(link.id)}`)).body).to.deep.equal(link);
    });

    it('answers 409 conflict for a slug already taken on the domain', async () => {
      expect((await create({ url: 'https://a.example', slug: 'taken-1' })).status).to.equal(201);
      const again = await create({ url: 'https://b.example', slug: 'taken-1' });
      expect(again.status).to.equal(409);
      expect(again.body.error!.code).to.equal('conflict');
      expect(again.body.error!.message).to.contain('taken-1');
    });

    it('merges UTM parameters into the destination on create', async () => {
      const res = await create({ url: 'https://example.com/p?a=1&utm_source=old', utm: { utm_source: 'news', utm_medium: 'email', utm_campaign: 'fall' } });
      const url = new URL(String(res.body.url));
      expect(Object.fromEntries(url.searchParams)).to.deep.equal({ a: '1', utm_source: 'news', utm_medium: 'email', utm_campaign: 'fall' });
    });

    it('writes UTM parameters into every destination on update: url replaced, variants, rotator and rule redirects where unset', async () => {
      const created = await create({
        url: 'https://example.com/p?utm_source=old',
        ab_test: { enabled: true, variants: [{ url: 'https://example.com/a?utm_content=a', weight: 1 }, { url: 'https://example.com/b', weight: 1 }] },
        rotator: { enabled: true, mode: 'round_robin', destinations: [{ id: 'one', url: 'https://example.com/r1' }] },
        rules: [{ match: { country: ['FR'] }, action: { type: 'redirect', url: 'https://example.com/fr' } }, { match: { country: ['DE'] }, action: { type: 'block' } }],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const res = await call('PATCH', `/links/${String(created.body.id)}`, { utm: { utm_source: 'news', utm_content: 'c' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const link = res.body as { url: string; ab_test: { variants: { url: string }[] }; rotator: { destinations: { url: string }[] }; rules: { action: { type: string; url?: string } }[] };
      const params = (url: string) => Object.fromEntries(new URL(url).searchParams);
      expect(params(link.url)).to.deep.equal({ utm_source: 'news', utm_content: 'c' });
      expect(link.ab_test.variants.map((v) => params(v.url))).to.deep.equal([{ utm_content: 'a', utm_source: 'news' }, { utm_source: 'news', utm_content: 'c' }]);
      expect(params(link.rotator.destinations[0]!.url)).to.deep.equal({ utm_source: 'news', utm_content: 'c' });
      expect(params(link.rules[0]!.action.url!)).to.deep.equal({ utm_source: 'news', utm_content: 'c' });
      expect(link.rules[1]!.action).to.deep.include({ type: 'block' });
      expect((await call('GET', `/links/${String(created.body.id)}`)).body).to.deep.equal(res.body);
    });

    it('stores a password only as a slow hash and never returns it', async () => {
      const res = await create({ url: 'https://example.com/secret', password: 'hunter22' });
      expect(res.body.has_password).to.equal(true);
      expect(JSON.stringify(res.body)).not.to.contain('hunter22');
      const stored = await tenants.client.db(mongo.dbName).collection('links').findOne({ _id: res.body.id as never });
      expect(String(stored!.password_hash)).to.match(/^scrypt\$32768\$8\$1\$/);
      const cleared = await call('PATCH', `/links/${String(res.body.id)}`, { password: null });
      expect(cleared.body.has_password).to.equal(false);
    });

    it('refuses destinations that are not http(s), and loops onto our own short domain', async () => {
      for (const url of ['javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd']) {
        const res = await create({ url });
        expect(res.status, url).to.equal(422);
        expect(res.body.error!.details!.map((d) => d.path)).to.include('url');
      }
      const loop = await create({ url: 'https://lnk.test/abc' });
      expect(loop.status).to.equal(422);
      expect(loop.body.error!.details).to.deep.include({ path: 'url', message: 'points at a short-link domain (a redirect loop)' });
      const nested = await create({ url: 'https://ok.example', rules: [{ match: { country: ['FR'] }, action: { type: 'redirect', url: 'https://lnk.test/x' } }] });
      expect(nested.body.error!.details![0]!.path).to.equal('rules[0].action.url');
    });

    it('updates a link, validating the merged result, and archives and restores it', async () => {
      const { body: link } = await create({ url: 'https://example.com/v1', rules: [{ match: { device: ['mobile'] }, action: { type: 'block' } }] });
      const rule = (link.rules as Json[])[0]!;
      expect(rule).to.deep.include({ enabled: true, invert: false, action: { type: 'block', status: 404 } });
      expect(rule.id).to.be.a('string');

      const updated = await call('PATCH', `/links/${String(link.id)}`, { url: 'https://example.com/v2', title: 'New' });
      expect(updated.status).to.equal(200);
      expect(updated.body).to.deep.include({ url: 'https://example.com/v2', title: 'New', slug: link.slug });
      expect(updated.body.rules).to.deep.equal(link.rules);

      const bad = await call('PATCH', `/links/${String(link.id)}`, { ab_test: { enabled: true, variants: [] } });
      expect(bad.status).to.equal(422);
      expect(bad.body.error!.details!.some((d) => d.path.startsWith('ab_test'))).to.equal(true);
      const empty = await call('PATCH', `/links/${String(link.id)}`, {});
      expect(empty.status).to.equal(422);

      expect((await call('PATCH', `/links/${String(link.id)}`, { archived: true })).body.archived).to.equal(true);
      expect((await call('PATCH', `/links/${String(link.id)}`, { archived: false })).body.archived).to.equal(false);
    });

    it('moves a link to another slug, refusing one that is taken', async () => {
      const { body: a } = await create({ url: 'https://a.example', slug: 'move-a' });
      await create({ url: 'https://b.example', slug: 'move-b' });
      expect((await call('PATCH', `/links/${String(a.id)}`, { slug: 'move-b' })).status).to.equal(409);
      expect((await call('PATCH', `/links/${String(a.id)}`, { slug: 'move-c' })).body.short_url).to.equal('https://lnk.test/move-c');
    });

    it('deletes a link', async () => {
      const { body: link } = await create({ url: 'https://example.com/gone' });
      expect((await call('DELETE', `/links/${String(link.id)}`)).status).to.equal(204);
      expect((await call('GET', `/links/${String(link.id)}`)).status).to.equal(404);
      expect((await call('DELETE', `/links/${String(link.id)}`)).status).to.equal(404);
    });
  });

  describe('tenant isolation', () => {
    it('answers 404 not_found on every {id} route for a link of another workspace', async () => {
      const { body: link } = await create({ url: 'https://example.com/mine' });
      const id = String(link.id);
      for (const [method, path, body] of [
        ['GET', `/links/${id}`, undefined],
        ['PATCH', `/links/${id}`, { title: 'stolen' }],
        ['DELETE', `/links/${id}`, undefined],
        ['GET', `/links/${id}/qr`, undefined],
      ] as const) {
        const res = await call(method, path, body, otherKey);
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.body.error!.code).to.equal('not_found');
      }
      expect((await call('GET', `/links/${id}`)).body.title).to.equal(null);
      const theirs = await call('GET', '/links?limit=100', undefined, otherKey);
      expect((theirs.body.data as Json[]).map((l) => l.id)).not.to.include(id);
    });

    it('answers 404 for tags and folders of another workspace', async () => {
      const tag = await call('POST', '/tags', { name: 'private' });
      expect((await call('PATCH', `/tags/${String(tag.body.id)}`, { name: 'x' }, otherKey)).status).to.equal(404);
      expect((await call('DELETE', `/tags/${String(tag.body.id)}`, undefined, otherKey)).status).to.equal(404);
      const linked = await create({ url: 'https://example.com', tag_ids: [String(tag.body.id)] }, otherKey);
      expect(linked.status).to.equal(422);
      expect(linked.body.error!.details![0]!.path).to.equal('tag_ids[0]');
    });
  });

  describe('GET /links (spec 4.1)', () => {
    let pagingKey: string;
    before(async () => {
      const ws = await tenants.aWorkspace({ plan_id: 'business' });
      pagingKey = (await tenants.aWorkspaceKey(ws._id)).key;
      for (let batch = 0; batch < 3; batch++) {
        const items = Array.from({ length: batch < 2 ? 100 : 50 }, (_, i) => ({ url: `https://example.com/${batch}/${i}`, title: `item ${batch}-${i}` }));
        const res = await call('POST', '/links/bulk', items, pagingKey);
        expect(res.body.created).to.equal(items.length);
      }
    });

    it('pages through 250 links newest first with no duplicate and no gap while links are being created', async () => {
      const all = (await tenants.client.db(mongo.dbName).collection('links').find({ title: /^item / }).toArray()).length;
      expect(all).to.be.at.least(250);
      const first = await call('GET', '/links?limit=37', undefined, pagingKey);
      const seen: Json[] = [...(first.body.data as Json[])];
      let cursor = (first.body.pagination as { next_cursor: string | null }).next_cursor;
      let inserting = true;
      const writer = (async () => {
        for (let i = 0; inserting && i < 60; i++) await call('POST', '/links', { url: `https://example.com/new/${i}` }, pagingKey);
      })();
      while (cursor) {
        const page = await call('GET', `/links?limit=37&cursor=${encodeURIComponent(cursor)}`, undefined, pagingKey);
        expect(page.status).to.equal(200);
        seen.push(...(page.body.data as Json[]));
        cursor = (page.body.pagination as { next_cursor: string | null; has_more: boolean }).next_cursor;
      }
      inserting = false;
      await writer;
      const ids = seen.map((l) => l.id);
      expect(new Set(ids).size, 'no duplicates').to.equal(ids.length);
      expect(ids).to.have.length(250);
      const created = seen.map((l) => Date.parse(String(l.created_at)));
      expect(created).to.deep.equal([...created].sort((a, b) => b - a));
      expect(seen.every((l) => String(l.title).startsWith('item '))).to.equal(true);
    });

    it('passes the cursor back unchanged and reports has_more', async () => {
      const page = await call('GET', '/links?limit=100', undefined, pagingKey);
      const pagination = page.body.pagination as { next_cursor: string; has_more: boolean };
      expect(pagination.has_more).to.equal(true);
      expect(pagination.next_cursor.length).to.be.within(1, 500);
    });

    it('answers every error case of 4.1', async () => {
      const cases: Array<[string, number, string]> = [
        ['cursor=', 422, 'cursor'],
        [`cursor=${'a'.repeat(501)}`, 422, 'cursor'],
        ['cursor=not-a-real-cursor', 400, ''],
        [`cursor=${Buffer.from('{"v":1,"t":"x"}').toString('base64url')}`, 400, ''],
        ['limit=0', 422, 'limit'],
        ['limit=101', 422, 'limit'],
        ['limit=ten', 422, 'limit'],
        [`search=${'s'.repeat(201)}`, 422, 'search'],
        ['domain_id=ab', 422, 'domain_id'],
        [`tag=${'t'.repeat(65)}`, 422, 'tag'],
        ['folder_id=x', 422, 'folder_id'],
        ['archived=maybe', 422, 'archived'],
        ['colour=red', 422, 'colour'],
      ];
      for (const [query, status, path] of cases) {
        const res = await call('GET', `/links?${query}`);
        expect(res.status, query).to.equal(status);
        expect(res.body.error!.code).to.equal(status === 400 ? 'invalid_request' : 'validation_failed');
        if (path) expect(res.body.error!.details!.map((d) => d.path), query).to.include(path);
      }
    });

    it('filters by search, tag, folder, domain and archived, and never answers 404', async () => {
      const tag = await call('POST', '/tags', { name: 'campaign', color: '#ff0000' });
      const folder = await call('POST', '/folders', { name: 'Autumn' });
      const { body: tagged } = await create({ url: 'https://shop.example/sale', title: 'Findable Sale', tag_ids: [String(tag.body.id)], folder_id: String(folder.body.id) });
      await call('PATCH', `/links/${String(tagged.id)}`, { note: 'a needle in here' });
      const ids = async (query: string) => ((await call('GET', `/links?${query}`)).body.data as Json[]).map((l) => l.id);
      expect(await ids(`tag=${String(tag.body.id)}`)).to.deep.equal([tagged.id]);
      expect(await ids(`folder_id=${String(folder.body.id)}`)).to.deep.equal([tagged.id]);
      expect(await ids('search=findable sale')).to.deep.equal([tagged.id]);
      expect(await ids('search=NEEDLE')).to.deep.equal([tagged.id]);
      expect(await ids('search=.*')).to.deep.equal([]);
      expect(await ids('tag=tag_nothing_here')).to.deep.equal([]);
      expect(await ids('domain_id=dom_nothing')).to.deep.equal([]);
      expect(await ids('domain_id=dom_default&limit=1')).to.have.length(1);
      await call('PATCH', `/links/${String(tagged.id)}`, { archived: true });
      expect(await ids(`archived=true&tag=${String(tag.body.id)}`)).to.deep.equal([tagged.id]);
      expect(await ids(`archived=false&tag=${String(tag.body.id)}`)).to.deep.equal([]);
      const view = await call('GET', `/links/${String(tagged.id)}`);
      expect(view.body.tags).to.deep.equal([{ id: tag.body.id, name: 'campaign', color: '#ff0000' }]);
    });
  });

  describe('a listed link', () => {
    it('reads as it does on its own, and shows every change at once: its own, a renamed tag, a write made by another process', async () => {
      const ws = await tenants.aWorkspace({ plan_id: 'business' });
      const { key: own } = await tenants.aWorkspaceKey(ws._id);
      const tag = await call('POST', '/tags', { name: 'first', color: '#00ff00' }, own);
      const { body: created } = await create(
        { url: 'https://example.com/listed', title: 'Says "tags":[] \u00e9\u00e8 \ud83d\ude00', note: 'a\nb', tag_ids: [String(tag.body.id)], rules: [{ match: { country: ['FR'] }, action: { type: 'redirect', url: 'https://example.com/fr' } }] },
        own,
      );
      const listed = async () => {
        const res = await call('GET', '/links', undefined, own);
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
        return (res.body.data as Json[])[0]!;
      };
      const single = async () => (await call('GET', `/links/${String(created.id)}`, undefined, own)).body;
      expect(await listed()).to.deep.equal(created);
      expect(await listed(), 'read twice').to.deep.equal(created);

      await call('PATCH', `/links/${String(created.id)}`, { title: 'retitled' }, own);
      expect((await listed()).title).to.equal('retitled');
      await call('PATCH', `/tags/${String(tag.body.id)}`, { name: 'second' }, own);
      expect((await listed()).tags).to.deep.equal([{ id: tag.body.id, name: 'second', color: '#00ff00' }]);
      // Another replica's write that leaves updated_at as it was (the moderation of an abuse report does).
      await tenants.client.db(mongo.dbName).collection('links').updateOne({ _id: created.id as never }, { $set: { moderation: { state: 'warned', reason: 'phishing', report_id: 'rep_x', at: new Date('2026-01-02T03:04:05Z') } } });
      const moderated = await listed();
      expect(moderated.moderation).to.deep.equal({ state: 'warned', reason: 'phishing', report_id: 'rep_x', at: '2026-01-02T03:04:05.000Z' });
      expect(moderated).to.deep.equal(await single());
    });
  });

  describe('tags and folders', () => {
    it('creates, lists, renames and deletes them; deleting detaches links', async () => {
      const tag = await call('POST', '/tags', { name: 'temp' });
      expect(tag.status).to.equal(201);
      expect((await call('POST', '/tags', { name: 'temp' })).status).to.equal(409);
      const folder = await call('POST', '/folders', { name: 'Box' });
      const { body: link } = await create({ url: 'https://example.com/t', tag_ids: [String(tag.body.id)], folder_id: String(folder.body.id) });
      expect((await call('PATCH', `/tags/${String(tag.body.id)}`, { name: 'renamed' })).body.name).to.equal('renamed');
      expect((await call('GET', `/links/${String(link.id)}`)).body.tags).to.deep.equal([{ id: tag.body.id, name: 'renamed', color: null }]);
      expect(((await call('GET', '/tags')).body.data as Json[]).map((t) => t.name)).to.include('renamed');
      expect((await call('DELETE', `/tags/${String(tag.body.id)}`)).status).to.equal(204);
      expect((await call('DELETE', `/folders/${String(folder.body.id)}`)).status).to.equal(204);
      const after = await call('GET', `/links/${String(link.id)}`);
      expect(after.body.tags).to.deep.equal([]);
      expect(after.body.folder_id).to.equal(null);
    });
  });

  describe('bulk', () => {
    it('creates each item or fails it on its own, with its index and error', async () => {
      await create({ url: 'https://example.com', slug: 'bulk-taken' });
      const res = await call('POST', '/links/bulk', [
        { url: 'https://example.com/1' },
        { url: 'https://example.com/2', slug: 'bulk-taken' },
        { url: 'https://lnk.test/loop' },
        { url: 'https://example.com/4', slug: 'bulk-fresh' },
      ]);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ created: 2, failed: 2 });
      const data = res.body.data as Array<{ index: number; status: string; error?: { code: string } }>;
      expect(data.map((d) => [d.index, d.status, d.error?.code])).to.deep.equal([
        [0, 'created', undefined],
        [1, 'failed', 'conflict'],
        [2, 'failed', 'validation_failed'],
        [3, 'created', undefined],
      ]);
    });

    it('validates the whole body first: 101 items or a malformed item is 422 naming it', async () => {
      const tooMany = await call('POST', '/links/bulk', Array.from({ length: 101 }, () => ({ url: 'https://example.com' })));
      expect(tooMany.status).to.equal(422);
      const malformed = await call('POST', '/links/bulk', [{ url: 'https://example.com' }, { url: 'https://example.com', redirect_type: 303 }]);
      expect(malformed.status).to.equal(422);
      expect(malformed.body.error!.details![0]!.path).to.equal('[1].redirect_type');
    });
  });

  describe('quotas and plan capabilities', () => {
    it('answers 422 quota_exceeded at the link quota, counting each bulk item', async () => {
      const ws = await tenants.aWorkspace({ plan_id: 'business', limits: { links: 3 } });
      const small = (await tenants.aWorkspaceKey(ws._id)).key;
      expect((await create({ url: 'https://example.com/1' }, small)).status).to.equal(201);
      const bulk = await call('POST', '/links/bulk', [{ url: 'https://example.com/2' }, { url: 'https://example.com/3' }, { url: 'https://example.com/4' }], small);
      expect((bulk.body.data as Array<{ status: string; error?: { code: string } }>).map((d) => d.error?.code ?? d.status)).to.deep.equal(['created', 'created', 'quota_exceeded']);
      const over = await create({ url: 'https://example.com/5' }, small);
      expect(over.status).to.equal(422);
      expect(over.body.error!.code).to.equal('quota_exceeded');
      const list = await call('GET', '/links', undefined, small);
      await call('DELETE', `/links/${String((list.body.data as Json[])[0]!.id)}`, undefined, small);
      expect((await create({ url: 'https://example.com/6' }, small)).status, 'a deletion frees a place').to.equal(201);
    });

    it('keeps each of many creates sent at once to its own outcome: conflicts and the quota fail alone, nothing else does', async () => {
      const ws = await tenants.aWorkspace({ plan_id: 'business', limits: { links: 100 } });
      const own = (await tenants.aWorkspaceKey(ws._id)).key;
      expect((await create({ url: 'https://example.com/held', slug: 'held-once' }, own)).status).to.equal(201);
      const sent: Array<[string, Json]> = [
        [own, { url: 'https://example.com/a', slug: 'held-once' }],
        [own, { url: 'https://example.com/b', slug: 'twin-slug' }],
        [own, { url: 'https://example.com/c', slug: 'twin-slug' }],
        ...Array.from({ length: 6 }, (_, i): [string, Json] => [own, { url: `https://example.com/g${i}` }]),
        ...Array.from({ length: 3 }, (_, i): [string, Json] => [otherKey, { url: `https://example.com/o${i}` }]),
      ];
      const answers = await Promise.all(sent.map(([as, body]) => create(body, as)));
      expect(answers[0]!.status).to.equal(409);
      expect(answers[0]!.body.error!.message).to.contain('held-once');
      expect(answers.slice(1, 3).map((a) => a.status).sort()).to.deep.equal([201, 409]);
      expect(answers.slice(3).map((a) => a.status)).to.deep.equal(Array(9).fill(201));
      for (const answer of answers.filter((a) => a.status === 201)) {
        expect((await call('GET', `/links/${String(answer.body.id)}`, undefined, answers.indexOf(answer) >= 9 ? otherKey : own)).status).to.equal(200);
      }
      const listed = (await call('GET', '/links?limit=100', undefined, own)).body.data as Json[];
      expect(listed).to.have.length(1 + 1 + 6);

      // At the quota: as many succeed as there are places, the rest fail alone, and no place is lost or doubled.
      const small = await tenants.aWorkspace({ plan_id: 'business', limits: { links: 3 } });
      const smallKey = (await tenants.aWorkspaceKey(small._id)).key;
      const burst = await Promise.all(Array.from({ length: 7 }, (_, i) => create({ url: `https://example.com/q${i}` }, smallKey)));
      expect(burst.filter((a) => a.status === 201)).to.have.length(3);
      expect(burst.filter((a) => a.status !== 201).map((a) => `${a.status} ${a.body.error?.code}`)).to.deep.equal(Array(4).fill('422 quota_exceeded'));
      const kept = (await call('GET', '/links', undefined, smallKey)).body.data as Json[];
      expect(kept).to.have.length(3);
      expect((await create({ url: 'https://example.com/q-over' }, smallKey)).status).to.equal(422);
      await call('DELETE', `/links/${String(kept[0]!.id)}`, undefined, smallKey);
      expect((await create({ url: 'https://example.com/q-again' }, smallKey)).status, 'a deletion frees exactly one place').to.equal(201);
      expect((await create({ url: 'https://example.com/q-over-again' }, smallKey)).status).to.equal(422);
    });

    it('answers 403 plan_restricted for a capability the plan lacks', async () => {
      const ws = await tenants.aWorkspace({ plan_id: 'free' });
      const free = (await tenants.aWorkspaceKey(ws._id)).key;
      for (const [capability, extra] of [
        ['rules', { rules: [{ match: { country: ['FR'] }, action: { type: 'pass' } }] }],
        ['ab_test', { ab_test: { enabled: true, variants: [{ url: 'https://a.example', weight: 50 }] } }],
        ['rotator', { rotator: { enabled: true, mode: 'weighted', destinations: [{ id: 'dst1', url: 'https://a.example' }] } }],
        ['targeting', { targeting: [{ match: { country: ['FR'] }, url: 'https://fr.example' }] }],
      ] as const) {
        const res = await create({ url: 'https://example.com', ...extra }, free);
        expect(res.status, capability).to.equal(403);
        expect(res.body.error!.code).to.equal('plan_restricted');
        expect(res.body.error!.message).to.contain(capability);
      }
    });
  });

  describe('events and cache invalidation', () => {
    it('writes link.created, link.updated and link.deleted through the outbox, listed newest first by GET /events', async () => {
      const ws = await tenants.aWorkspace({ plan_id: 'business' });
      const own = (await tenants.aWorkspaceKey(ws._id)).key;
      const { body: link } = await create({ url: 'https://example.com/e', slug: 'evented' }, own);
      await call('PATCH', `/links/${String(link.id)}`, { title: 'T' }, own);
      await call('DELETE', `/links/${String(link.id)}`, undefined, own);
      const events = await call('GET', '/events', undefined, own);
      const data = events.body.data as Array<{ type: string; data: Json; id: string }>;
      expect(data.map((e) => e.type)).to.deep.equal(['link.deleted', 'link.updated', 'link.created']);
      expect(data[2]!.data).to.deep.equal({ id: link.id, domain: 'lnk.test', slug: 'evented', url: 'https://example.com/e' });
      expect(data[1]!.data.changed).to.deep.equal(['title']);
      expect(data[0]!.id).to.match(/^evt_/);
      const onlyCreated = await call('GET', '/events?type=link.created', undefined, own);
      expect((onlyCreated.body.data as Json[]).map((e) => e.type)).to.deep.equal(['link.created']);
      expect((await call('GET', '/events?type=link.nope', undefined, own)).status).to.equal(422);
      const rows = await tenants.client.db(mongo.dbName).collection('events').countDocuments({ workspace_id: ws._id });
      expect(rows).to.equal(3);
    });

    it('broadcasts every change and deletion so redirect pods drop the link at once', async () => {
      const nc = await connect({ servers: NATS_URL });
      const received: Array<{ kind: string; id: string; keys: string[] }> = [];
      const sub = nc.subscribe(`${env.NATS_PREFIX}cache.invalidate`);
      void (async () => {
        for await (const m of sub) received.push(m.json());
      })();
      await nc.flush();
      const { body: link } = await create({ url: 'https://example.com/c', slug: 'cached-a' });
      await call('PATCH', `/links/${String(link.id)}`, { slug: 'cached-b' });
      await call('DELETE', `/links/${String(link.id)}`);
      await new Promise((r) => setTimeout(r, 200));
      await nc.drain();
      const forLink = received.filter((m) => m.kind === 'link' && m.id === link.id);
      expect(forLink.map((m) => m.keys)).to.deep.equal([['lnk.test/cached-a'], ['lnk.test/cached-a', 'lnk.test/cached-b'], ['lnk.test/cached-b']]);
    });
  });

  describe('QR codes', () => {
    it('answers a PNG that decodes to the short URL, with an ETag that gives 304', async () => {
      const { body: link } = await create({ url: 'https://example.com/qr' });
      const res = await fetch(`${running.url}/v1/links/${String(link.id)}/qr?size=300`, { headers: bearer(key) });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('image/png');
      const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
      expect(png.width).to.equal(300);
      const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
      expect(decoded?.data).to.equal(link.short_url);
      const etag = res.headers.get('etag')!;
      const again = await fetch(`${running.url}/v1/links/${String(link.id)}/qr?size=300`, { headers: { ...bearer(key), 'If-None-Match': etag } });
      expect(again.status).to.equal(304);
    });

    it('answers SVG and named presets, and refuses sizes out of bounds', async () => {
      const { body: link } = await create({ url: 'https://example.com/qr2' });
      const svg = await fetch(`${running.url}/v1/links/${String(link.id)}/qr?format=svg&preset=print`, { headers: bearer(key) });
      expect(svg.headers.get('content-type')).to.contain('image/svg+xml');
      expect(await svg.text()).to.match(/^<svg|<\?xml/);
      for (const query of ['size=63', 'size=2049', 'preset=huge', 'format=gif']) {
        expect((await call('GET', `/links/${String(link.id)}/qr?${query}`)).status, query).to.equal(422);
      }
    });
  });
});
