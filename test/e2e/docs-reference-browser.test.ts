// The API reference at /docs in Chromium: Redoc, served by the api from node_modules, renders the OpenAPI
// document under the page's Content-Security-Policy without a violation, and loads nothing from elsewhere.
import { expect } from 'chai';
import { request, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { chromiumMissing, launchBrowser, watchCspViolations } from '../helpers/browser.ts';
import type { TestBrowser } from '../helpers/browser.ts';

describe('API reference at /docs (Chromium)', function () {
  this.timeout(90_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let browser: TestBrowser;

  before(async function () {
    // One test (chromium.test.ts) reports a missing Chromium; the browser suites skip themselves.
    if (chromiumMissing()) this.skip();
    mongo = await startTestMongo();
    api = await startApi(testEnv(mongo));
    browser = await launchBrowser();
  });

  /** A raw GET (node:http): fetch would decompress the body and hide Content-Encoding. */
  function get(path: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      request(`${api.url}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });
  }

  after(async () => {
    await browser?.close();
    await api?.stop();
    await mongo?.stop();
  });

  it('renders the operations of the OpenAPI document, with no CSP violation and no request to another origin', async () => {
    const page = await browser.newPage();
    const violations = await watchCspViolations(page);
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    const origins = new Set<string>();
    page.on('request', (request) => origins.add(new URL(request.url()).origin));

    const response = await page.goto(`${api.url}/docs`);
    expect(response?.status()).to.equal(200);
    expect(response?.headers()['content-security-policy']).to.contain("script-src 'self'");
    // An operation's title, as the document's summary for createLink.
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId?: string; summary?: string }>> };
    const summary = doc.paths['/links']!.post!.summary!;
    await page.getByRole('heading', { name: summary }).first().waitFor({ timeout: 45_000 });
    expect(await page.getByRole('heading', { name: summary }).first().isVisible()).to.equal(true);
    // The webhooks section too: a workspace event, by its summary.
    expect(await page.getByText('A conversion was recorded').count(), 'the conversion.created webhook').to.be.greaterThan(0);

    expect(violations, JSON.stringify(violations)).to.deep.equal([]);
    expect(consoleErrors, consoleErrors.join('\n')).to.deep.equal([]);
    expect([...origins].filter((o) => o !== api.url && o !== 'null'), 'only the api origin').to.deep.equal([]);
  });

  it('serves the script with caching headers, compressed when asked, and answers 304 to its ETag', async () => {
    const plain = await get('/docs/assets/redoc.standalone.js', { 'accept-encoding': 'identity' });
    expect(plain.status).to.equal(200);
    expect(plain.headers['content-type']).to.match(/^text\/javascript/);
    expect(plain.headers['cache-control']).to.equal('public, max-age=86400');
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(plain.body.length).to.be.greaterThan(100_000);
    expect(plain.body.toString('utf8'), 'no CDN address left in the bundle').to.not.contain('cdn.redoc.ly');
    const etag = plain.headers.etag as string;
    expect(etag).to.match(/^"[\w-]+"$/);

    const gzipped = await get('/docs/assets/redoc.standalone.js', { 'accept-encoding': 'gzip' });
    expect(gzipped.headers['content-encoding']).to.equal('gzip');
    expect(gunzipSync(gzipped.body).equals(plain.body)).to.equal(true);

    const again = await get('/docs/assets/redoc.standalone.js', { 'if-none-match': etag });
    expect(again.status).to.equal(304);
    expect(again.body.length).to.equal(0);
  });

  it('keeps every doc_url working: /docs/errors still has an anchor per error code', async () => {
    const res = await fetch(`${api.url}/v1/links`, { headers: { authorization: 'Bearer lp_nope' } });
    const body = (await res.json()) as { error: { code: string; doc_url: string } };
    const url = new URL(body.error.doc_url);
    expect(url.pathname).to.equal('/docs/errors');
    const page = await fetch(`${api.url}${url.pathname}`);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.contain(`id="${url.hash.slice(1)}"`);
  });
});
