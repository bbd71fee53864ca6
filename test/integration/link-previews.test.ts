// Link previews end to end: a social crawler asking for a short link gets the link's card (custom, or its
// destination's own tags as the worker read them from a real HTTP server), a browser gets the redirect, and both
// visits are recorded as clicks with their visitor type. The worker's reads are bounded in size and time.
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, startWorker, type RunningApi, type RunningRedirect, type RunningWorker } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, expectInvalid, type Json, type Reply } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { PreviewFetcher, pageTags } from '../../src/links/preview-fetch.ts';
import type { LinkDoc } from '../../src/links/link.store.ts';
import { createCsvSource } from '../../src/imports/sources/csv.ts';

const CRAWLERS = {
  facebook: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  imessage: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
};
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

const PAGE = `<!doctype html><html><head><meta charset="utf-8">
<title>Fallback title</title>
<meta property="og:title" content="Spring &amp; Summer collection">
<meta content="Forty new pieces, &quot;made to last&quot;." property="og:description">
<meta name="twitter:image" content="/img/card.png">
</head><body><h1>Hello</h1></body></html>`;

describe('link previews for social crawlers (api, redirect, worker; real HTTP destination)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let client: MongoClient;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let worker: RunningWorker;
  let tenants: Tenants;
  let key: string;
  let site: Server;
  let siteUrl: string;
  const hangs: Array<() => void> = [];

  before(async () => {
    site = createServer((req, res) => {
      switch (req.url) {
        case '/page':
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
          return;
        case '/moved':
          res.writeHead(302, { location: '/page' }).end();
          return;
        case '/big':
          // The description comes after 300 KB: past the read limit.
          res.writeHead(200, { 'content-type': 'text/html' }).end(`<head><meta property="og:title" content="Big page"><!--${'x'.repeat(300_000)}--><meta property="og:description" content="too far"></head>`);
          return;
        case '/json':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"title":"no"}');
          return;
        case '/slow':
          hangs.push(() => res.destroy());
          return;
        default:
          res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    mongo = await startTestMongo();
    client = new MongoClient(mongo.uri);
    await client.connect();
    // Rounds far apart: the test runs the preview round itself.
    const { env } = await shortLinkEnv(mongo, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LINK_PREVIEW_INTERVAL_MS: '3600000', CLICK_BATCH_WAIT_MS: '20' });
    api = await startApi(env);
    redirect = await startRedirect(env);
    worker = await startWorker(env);
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id)).key;
  });

  after(async () => {
    for (const hang of hangs) hang();
    site.closeAllConnections();
    await new Promise((resolve) => site.close(resolve));
    await worker.stop();
    await redirect.stop();
    await api.stop();
    await tenants.close();
    await client.close();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown): Promise<Reply> => callApi(api.url, method, path, { key, body });
  const visit = (shortUrl: string, userAgent: string) => fetch(shortUrl, { redirect: 'manual', headers: { 'user-agent': userAgent } });
  const clicks = () => client.db(mongo.dbName).collection<{ link_id: string; outcome: string; destination: string | null; visitor: { visitor_type: string; bot_name: string | null } }>('clicks');

  async function aLink(body: Json): Promise<Json> {
    const res = await call('POST', '/links', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }

  it('shows a crawler the custom card, escaped under the redirect\'s policy, redirects a browser, and records both visits', async () => {
    const link = await aLink({
      url: 'https://example.com/spring?ref=1',
      preview: { title: 'Spring <sale> "now"', description: 'Up to 50 % off & free returns', image: 'https://cdn.example.com/card.png' },
    });
    expect(link.preview).to.deep.equal({ title: 'Spring <sale> "now"', description: 'Up to 50 % off & free returns', image: 'https://cdn.example.com/card.png' });
    expect(link.destination_preview).to.equal(null);

    for (const ua of Object.values(CRAWLERS)) {
      const res = await visit(link.short_url as string, ua);
      expect(res.status, ua).to.equal(200);
      const html = await res.text();
      expect(html).to.include('<meta property="og:title" content="Spring &lt;sale&gt; &quot;now&quot;">');
      expect(html).to.include('<meta property="og:description" content="Up to 50 % off &amp; free returns">');
      expect(html).to.include('<meta property="og:image" content="https://cdn.example.com/card.png">');
      expect(html).to.include('<meta name="twitter:card" content="summary_large_image">');
      expect(html).to.include(`<meta property="og:url" content="${link.short_url as string}">`);
      expect(html).not.to.include('<sale>');
      expect(res.headers.get('content-security-policy')).to.include("default-src 'none'").and.include("script-src 'none'");
      expect(res.headers.get('location')).to.equal(null);
    }
    const browser = await visit(link.short_url as string, BROWSER);
    expect(browser.status).to.equal(302);
    expect(browser.headers.get('location')).to.equal('https://example.com/spring?ref=1');

    const recorded = await until(async () => {
      const rows = await clicks().find({ link_id: link.id as string }).toArray();
      return rows.length === 4 ? rows : false;
    }, 15_000, 'four clicks recorded');
    const crawlers = recorded.filter((c) => c.visitor.visitor_type === 'social_preview');
    expect(crawlers).to.have.length(3);
    for (const c of crawlers) {
      expect(c.outcome).to.equal('preview');
      expect(c.destination).to.equal(null);
    }
    expect(crawlers.map((c) => c.visitor.bot_name).sort()).to.deep.equal(['Slackbot', 'facebookexternalhit', 'facebookexternalhit']);
    const people = recorded.filter((c) => c.visitor.visitor_type === 'human');
    expect(people).to.have.length(1);
    expect(people[0]!.outcome).to.equal('redirect');
    expect(people[0]!.destination).to.equal('https://example.com/spring?ref=1');
  });

  it('redirects a crawler while nothing is known of the destination, then shows the destination\'s own tags once the worker read them', async () => {
    const link = await aLink({ url: `${siteUrl}/moved` });
    const before = await visit(link.short_url as string, CRAWLERS.slack);
    expect(before.status).to.equal(302);
    expect(before.headers.get('location')).to.equal(`${siteUrl}/moved`);

    await worker.worker.previews.runOnce();
    const read = await call('GET', `/links/${link.id as string}`);
    expect(read.body.preview).to.equal(null);
    const fetched = read.body.destination_preview as Json;
    expect(fetched).to.include({ title: 'Spring & Summer collection', description: 'Forty new pieces, "made to last".', image: `${siteUrl}/img/card.png` });

    // The worker told the redirect to drop its copy of the link: the next crawl gets the card.
    const html = await until(async () => {
      const res = await visit(link.short_url as string, CRAWLERS.facebook);
      return res.status === 200 ? res.text() : false;
    }, 10_000, 'the crawler gets the card');
    expect(html).to.include('<meta property="og:title" content="Spring &amp; Summer collection">');
    expect(html).to.include(`<meta property="og:image" content="${siteUrl}/img/card.png">`);
    const browser = await visit(link.short_url as string, BROWSER);
    expect(browser.status).to.equal(302);

    // A custom preview takes precedence; a new destination forgets the old page's tags.
    const patched = await call('PATCH', `/links/${link.id as string}`, { url: `${siteUrl}/json` });
    expect(patched.body.destination_preview).to.equal(null);
    const afterChange = await visit(link.short_url as string, CRAWLERS.facebook);
    expect(afterChange.status).to.equal(302);
  });

  it('refuses a preview out of bounds or with an image that is not https', async () => {
    expectInvalid(await call('POST', '/links', { url: 'https://example.com', preview: { title: 'x', image: 'http://cdn.example.com/a.png' } }), 'preview.image');
    expectInvalid(await call('POST', '/links', { url: 'https://example.com', preview: { title: 'x'.repeat(121) } }), 'preview.title');
    expectInvalid(await call('POST', '/links', { url: 'https://example.com', preview: { title: 'x', description: 'y'.repeat(301) } }), 'preview.description');
    expectInvalid(await call('POST', '/links', { url: 'https://example.com', preview: { description: 'no title' } }), 'preview.title');
    const bulk = await call('POST', '/links/bulk', [{ url: 'https://example.com/b', preview: { title: 'Bulk card' } }]);
    expect(((bulk.body.data as Json[])[0]!.link as Json).preview).to.deep.equal({ title: 'Bulk card' });
  });

  it('exports the custom preview in both formats, and the CSV import reads it back', async () => {
    await aLink({ url: 'https://example.com/exported', preview: { title: 'Exported card', description: null, image: null } });
    const jsonl = await fetch(`${api.url}/v1/links/export?format=jsonl`, { headers: { authorization: `Bearer ${key}` } });
    const line = (await jsonl.text()).trim().split('\n').map((l) => JSON.parse(l) as Json).find((l) => l.url === 'https://example.com/exported')!;
    expect(line.preview).to.deep.equal({ title: 'Exported card', description: null, image: null });
    const csv = await (await fetch(`${api.url}/v1/links/export?format=csv`, { headers: { authorization: `Bearer ${key}` } })).text();
    expect(csv.split('\r\n')[0]).to.include(',preview,destination_preview,');
    expect(csv).to.include('"{""title"":""Exported card"",""description"":null,""image"":null}"');
    // Our CSV import reads the card back into the link it creates.
    const page = await createCsvSource({ token: null, baseUrl: null, params: {}, file: csv }).page(null, new AbortController().signal);
    const imported = page.links.find((l) => l.url === 'https://example.com/exported')!;
    expect(imported.native?.preview).to.deep.equal({ title: 'Exported card', description: null, image: null });
  });

  describe('the worker\'s read of a destination', () => {
    const logger = pino({ level: 'silent' });
    const fetcher = (options: { timeoutMs?: number; maxBytes?: number; allowPrivate?: boolean } = {}) =>
      new PreviewFetcher({
        links: client.db(mongo.dbName).collection<LinkDoc>('links'),
        bus: null,
        intervalMs: 3_600_000,
        refreshMs: 86_400_000,
        allowPrivate: options.allowPrivate ?? true,
        logger,
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
      });

    it('follows a redirect to the page and reads its tags', async () => {
      const read = await fetcher().read(`${siteUrl}/moved`);
      expect(read).to.deep.equal({ ok: true, tags: { title: 'Spring & Summer collection', description: 'Forty new pieces, "made to last".', image: `${siteUrl}/img/card.png` } });
    });

    it('reads no more than its byte limit: tags past it are not seen', async () => {
      const read = await fetcher({ maxBytes: 64 * 1024 }).read(`${siteUrl}/big`);
      expect(read).to.deep.equal({ ok: true, tags: { title: 'Big page', description: null, image: null } });
    });

    it('gives up on a destination that does not answer within its time', async () => {
      const read = await fetcher({ timeoutMs: 300 }).read(`${siteUrl}/slow`);
      expect(read).to.deep.equal({ ok: false, error: 'timeout' });
    });

    it('leaves pages that are not HTML and refuses private addresses unless allowed', async () => {
      expect(await fetcher().read(`${siteUrl}/json`)).to.deep.equal({ ok: false, error: 'not HTML (application/json)' });
      const refused = await fetcher({ allowPrivate: false }).read(`${siteUrl}/page`);
      expect(refused.ok).to.equal(false);
      expect((refused as { error: string }).error).to.match(/^refused: 127\.0\.0\.1 is a loopback address/);
    });

    it('reads tags in any attribute order, decodes entities, cuts long values, and keeps only http(s) images', () => {
      const tags = pageTags(
        `<head><meta name="twitter:title" content="T&#233;l&eacute;"><meta name=description content='${'d'.repeat(400)}'><meta property="og:image" content="javascript:alert(1)"></head>`,
        'https://example.com/x',
      );
      expect(tags.title).to.equal('Tél&eacute;');
      expect([...tags.description!]).to.have.length(300);
      expect(tags.description!.endsWith('…')).to.equal(true);
      expect(tags.image).to.equal(null);
    });
  });
});
