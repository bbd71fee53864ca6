import { expect } from 'chai';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import {
  actionPage,
  appLauncherPage,
  gonePage,
  notFoundPage,
  passwordPage,
  plainPageHeaders,
  unlockedPage,
  warnPage,
} from '../../src/redirect/pages.ts';
import type { PageResponse } from '../../src/redirect/pages.ts';
import { securityHeaders } from '../../src/redirect/page-security.ts';
import { chromiumMissing, launchBrowser, watchCspViolations } from '../helpers/browser.ts';
import type { CspViolation, TestBrowser } from '../helpers/browser.ts';

const PASSWORD = 'open sesame';
const UNLOCK_COOKIE = 'unlocked=1';
const LAUNCHER_DELAY_MS = 1600;

interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A node:http server that records every request and answers from a route table. */
class RecordingServer {
  readonly requests: Recorded[] = [];
  private readonly server: Server;
  private readonly routes: (req: Recorded, res: ServerResponse) => void;

  constructor(routes: (req: Recorded, res: ServerResponse) => void) {
    this.routes = routes;
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const recorded = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() };
        this.requests.push(recorded);
        this.routes(recorded, res);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  hits(path: string): Recorded[] {
    return this.requests.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Waits (up to the test's timeout) for something the browser reports asynchronously. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * Resolves when the page commits a navigation to `url`. Unlike `waitForURL` it does not fail on the app attempt's
 * navigation, which Chromium aborts when no app handles the scheme.
 */
async function landsOn(page: Page, url: string): Promise<void> {
  await page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame() && frame.url() === url });
  // Landed means loaded: closing the context while that navigation is still committing can hang Chromium's teardown.
  await page.waitForLoadState('load');
}

function send(res: ServerResponse, page: PageResponse, extraHeaders: Record<string, string> = {}): void {
  res.writeHead(page.status, { ...page.headers, ...extraHeaders });
  res.end(page.html);
}

describe('redirect pages in headless Chromium', function () {
  this.timeout(60_000);
  let browser: TestBrowser;
  /** Another origin (another port): where links lead. */
  let destination: RecordingServer;
  /** The redirect's origin, serving the pages as the redirect process would. */
  let site: RecordingServer;
  let page: Page;
  let violations: CspViolation[];

  before(async function () {
    // Reported once, by test/e2e/chromium.test.ts.
    if (chromiumMissing()) this.skip();
    destination = await new RecordingServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Destination</title><h1>Destination</h1>');
    }).start();
    site = await new RecordingServer((req, res) => route(req, res)).start();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await site?.stop();
    await destination?.stop();
  });
  beforeEach(async () => {
    page = await browser.newPage();
    violations = await watchCspViolations(page);
  });
  afterEach(async () => {
    await page.context().close();
  });

  function route(req: Recorded, res: ServerResponse): void {
    const [path, query = ''] = req.path.split('?') as [string, string?];
    const params = new URLSearchParams(query);
    switch (path) {
      case '/secret': {
        if (req.method === 'POST') {
          const password = new URLSearchParams(req.body).get('password');
          if (password === PASSWORD) return send(res, unlockedPage({ continueUrl: '/secret' }), { 'Set-Cookie': `${UNLOCK_COOKIE}; Path=/; HttpOnly; SameSite=Lax` });
          return send(res, passwordPage({ actionUrl: '/secret', error: 'wrong' }));
        }
        if ((req.headers.cookie ?? '').includes(UNLOCK_COOKIE)) {
          res.writeHead(302, { Location: destination.url('/secret-landing'), 'Cache-Control': 'no-store' });
          return void res.end();
        }
        return send(res, passwordPage({ actionUrl: '/secret', error: null }));
      }
      case '/locked':
        return send(res, passwordPage({ actionUrl: '/locked', error: 'locked', retryAfterSeconds: 120 }));
      case '/warn':
        return send(res, warnPage({ destination: destination.url('/warned?a=1&b=2'), continueUrl: destination.url('/warned?a=1&b=2') }));
      case '/page':
        return send(res, actionPage({ title: 'Spring sale', text: 'Ends Monday.\nReally.', buttonLabel: 'Shop now', buttonUrl: destination.url('/shop') }));
      case '/hostile':
        return send(
          res,
          actionPage({
            title: '<script>window.pwned = 1</script>',
            text: '<img src=x onerror="window.pwned = 2">',
            buttonLabel: null,
            buttonUrl: 'javascript:window.pwned = 3',
          }),
        );
      case '/app':
        return send(
          res,
          appLauncherPage({
            appUrl: 'linkplane-test://x',
            // Each test names its own fallback, so the destination's hits are that test's alone.
            fallbackUrl: destination.url(params.get('fallback') ?? '/fallback'),
            delayMs: Number(params.get('delay') ?? LAUNCHER_DELAY_MS),
            platform: 'android',
          }),
        );
      case '/gone':
        return send(res, gonePage());
      case '/unstyled': {
        // A style without the nonce: the browser must refuse it, which shows the violation watch works.
        res.writeHead(200, securityHeaders({ nonce: 'bm90LXRoZS1yaWdodC1vbmU=' }));
        return void res.end('<!doctype html><title>x</title><style>h1{color:red}</style><h1>x</h1>');
      }
      default:
        res.writeHead(404, plainPageHeaders());
        return void res.end(notFoundPage());
    }
  }

