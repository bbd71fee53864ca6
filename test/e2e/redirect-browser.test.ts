// The interstitials of the real redirect process in headless Chromium: the password round trip (form → wrong →
// right → destination), the warning's continue link, and the app launcher falling back after delay_ms — with no
// Content-Security-Policy violation on the way.
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, type RunningApi, type RunningRedirect } from '../helpers/api.ts';
import { Tenants } from '../helpers/tenants.ts';
import { callApi, type Json } from '../helpers/http.ts';
import { chromiumMissing, launchBrowser, watchCspViolations, type TestBrowser } from '../helpers/browser.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

describe('Redirect interstitials in Chromium', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let tenants: Tenants;
  let browser: TestBrowser;
  let destination: Server;
  let destinationBase: string;
  let key: string;
  let base: string;

  before(async function () {
    // Reported once, by test/e2e/chromium.test.ts.
    if (chromiumMissing()) this.skip();
    mongo = await startTestMongo();
    let env: Record<string, string>;
    ({ env, base } = await shortLinkEnv(mongo));
    api = await startApi(env);
    redirect = await startRedirect(env);
    tenants = await Tenants.open(mongo);
    key = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'business' }))._id)).key;
    // The destination: another origin, as a real one would be.
    destination = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Destination</title><h1>Arrived at ${req.url}</h1>`);
    });
    await new Promise<void>((resolve) => destination.listen(0, 'localhost', resolve));
    destinationBase = `http://localhost:${(destination.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });

  after(async () => {
    // Each part only if it was started: a failed (or skipped) `before` leaves the rest undefined.
    await browser?.close();
    destination?.close();
    await tenants?.close();
    await redirect?.stop();
    await api?.stop();
    await mongo?.stop();
  });

  async function aLink(body: Json): Promise<{ slug: string }> {
    const reply = await callApi(api.url, 'POST', '/links', { key, body: { url: `${destinationBase}/landing`, ...body } });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
    return reply.body as { slug: string };
  }

  it('unlocks a password link: wrong password refused, right one lands on the destination', async () => {
    const link = await aLink({ password: 'hunter2 hunter2' });
    const page = await browser.newPage();
    const violations = await watchCspViolations(page);
    await page.goto(`${base}/${link.slug}`);
    const field = page.getByLabel(/password/i);
    await field.fill('not it');
    const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), field.press('Enter')]);
    expect(refused.status()).to.equal(403);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.match(/not correct/i);

    await page.getByLabel(/password/i).fill('hunter2 hunter2');
    await Promise.all([page.waitForURL(`${destinationBase}/landing`), page.getByLabel(/password/i).press('Enter')]);
    expect(await page.getByRole('heading').textContent()).to.equal('Arrived at /landing');
    // The cookie now opens the link directly.
    await page.goto(`${base}/${link.slug}`);
    await page.waitForURL(`${destinationBase}/landing`);
    expect(violations).to.deep.equal([]);
  });

  it('continues from a warning to the destination', async () => {
    const link = await aLink({ rules: [{ match: { device: ['desktop'] }, action: { type: 'warn' } }] });
    const page = await browser.newPage();
    const violations = await watchCspViolations(page);
    await page.goto(`${base}/${link.slug}`);
    await Promise.all([page.waitForURL(`${destinationBase}/landing`), page.getByRole('link', { name: /continue/i }).click()]);
    expect(violations).to.deep.equal([]);
  });

  it('falls back from the app launcher to the store after delay_ms when the app does not open', async () => {
    const link = await aLink({
      mobile: { enabled: true, delay_ms: 800, ios: { app_url: 'linkplane-test://item/7', store_url: `${destinationBase}/store` } },
    });
    const context = await browser.browser.newContext({ userAgent: IPHONE });
    try {
      const page = await context.newPage();
      const violations = await watchCspViolations(page);
      await page.goto(`${base}/${link.slug}`, { waitUntil: 'commit' });
      // The launcher page itself comes first: the fallback waits for delay_ms.
      expect(page.url()).to.equal(`${base}/${link.slug}`);
      await page.getByRole('heading').first().waitFor();
      await page.waitForURL(`${destinationBase}/store`, { timeout: 10_000 });
      expect(await page.getByRole('heading').textContent()).to.equal('Arrived at /store');
      expect(violations).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
