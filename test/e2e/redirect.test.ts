// The redirect service end to end: links created through the API, followed over HTTP on the redirect process,
// clicks ingested by the worker into MongoDB. Every process is the real composition root on a real socket.
import { expect } from 'chai';
import { get } from 'node:http';
import { MongoClient, type Db } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, startWorker, type RunningApi, type RunningRedirect, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply } from '../helpers/http.ts';
import { ClickIds } from '../../src/clicks/click-id.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

export interface Visit {
  status: number;
  location: string | null;
  headers: Headers;
  body: string;
  cookies: string[];
}

/** A browser's cookie store, just enough for our own cookies (name=value, no attributes honoured). */
export class Jar {
  private readonly values = new Map<string, string>();
  take(setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.values.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
  }
  header(): string {
    return [...this.values].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(name: string): string | undefined {
    return this.values.get(name);
  }
}

export async function visit(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; jar?: Jar } = {},
): Promise<Visit> {
  const headers: Record<string, string> = { 'User-Agent': DESKTOP, 'Accept-Language': 'en-US,en;q=0.8', ...options.headers };
  if (options.jar) headers.Cookie = options.jar.header();
  const res = await fetch(`${base}${path}`, { method: options.method ?? 'GET', headers, redirect: 'manual', ...(options.body === undefined ? {} : { body: options.body }) });
  const cookies = res.headers.getSetCookie();
  options.jar?.take(cookies);
  return { status: res.status, location: res.headers.get('location'), headers: res.headers, body: await res.text(), cookies };
}