  it('notices a CSP violation when there is one', async () => {
    await page.goto(site.url('/unstyled'));
    await until(() => violations.length > 0);
    expect(violations.map((v) => v.directive)).to.include('style-src-elem');
  });

  describe('password form', () => {
    it('has a labelled password field and a heading, and runs without a CSP violation', async () => {
      const response = await page.goto(site.url('/secret'));
      expect(response!.status()).to.equal(200);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('This link is protected');
      const field = page.getByLabel('Password');
      expect(await field.getAttribute('type')).to.equal('password');
      expect(await page.evaluate('document.activeElement.id'), 'the field has focus').to.equal('password');
      // The nonce'd style applied: Chromium's default h1 is 32px.
      expect(await page.evaluate("getComputedStyle(document.querySelector('h1')).fontSize")).to.equal('24px');
      expect(violations).to.deep.equal([]);
    });

    it('posts the typed password as a form and, once accepted, lands on the destination without a referrer', async () => {
      await page.goto(site.url('/secret'));
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(destination.url('/secret-landing'));

      const [post] = site.requests.filter((r) => r.method === 'POST' && r.path === '/secret').slice(-1);
      expect(post!.headers['content-type']).to.equal('application/x-www-form-urlencoded');
      expect(new URLSearchParams(post!.body).get('password')).to.equal(PASSWORD);
      const [landing] = destination.hits('/secret-landing').slice(-1);
      expect(landing!.headers.referer).to.equal(undefined);
      expect(violations).to.deep.equal([]);
    });

    it('announces a wrong password in the alert region and keeps the visitor on the form', async () => {
      await page.goto(site.url('/secret'));
      await page.getByLabel('Password').fill('guess');
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Continue' }).click(),
      ]);
      expect(response.status()).to.equal(403);
      await page.waitForLoadState('load');
      expect(await page.getByRole('alert').textContent()).to.equal('That password is not correct. Please try again.');
      expect(await page.getByLabel('Password').getAttribute('aria-invalid')).to.equal('true');
      expect(page.url()).to.equal(site.url('/secret'));
      expect(violations).to.deep.equal([]);
    });

