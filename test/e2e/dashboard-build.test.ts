// The dashboard build (web/dist) under the api's Content-Security-Policy: nothing inline, every asset a hashed
// file under /dashboard/assets/, and the app starts in real Chromium without a single CSP violation. The pages are
// served here by a bare static server that adds the contract's headers, so a violation is the build's own fault.
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { chromiumMissing, launchBrowser, watchCspViolations, type TestBrowser } from '../helpers/browser.ts';
import { DASHBOARD_DIST, requireDashboardBuild } from '../helpers/dashboard.ts';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: https:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html; charset=utf-8', '.svg': 'image/svg+xml', '.woff2': 'font/woff2' };

/** Serves web/dist the way the contract says the api does; /auth answers as for a visitor who is not signed in. */
function staticServer(): Server {
  return createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    if (path === '/auth/config') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ password: true, link: true, oidc: true, oidc_name: 'Example SSO' }));
      return;
    }
    if (path.startsWith('/auth/')) {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 'unauthorized', message: 'Not signed in.', doc_url: 'x' } }));
      return;
    }
    const asset = path.startsWith('/dashboard/assets/') ? join(DASHBOARD_DIST, path.slice('/dashboard/'.length)) : join(DASHBOARD_DIST, 'index.html');
    let body: Buffer;
    try {
      body = readFileSync(asset);
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(asset)] ?? 'application/octet-stream', 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff' }).end(body);
  });
}

describe('Dashboard build', function () {
  this.timeout(60_000);

  before(requireDashboardBuild);

  it('index.html loads only external, hashed scripts and styles under /dashboard/assets/ and nothing inline', () => {
    const html = readFileSync(join(DASHBOARD_DIST, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).to.have.length.greaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(body!.trim(), 'inline script').to.equal('');
      expect(attributes).to.match(/src="\/dashboard\/assets\/[\w-]+-[\w-]{8}\.js"/);
    }
    expect(html).not.to.match(/<style\b/);
    expect(html).not.to.match(/\sstyle=/);
    expect(html).not.to.match(/\son[a-z]+=/);
    const stylesheets = [...html.matchAll(/<link rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
    expect(stylesheets).to.have.length.greaterThan(0);
    for (const href of stylesheets) expect(href).to.match(/^\/dashboard\/assets\/[\w-]+-[\w-]{8}\.css$/);
  });

  it('ships no source maps and no assets inlined as data: URIs in the CSS', () => {
    const assets = readdirSync(join(DASHBOARD_DIST, 'assets'));
    expect(assets.filter((name) => name.endsWith('.map'))).to.deep.equal([]);
    for (const name of assets.filter((n) => n.endsWith('.css'))) {
      const css = readFileSync(join(DASHBOARD_DIST, 'assets', name), 'utf8');
      // data: images are allowed by img-src, but fonts are not (font-src 'self').
      expect(css).not.to.match(/@font-face[^}]*url\(\s*["']?data:/);
    }
    for (const name of assets.filter((n) => n.endsWith('.js'))) {
      expect(readFileSync(join(DASHBOARD_DIST, 'assets', name), 'utf8')).not.to.include('sourceMappingURL');
    }
  });

  it('loads at most 60 KB of compressed JavaScript for any screen (the shell, the screen and what they import)', () => {
    interface Chunk {
      file: string;
      imports?: string[];
      isEntry?: boolean;
      isDynamicEntry?: boolean;
    }
    const manifest = JSON.parse(readFileSync(join(DASHBOARD_DIST, '.vite', 'manifest.json'), 'utf8')) as Record<string, Chunk>;
    /** A chunk and every chunk it imports statically (what the browser fetches before running it). */
    const closure = (key: string, into = new Set<string>()): Set<string> => {
      if (into.has(key)) return into;
      into.add(key);
      for (const next of manifest[key]!.imports ?? []) closure(next, into);
      return into;
    };
    // As the api sends them: brotli at quality 11 (src/dashboard/static.ts).
    const compressed = new Map<string, number>();
    const size = (key: string) => {
      const file = manifest[key]!.file;
      if (!compressed.has(file)) {
        compressed.set(file, brotliCompressSync(readFileSync(join(DASHBOARD_DIST, file)), { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }).length);
      }
      return compressed.get(file)!;
    };
    const entry = Object.keys(manifest).find((key) => manifest[key]!.isEntry)!;
    const screens = Object.keys(manifest).filter((key) => manifest[key]!.isDynamicEntry && /\.screen\.tsx$/.test(key));
    expect(screens.length, 'screens found in the manifest').to.be.greaterThan(20);
    const figures = screens.map((screen) => {
      const files = closure(screen, closure(entry));
      return { screen: screen.replace(/^src\/screens\//, ''), bytes: [...files].reduce((sum, key) => sum + size(key), 0) };
    });
    figures.sort((a, b) => b.bytes - a.bytes);
    console.log(figures.map((f) => `      ${(f.bytes / 1024).toFixed(1).padStart(5)} KB  ${f.screen}`).join('\n'));
    for (const { screen, bytes } of figures) expect(bytes, `${screen}: ${(bytes / 1024).toFixed(1)} KB of compressed JavaScript`).to.be.below(60 * 1024);
  });

  describe('in Chromium under the CSP', function () {
    let server: Server;
    let browser: TestBrowser;
    let origin: string;

    before(async function () {
      if (chromiumMissing()) this.skip();
      server = staticServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      browser = await launchBrowser();
    });

    after(async () => {
      await browser?.close();
      server?.close();
    });

    it('sends a visitor who is not signed in to the sign-in page, with every sign-in way, and no CSP violation', async () => {
      const page = await browser.newPage();
      const violations = await watchCspViolations(page);
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${origin}/dashboard/links?archived=true`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      const url = new URL(page.url());
      expect(url.pathname).to.equal('/dashboard/sign-in');
      expect(url.searchParams.get('next')).to.equal('/dashboard/links?archived=true');
      // Focus lands on the heading of the new page (screen readers start reading there).
      expect(await page.evaluate('document.activeElement && document.activeElement.tagName')).to.equal('H1');
      expect(await page.getByLabel('E-mail', { exact: true }).isEditable()).to.equal(true);
      expect(await page.getByLabel('Password', { exact: true }).isEditable()).to.equal(true);
      expect(await page.getByRole('button', { name: 'Sign in with Example SSO' }).getAttribute('href')).to.equal('/auth/oidc/start');
      await page.getByText('E-mail me a sign-in link instead').click();
      expect(await page.getByLabel('E-mail for the link').isEditable()).to.equal(true);
      expect(violations).to.deep.equal([]);
      expect(errors).to.deep.equal([]);
    });

    it('shows the error a sign-in redirect carries in ?error=', async () => {
      const page = await browser.newPage();
      await page.goto(`${origin}/dashboard/sign-in?error=link_expired`);
      const alert = page.getByRole('alert').filter({ hasText: 'expired' });
      await alert.waitFor();
      expect(await alert.textContent()).to.include('That sign-in link has expired or was already used');
    });
  });
});
