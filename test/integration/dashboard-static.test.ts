import { expect } from 'chai';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: https:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const INDEX = `<!doctype html><html><head><script type="module" src="/dashboard/assets/app-abc123.js"></script></head><body><div id="app"></div></body></html>`;
const APP_JS = `export const greeting = ${JSON.stringify('hello '.repeat(400))};\n`;

/** A GET with the raw path as written (fetch would normalise `..` away before sending it). */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the dashboard files served by the api (web/dist)', function () {
  this.timeout(30_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let dir: string;

  before(async () => {
    mongo = await startTestMongo();
    dir = await mkdtemp(join(tmpdir(), 'lp-dist-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), INDEX);
    await writeFile(join(dir, 'assets', 'app-abc123.js'), APP_JS);
    await writeFile(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    // A file next to the build that must never be reachable through it.
    await writeFile(join(dir, '..', 'lp-secret.txt'), 'secret');
    api = await startApi(testEnv(mongo, { DASHBOARD_DIR: dir }));
  });

  after(async () => {
    await api?.stop();
    await mongo?.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(join(dir, '..', 'lp-secret.txt'), { force: true });
  });

  function expectSecurityHeaders(res: Response): void {
    expect(res.headers.get('content-security-policy')).to.equal(CSP);
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('referrer-policy')).to.equal('same-origin');
  }

  it('serves index.html with no-cache and the strict CSP', async () => {
    const res = await fetch(`${api.url}/dashboard/`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('no-cache');
    expectSecurityHeaders(res);
    expect(await res.text()).to.equal(INDEX);
  });

  it('answers index.html for any client-side route (history API), never for a missing hashed asset', async () => {
    for (const path of ['/dashboard/links', '/dashboard/links/lnk_123/analytics', '/dashboard/sign-in?error=link_expired']) {
      const res = await fetch(`${api.url}${path}`);
      expect(res.status, path).to.equal(200);
      expect(await res.text()).to.equal(INDEX);
      expectSecurityHeaders(res);
    }
    const missing = await fetch(`${api.url}/dashboard/assets/app-old999.js`);
    expect(missing.status).to.equal(404);
    expectSecurityHeaders(missing);
  });

  it('serves hashed assets as immutable for a year, compressed as the client accepts (br, gzip, none)', async () => {
    const br = await fetch(`${api.url}/dashboard/assets/app-abc123.js`, { headers: { 'Accept-Encoding': 'br' } });
    expect(br.status).to.equal(200);
    expect(br.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(br.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(br.headers.get('content-encoding')).to.equal('br');
    expect(br.headers.get('vary')).to.match(/Accept-Encoding/);
    expectSecurityHeaders(br);
    // Through node:http, which does not decompress, to see the bytes as sent.
    const raw = async (encoding: string) =>
      new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
        const url = new URL(api.url);
        const req = httpRequest({ host: url.hostname, port: url.port, path: '/dashboard/assets/app-abc123.js', headers: { 'Accept-Encoding': encoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end();
      });
    const brBytes = await raw('br');
    expect(brotliDecompressSync(brBytes.body).toString()).to.equal(APP_JS);
    expect(brBytes.body.length).to.be.below(APP_JS.length / 4);
    const gz = await raw('gzip');
    expect(gz.headers['content-encoding']).to.equal('gzip');
    expect(gunzipSync(gz.body).toString()).to.equal(APP_JS);
    const plain = await raw('identity');
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(plain.body.toString()).to.equal(APP_JS);
  });

  it('answers 304 to a revalidation with the ETag', async () => {
    const first = await fetch(`${api.url}/dashboard/`);
    const etag = first.headers.get('etag')!;
    expect(etag).to.match(/^".+"$/);
    const again = await fetch(`${api.url}/dashboard/`, { headers: { 'If-None-Match': etag } });
    expect(again.status).to.equal(304);
  });

  it('serves other files of the build with no-cache and their type', async () => {
    const res = await fetch(`${api.url}/dashboard/favicon.svg`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/svg+xml');
    expect(res.headers.get('cache-control')).to.equal('no-cache');
  });

  it('answers 404 for a file name the build does not have, and the app for page addresses', async () => {
    for (const path of ['/dashboard/favicon.ico', '/dashboard/robots.txt', '/dashboard/w/ws_1/apple-touch-icon.png']) {
      const res = await fetch(`${api.url}${path}`);
      expect(res.status, path).to.equal(404);
      expect(res.headers.get('content-type'), path).to.equal('text/plain; charset=utf-8');
    }
    for (const path of ['/dashboard/w/ws_1/links/lnk_1', '/dashboard/p/pa_1/partner/clients', '/dashboard/links']) {
      const res = await fetch(`${api.url}${path}`);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type'), path).to.equal('text/html; charset=utf-8');
    }
  });

  it('never serves a file outside the build (.., encoded or not)', async () => {
    for (const path of ['/dashboard/../lp-secret.txt', '/dashboard/%2e%2e/lp-secret.txt', '/dashboard/assets/%2e%2e%2f%2e%2e%2flp-secret.txt', '/dashboard/..%5clp-secret.txt', '/dashboard/%00']) {
      const res = await rawGet(api.url, path);
      expect(res.body, path).not.to.contain('secret');
      expect([200, 400, 404], path).to.include(res.status);
    }
  });

  it('redirects /dashboard to /dashboard/ and refuses other methods', async () => {
    const bare = await fetch(`${api.url}/dashboard`, { redirect: 'manual' });
    expect(bare.status).to.equal(302);
    expect(bare.headers.get('location')).to.equal('/dashboard/');
    const post = await fetch(`${api.url}/dashboard/`, { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
  });

  it('answers 503 with a plain page saying "run make deps" while the build is missing, and serves it once built', async () => {
    const emptyDir = await mkdtemp(join(tmpdir(), 'lp-nodist-'));
    const bare = await startApi(testEnv(mongo, { DASHBOARD_DIR: join(emptyDir, 'dist') }));
    try {
      const res = await fetch(`${bare.url}/dashboard/`);
      expect(res.status).to.equal(503);
      expect(res.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
      expectSecurityHeaders(res);
      expect(await res.text()).to.contain('make deps');
      expect((await fetch(`${bare.url}/healthz`)).status).to.equal(200);
      await mkdir(join(emptyDir, 'dist'));
      await writeFile(join(emptyDir, 'dist', 'index.html'), INDEX);
      expect((await fetch(`${bare.url}/dashboard/`)).status).to.equal(200);
    } finally {
      await bare.stop();
      await rm(emptyDir, { recursive: true, force: true });
    }
  });
});