    it('disables the form while locked and says when to retry', async () => {
      await page.goto(site.url('/locked'));
      expect(await page.getByRole('button', { name: 'Continue' }).isDisabled()).to.equal(true);
      expect(await page.getByLabel('Password').isDisabled()).to.equal(true);
      expect(await page.getByRole('alert').textContent()).to.equal('Too many attempts. You can try again in 2 minutes.');
    });
  });

  it('warns with the destination host and continues only when the link is followed, sending no referrer', async () => {
    await page.goto(site.url('/warn'));
    const host = new URL(destination.url('/')).host;
    expect(await page.locator('.host').textContent()).to.equal(host);
    expect(destination.hits('/warned?a=1&b=2')).to.have.length(0);
    await page.getByRole('link', { name: `Continue to ${host}` }).click();
    await page.waitForURL(destination.url('/warned?a=1&b=2'));
    expect(destination.hits('/warned?a=1&b=2')[0]!.headers.referer).to.equal(undefined);
    expect(violations).to.deep.equal([]);
  });

  it('shows the page action with its text line by line, and its button navigates', async () => {
    await page.goto(site.url('/page'));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Spring sale');
    expect(await page.locator('.text').innerText()).to.equal('Ends Monday.\nReally.');
    await page.getByRole('link', { name: 'Shop now' }).click();
    await page.waitForURL(destination.url('/shop'));
    expect(violations).to.deep.equal([]);
  });

  it('shows hostile page text as text: nothing in it runs', async () => {
    await page.goto(site.url('/hostile'));
    expect(await page.title()).to.equal('<script>window.pwned = 1</script>');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('<script>window.pwned = 1</script>');
    expect(await page.locator('img').count()).to.equal(0);
    expect(await page.getByRole('link', { name: 'Continue' }).getAttribute('href')).to.equal('about:blank');
    expect(await page.evaluate('window.pwned')).to.equal(undefined);
    expect(violations).to.deep.equal([]);
  });

  describe('app launcher', () => {
    it('tries the app, stays while the delay runs, then replaces itself with the fallback', async () => {
      // The page's timers run only when the test advances its clock, so "not yet" is a fact, not a race.
      const requested: string[] = [];
      page.on('request', (r) => requested.push(r.url()));
      await page.clock.install({ time: 0 });
      await page.clock.pauseAt(1000);
      // Not `load`: the app attempt starts a navigation that never commits, which a full `goto` would wait out.
      await page.goto(site.url('/app?fallback=/fallback-after-delay'), { waitUntil: 'commit' });
      await page.getByRole('heading', { name: 'Opening the app' }).waitFor();
      const historyLength = await page.evaluate('history.length');
      await until(() => requested.includes('linkplane-test://x'));
      expect(violations).to.deep.equal([]);

      await page.clock.runFor(LAUNCHER_DELAY_MS / 2);
      expect(await page.evaluate('location.pathname')).to.equal('/app');
      await page.clock.runFor(LAUNCHER_DELAY_MS / 2 - 1);
      expect(await page.evaluate('location.pathname')).to.equal('/app');
      expect(destination.hits('/fallback-after-delay')).to.have.length(0);

      const landed = landsOn(page, destination.url('/fallback-after-delay'));
      await page.clock.runFor(1);
      await landed;
      expect(destination.hits('/fallback-after-delay')).to.have.length(1);
      expect(await page.evaluate('history.length'), 'the launcher replaced itself').to.equal(historyLength);
      expect(violations).to.deep.equal([]);
    });

    it('stays put when the app takes over the screen before the delay ends', async () => {
      await page.clock.install({ time: 0 });
      await page.clock.pauseAt(1000);
      await page.goto(site.url('/app?fallback=/fallback-not-taken'), { waitUntil: 'commit' });
      await page.getByRole('heading', { name: 'Opening the app' }).waitFor();
      // What a browser does when an app comes to the front: the page is hidden.
      await page.evaluate("window.dispatchEvent(new PageTransitionEvent('pagehide'))");

      await page.clock.runFor(LAUNCHER_DELAY_MS * 2);
      expect(await page.evaluate('location.pathname')).to.equal('/app');
      expect(destination.hits('/fallback-not-taken')).to.have.length(0);
    });

    it('reaches the fallback on the real clock too', async () => {
      const landed = landsOn(page, destination.url('/fallback'));
      await page.goto(site.url('/app?delay=600'), { waitUntil: 'commit' });
      await landed;
    });

    it('offers both links to visitors without JavaScript', async () => {
      const context = await browser.browser.newContext({ javaScriptEnabled: false });
      const noJs = await context.newPage();
      try {
        await noJs.goto(site.url('/app'));
        expect(await noJs.getByRole('link', { name: 'Open in app' }).getAttribute('href')).to.equal('linkplane-test://x');
        await noJs.getByRole('link', { name: 'Continue' }).click();
        await noJs.waitForURL(destination.url('/fallback'));
      } finally {
        await context.close();
      }
    });
  });

  it('answers 410 with the gone page', async () => {
    const response = await page.goto(site.url('/gone'));
    expect(response!.status()).to.equal(410);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Link no longer available');
    expect(violations).to.deep.equal([]);
  });

  it('styles the 404 page through its hash-allowed style, without a CSP violation', async () => {
    const response = await page.goto(site.url('/nowhere'));
    expect(response!.status()).to.equal(404);
    expect(await page.evaluate('getComputedStyle(document.body).textAlign'), 'the hashed style applied').to.equal('center');
    expect(violations).to.deep.equal([]);
  });
});