describe('Redirect service end to end', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let worker: RunningWorker;
  let tenants: Tenants;
  let client: MongoClient;
  let db: Db;
  let key: string;
  let workspaceId: string;
  let base: string;
  let env: Record<string, string>;

  before(async () => {
    mongo = await startTestMongo();
    ({ env, base } = await shortLinkEnv(mongo, {
      TRUST_EDGE_HEADERS: 'true',
      COUNTER_REFRESH_MS: '100',
      PASSWORD_MAX_ATTEMPTS: '3',
      CLICK_BATCH_WAIT_MS: '20',
    }));
    api = await startApi(env);
    redirect = await startRedirect(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    workspaceId = ws._id;
    key = (await tenants.aWorkspaceKey(ws._id)).key;
    client = new MongoClient(mongo.uri);
    await client.connect();
    db = client.db(mongo.dbName);
  });

  after(async () => {
    await client.close();
    await tenants.close();
    await worker.stop();
    await redirect.stop();
    await api.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, ...(body === undefined ? {} : { body }) });
  let counter = 0;
  const aLink = async (body: Json): Promise<Json & { id: string; slug: string }> => {
    const reply = await call('POST', '/links', { slug: `t${++counter}-${Date.now().toString(36)}`, url: 'https://example.com/landing', ...body });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
    return reply.body as Json & { id: string; slug: string };
  };
  const go = (slug: string, options: Parameters<typeof visit>[2] = {}) => visit(base, `/${slug}`, options);

  /** Waits (bounded) until the worker has stored `count` clicks of a link. */
  async function clicksOf(linkId: string, count: number): Promise<Json[]> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const found = await db.collection('clicks').find({ link_id: linkId }).sort({ ts: 1 }).toArray();
      if (found.length >= count || Date.now() > deadline) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  describe('resolution', () => {
    it('redirects with the link’s redirect_type and Cache-Control: no-store', async () => {
      for (const type of [301, 302, 307, 308]) {
        const link = await aLink({ redirect_type: type, url: `https://example.com/${type}` });
        const res = await go(link.slug);
        expect(res.status).to.equal(type);
        expect(res.location).to.equal(`https://example.com/${type}`);
        expect(res.headers.get('cache-control')).to.equal('no-store');
      }
    });

    it('answers an unknown slug with the very bytes and headers of a block 404 rule', async () => {
      const blocked = await aLink({ rules: [{ match: { device: ['desktop'] }, action: { type: 'block', status: 404 } }] });
      const unknown = await go('no-such-slug');
      const block = await go(blocked.slug);
      expect(unknown.status).to.equal(404);
      expect(block.status).to.equal(404);
      expect(block.body).to.equal(unknown.body);
      for (const name of ['content-type', 'content-security-policy', 'cache-control', 'content-length']) {
        expect(block.headers.get(name), name).to.equal(unknown.headers.get(name));
      }
    });

    it('answers a block 410 rule with the gone page, not the 404 page', async () => {
      const removed = await aLink({ rules: [{ match: { device: ['desktop'] }, action: { type: 'block', status: 410 } }] });
      const res = await go(removed.slug);
      expect(res.status).to.equal(410);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.body).to.not.equal((await go('no-such-slug')).body);
    });

    it('answers a link on a host that is not one of our domains as not found', async () => {
      const link = await aLink({});
      // fetch may not set Host; node:http sends it as given.
      const status = await new Promise<number>((resolve, reject) => {
        get(`${base}/${link.slug}`, { headers: { Host: 'elsewhere.example' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject);
      });
      expect(status).to.equal(404);
      expect((await go(link.slug)).status).to.equal(302);
    });

    it('serves a link created right after its slug was looked up (the remembered miss is dropped)', async () => {
      const slug = `late-${Date.now().toString(36)}`;
      expect((await go(slug)).status).to.equal(404);
      await aLink({ slug, url: 'https://example.com/late' });
      const res = await go(slug);
      expect(res.status).to.equal(302);
      expect(res.location).to.equal('https://example.com/late');
    });

    it('follows a change and a deletion at once (broadcast invalidation)', async () => {
      const link = await aLink({ url: 'https://example.com/v1' });
      expect((await go(link.slug)).location).to.equal('https://example.com/v1');
      expect((await call('PATCH', `/links/${link.id}`, { url: 'https://example.com/v2' })).status).to.equal(200);
      expect((await go(link.slug)).location).to.equal('https://example.com/v2');
      expect((await call('DELETE', `/links/${link.id}`)).status).to.equal(204);
      expect((await go(link.slug)).status).to.equal(404);
    });

    it('answers HEAD like GET without recording a click', async () => {
      const link = await aLink({ url: 'https://example.com/head' });
      const head = await go(link.slug, { method: 'HEAD' });
      expect(head.status).to.equal(302);
      expect(head.location).to.equal('https://example.com/head');
      expect(head.body).to.equal('');
      await go(link.slug);
      const clicks = await clicksOf(link.id, 1);
      expect(clicks[0]!.outcome).to.equal('redirect');
      // Give a HEAD click every chance to arrive before counting.
      await new Promise((r) => setTimeout(r, 300));
      expect(await db.collection('clicks').countDocuments({ link_id: link.id })).to.equal(1);
    });

    it('refuses the reserved slugs of the redirect’s own endpoints', async () => {
      for (const slug of ['healthz', 'readyz', 'metrics']) {
        const reply = await call('POST', '/links', { slug, url: 'https://example.com' });
        expect(reply.status).to.equal(422);
        expect(reply.body.error!.details![0]!.path).to.equal('slug');
      }
      expect((await fetch(`${base}/healthz`)).status).to.equal(200);
    });
  });

  describe('expiry', () => {
    it('sends an expired link to expired_url, or answers 410', async () => {
      const withUrl = await aLink({ expires_at: '2020-01-01T00:00:00Z', expired_url: 'https://example.com/expired' });
      const without = await aLink({ expires_at: '2020-01-01T00:00:00Z' });
      const live = await aLink({ expires_at: '2099-01-01T00:00:00Z', url: 'https://example.com/live' });
      expect((await go(withUrl.slug)).location).to.equal('https://example.com/expired');
      expect((await go(without.slug)).status).to.equal(410);
      expect((await go(live.slug)).location).to.equal('https://example.com/live');
    });
  });

  describe('password', () => {
    it('shows a form, refuses a wrong password, and redirects after the right one through a signed cookie', async () => {
      const link = await aLink({ password: 'open sesame', url: 'https://example.com/secret' });
      const jar = new Jar();
      const form = await go(link.slug, { jar });
      expect(form.status).to.equal(200);
      expect(form.body).to.include('name="password"');
      expect(form.headers.get('content-security-policy')).to.include("default-src 'none'");

      const post = (password: string) =>
        go(link.slug, { method: 'POST', jar, headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ password }).toString() });
      expect((await post('nope')).status).to.equal(403);
      const ok = await post('open sesame');
      expect(ok.status).to.equal(200);
      expect(ok.cookies.some((c) => c.startsWith(`lp_pw_${link.id}=`) && c.includes('HttpOnly'))).to.equal(true);
      const after = await go(link.slug, { jar });
      expect(after.status).to.equal(302);
      expect(after.location).to.equal('https://example.com/secret');

      // A forged cookie is worth nothing.
      const forged = new Jar();
      forged.take([`lp_pw_${link.id}=zzzzzz.AAAAAAAAAAAAAAAAAAAAAAAAAAA`]);
      expect((await go(link.slug, { jar: forged })).status).to.equal(200);
    });

    it('locks the form after too many wrong attempts from one visitor, with Retry-After', async () => {
      const link = await aLink({ password: 'right one' });
      const post = (password: string) =>
        go(link.slug, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `password=${encodeURIComponent(password)}` });
      for (let i = 0; i < 3; i++) expect((await post('wrong')).status).to.equal(403);
      const locked = await post('right one');
      expect(locked.status).to.equal(429);
      expect(Number(locked.headers.get('retry-after'))).to.be.greaterThan(0);
    });
  });

  describe('rules, targeting, mobile, A/B, rotator', () => {
    it('shows a warning whose continue link goes on to the destination', async () => {
      const link = await aLink({ url: 'https://example.com/after-warning', rules: [{ match: { device: ['desktop'] }, action: { type: 'warn' } }] });
      const page = await go(link.slug);
      expect(page.status).to.equal(200);
      const continueUrl = /href="(\/[^"]*lp_ack=[^"]*)"/.exec(page.body)?.[1]?.replaceAll('&amp;', '&');
      expect(continueUrl, page.body).to.be.a('string');
      const next = await visit(base, continueUrl!);
      expect(next.status).to.equal(302);
      expect(next.location).to.equal('https://example.com/after-warning');
      // The mark belongs to this link only.
      const other = await aLink({ rules: [{ match: { device: ['desktop'] }, action: { type: 'warn' } }] });
      const reused = await visit(base, `/${other.slug}${continueUrl!.slice(continueUrl!.indexOf('?'))}`);
      expect(reused.status).to.equal(200);
    });

    it('applies the first matching rule, honouring invert, and redirect/page actions', async () => {
      const link = await aLink({
        url: 'https://example.com/default',
        rules: [
          { match: { country: ['DE'] }, action: { type: 'redirect', url: 'https://example.com/de' } },
          { match: { country: ['FR'] }, invert: true, action: { type: 'page', title: 'Not for you', text: 'Bonjour only' } },
        ],
      });
      expect((await go(link.slug, { headers: { 'CF-IPCountry': 'DE' } })).location).to.equal('https://example.com/de');
      const page = await go(link.slug, { headers: { 'CF-IPCountry': 'US' } });
      expect(page.status).to.equal(200);
      expect(page.body).to.include('Not for you');
      expect((await go(link.slug, { headers: { 'CF-IPCountry': 'FR' } })).location).to.equal('https://example.com/default');
    });

    it('applies workspace rules before the link’s, unless the link turns them off', async () => {
      const set = await call('PATCH', '/workspace', { rules: [{ match: { user_agent: 'curl' }, action: { type: 'redirect', url: 'https://example.com/ws-rule' } }] });
      expect(set.status, JSON.stringify(set.body)).to.equal(200);
      try {
        const on = await aLink({ rules: [{ match: { user_agent: 'curl' }, action: { type: 'redirect', url: 'https://example.com/link-rule' } }] });
        const off = await aLink({ workspace_rules_off: true, rules: [{ match: { user_agent: 'curl' }, action: { type: 'redirect', url: 'https://example.com/link-rule' } }] });
        const curl = { 'User-Agent': 'curl/8.5.0' };
        expect((await go(on.slug, { headers: curl })).location).to.equal('https://example.com/ws-rule');
        expect((await go(off.slug, { headers: curl })).location).to.equal('https://example.com/link-rule');
      } finally {
        expect((await call('PATCH', '/workspace', { rules: [] })).status).to.equal(200);
      }
    });

    it('matches a workspace IP list in ip_list_ids', async () => {
      const list = await call('POST', '/ip-lists', { name: 'office', entries: ['127.0.0.0/8', '::1'] });
      expect(list.status, JSON.stringify(list.body)).to.equal(201);
      const link = await aLink({ rules: [{ match: { ip_list_ids: [list.body.id as string] }, action: { type: 'redirect', url: 'https://example.com/office' } }] });
      expect((await go(link.slug)).location).to.equal('https://example.com/office');
      expect((await call('PATCH', `/ip-lists/${list.body.id as string}`, { entries: ['203.0.113.0/24'] })).status).to.equal(200);
      expect((await go(link.slug)).location).to.equal('https://example.com/landing');
    });

    it('targets by country (trusted edge header) and device', async () => {
      const link = await aLink({
        targeting: [
          { match: { country: ['JP'] }, url: 'https://example.com/jp' },
          { match: { device: ['mobile'] }, url: 'https://example.com/mobile' },
        ],
      });
      expect((await go(link.slug, { headers: { 'CF-IPCountry': 'JP' } })).location).to.equal('https://example.com/jp');
      expect((await go(link.slug, { headers: { 'User-Agent': IPHONE } })).location).to.equal('https://example.com/mobile');
      expect((await go(link.slug)).location).to.equal('https://example.com/landing');
    });

    it('opens the app launcher on a phone, the store with in_app store, and desktop_url on a desktop', async () => {
      const ios = { app_url: 'myapp://item/1', store_url: 'https://apps.apple.com/app/id1', web_url: 'https://example.com/web' };
      const attempt = await aLink({ mobile: { enabled: true, ios, desktop_url: 'https://example.com/desktop' } });
      const page = await go(attempt.slug, { headers: { 'User-Agent': IPHONE } });
      expect(page.status).to.equal(200);
      expect(page.body).to.include('myapp://item/1');
      expect(page.body).to.include('https://apps.apple.com/app/id1');
      expect((await go(attempt.slug)).location).to.equal('https://example.com/desktop');
      const store = await aLink({ mobile: { enabled: true, ios, in_app: 'store' } });
      expect((await go(store.slug, { headers: { 'User-Agent': IPHONE } })).location).to.equal('https://apps.apple.com/app/id1');
    });

    it('keeps an A/B visitor on its variant through the cookie', async () => {
      const link = await aLink({
        ab_test: { enabled: true, variants: [{ url: 'https://example.com/a', weight: 50 }, { url: 'https://example.com/b', weight: 50 }] },
      });
      const jar = new Jar();
      const first = (await go(link.slug, { jar })).location;
      for (let i = 0; i < 8; i++) expect((await go(link.slug, { jar })).location).to.equal(first);
      const seen = new Set<string | null>();
      for (let i = 0; i < 40; i++) seen.add((await go(link.slug)).location);
      expect(seen).to.deep.equal(new Set(['https://example.com/a', 'https://example.com/b']));
    });

    it('rotates round robin, and moves to the fallback once max_total_clicks is counted by the worker', async () => {
      const link = await aLink({
        rotator: {
          enabled: true,
          mode: 'round_robin',
          fallback_url: 'https://example.com/fallback',
          destinations: [
            { id: 'one', url: 'https://example.com/1', limits: { max_total_clicks: 2 } },
            { id: 'two', url: 'https://example.com/2', limits: { max_total_clicks: 2 } },
          ],
        },
      });
      const first = [(await go(link.slug)).location, (await go(link.slug)).location];
      expect(new Set(first)).to.deep.equal(new Set(['https://example.com/1', 'https://example.com/2']));
      await go(link.slug);
      await go(link.slug);
      await clicksOf(link.id, 4);
      // Counts reach the redirect from the worker's ingestion at the next refresh.
      const deadline = Date.now() + 10_000;
      let location: string | null = null;
      while (Date.now() < deadline) {
        location = (await go(link.slug)).location;
        if (location === 'https://example.com/fallback') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(location).to.equal('https://example.com/fallback');
    });
  });

  describe('destination and clicks', () => {
    it('merges the short URL’s UTM parameters, keeping the link’s own', async () => {
      const link = await aLink({ url: 'https://example.com/p?utm_source=owner#frag' });
      const res = await go(`${link.slug}?utm_source=visitor&utm_medium=mail`);
      const location = new URL(res.location!);
      expect(location.searchParams.get('utm_source')).to.equal('owner');
      expect(location.searchParams.get('utm_medium')).to.equal('mail');
      expect(location.hash).to.equal('#frag');
    });

    it('sends A/B visitors to variants carrying the UTM set on the link by an edit, a variant’s own parameter kept', async () => {
      const link = await aLink({
        ab_test: { enabled: true, variants: [{ url: 'https://example.com/a?utm_content=hero', weight: 50 }, { url: 'https://example.com/b', weight: 50 }] },
      });
      const edited = await call('PATCH', `/links/${link.id}`, { utm: { utm_source: 'news', utm_campaign: 'fall', utm_content: 'link' } });
      expect(edited.status, JSON.stringify(edited.body)).to.equal(200);
      const seen = new Map<string, Record<string, string>>();
      for (let i = 0; i < 40 && seen.size < 2; i++) {
        const location = new URL((await go(link.slug)).location!);
        seen.set(location.pathname, Object.fromEntries(location.searchParams));
      }
      expect(seen.get('/a')).to.deep.equal({ utm_content: 'hero', utm_source: 'news', utm_campaign: 'fall' });
      expect(seen.get('/b')).to.deep.equal({ utm_source: 'news', utm_campaign: 'fall', utm_content: 'link' });
    });

    it('appends a signed, workspace-bound click id when conversion tracking is on', async () => {
      const link = await aLink({ url: 'https://example.com/shop' });
      expect(new URL((await go(link.slug)).location!).searchParams.has('lp_click_id')).to.equal(false);
      expect((await call('PATCH', '/workspace', { conversion_tracking: true })).status).to.equal(200);
      try {
        const clickId = new URL((await go(link.slug)).location!).searchParams.get('lp_click_id');
        expect(clickId).to.be.a('string');
        const ids = new ClickIds(env.SECRET_KEY ?? 'development-secret-key-not-for-production-use');
        expect(ids.verify(clickId!, workspaceId, new Date(), 86_400_000).ok).to.equal(true);
        expect(ids.verify(clickId!, 'ws_other', new Date(), 86_400_000).ok).to.equal(false);
        const clicks = await clicksOf(link.id, 2);
        expect(clicks.map((c) => c._id)).to.include(clickId);
      } finally {
        await call('PATCH', '/workspace', { conversion_tracking: false });
      }
    });

    it('records each click with the visitor profile and the decision taken', async () => {
      const link = await aLink({
        rules: [{ id: 'de-rule', match: { country: ['DE'] }, action: { type: 'redirect', url: 'https://example.com/de' } }],
        ab_test: { enabled: true, variants: [{ url: 'https://example.com/a', weight: 1 }, { url: 'https://example.com/b', weight: 1 }] },
      });
      await go(link.slug, { headers: { 'CF-IPCountry': 'DE', Referer: 'https://news.example/item' } });
      await go(link.slug, { headers: { 'User-Agent': IPHONE } });
      const [byRule, byVariant] = (await clicksOf(link.id, 2)) as Array<Json & { decision: Json; visitor: Json }>;
      expect(byRule!.workspace_id).to.equal(workspaceId);
      expect(byRule!.decision.rule_id).to.equal('de-rule');
      expect(byRule!.visitor.country).to.equal('DE');
      expect(byRule!.visitor.referer).to.equal('https://news.example/item');
      expect(byRule!.visitor.ip).to.not.equal('127.0.0.1');
      expect(byVariant!.visitor.device).to.equal('mobile');
      expect(byVariant!.visitor.os).to.equal('ios');
      expect([0, 1]).to.include(byVariant!.decision.variant_index);
      expect(byVariant!.decision.rule_id).to.equal(null);
    });

    it('counts outcomes and cache lookups in /metrics', async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).to.match(/linkplane_redirects_total\{outcome="redirected"[^}]*\} [1-9]/);
      expect(text).to.match(/linkplane_redirects_total\{outcome="not_found"[^}]*\} [1-9]/);
      expect(text).to.match(/linkplane_redirects_total\{outcome="interstitial"[^}]*\} [1-9]/);
      expect(text).to.match(/linkplane_redirect_cache_lookups_total\{result="hit"[^}]*\} [1-9]/);
      expect(text).to.match(/linkplane_click_buffer_depth/);
      expect(text).to.match(/linkplane_click_publish_failures_total/);
    });
  });
});
