// The workspace or partner in view follows the address in real Chromium: Back and Forward after opening a client
// from the partner's clients, a workspace page at a partner's address, old addresses, an unknown context; and the
// shell's details: no 401 or 404 on the sign-in page, the favicon, the focus ring for keyboard users only.
import { expect } from 'chai';
import type { Page, Response } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { tabTo } from '../helpers/dashboard-audit.ts';

describe('Dashboard: the context follows the address', function () {
  this.timeout(120_000);
  let dashboard: Dashboard;
  let page: Page;
  /** Every /v1 answer of 400 or more the page got, with its path. */
  let refused: string[];
  const w = (path: string) => `/dashboard/w/${dashboard.workspaceId}${path}`;
  const p = (path: string) => `/dashboard/p/${dashboard.partnerId}${path}`;

  before(async function () {
    if (chromiumMissing()) this.skip();
    dashboard = await startDashboard({ partner: true });
    page = await dashboard.signedInPage();
    refused = [];
    page.on('response', (response: Response) => {
      const url = new URL(response.url());
      if (url.pathname.startsWith('/v1/') && response.status() >= 400) refused.push(`${response.status()} ${url.pathname}`);
    });
  });

  after(async () => {
    await dashboard?.stop();
  });

  const switcher = () => page.getByLabel('Workspace or partner in view');

  it('opens a client from the partner, and Back shows the partner’s clients again, with the partner’s data', async () => {
    expect(new URL(page.url()).pathname).to.equal(w('/links'));
    await switcher().selectOption({ value: dashboard.partnerId! });
    await page.waitForURL((url) => url.pathname === p('/partner'));
    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Clients' }).click();
    await page.waitForURL((url) => url.pathname === p('/partner/clients'));
    await page.getByRole('button', { name: 'Open Acme' }).click();
    await page.waitForURL((url) => url.pathname === w('/links'));
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    expect(await switcher().inputValue()).to.equal(dashboard.workspaceId);

    const backOnClients = async (how: string) => {
      await page.waitForURL((url) => url.pathname === p('/partner/clients'));
      await page.getByRole('heading', { level: 1, name: 'Clients' }).waitFor();
      await page.getByRole('button', { name: 'Open Acme' }).waitFor();
      expect(await switcher().inputValue(), `the switcher follows ${how}`).to.equal(dashboard.partnerId);
      expect(await page.getByRole('alert').count(), `no error on the clients page after ${how}`).to.equal(0);
    };
    await page.goBack();
    await backOnClients('Back');
    await page.goForward();
    await page.waitForURL((url) => url.pathname === w('/links'));
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    expect(await switcher().inputValue(), 'the switcher follows Forward').to.equal(dashboard.workspaceId);
    await page.goBack();
    await backOnClients('Back again');

    // The partner's payments still know its clients.
    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Payments' }).click();
    await page.getByRole('button', { name: 'Record a payment' }).click();
    const client = page.getByRole('form', { name: 'Record a payment' }).getByLabel('Client');
    await client.locator('option', { hasText: 'Acme' }).waitFor({ state: 'attached' });
    expect(await client.locator('option').allTextContents()).not.to.include('No clients yet');
    expect(refused, 'no call refused on the way').to.deep.equal([]);
  });

  it('shows a workspace page at a partner’s address as a choice of workspaces, never the api’s refusal', async () => {
    await page.goto(`${dashboard.apiUrl}${p('/links')}`);
    await page.getByRole('heading', { level: 1, name: 'This page belongs to a workspace' }).waitFor();
    expect(await page.locator('main').textContent()).not.to.match(/forbidden|lp_live_|requires a/);
    const link = page.getByRole('link', { name: 'Switch to Acme' });
    expect(await link.getAttribute('href')).to.equal(w('/links'));
    await link.click();
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    expect(await switcher().inputValue()).to.equal(dashboard.workspaceId);
    // And the reverse: a partner page at the workspace's address.
    await page.goto(`${dashboard.apiUrl}${w('/partner/clients')}`);
    await page.getByRole('heading', { level: 1, name: 'This page belongs to a partner' }).waitFor();
    expect(refused).to.deep.equal([]);
  });

  it('leads an old address without a context to the same page in a context that has it, keeping the query', async () => {
    await page.goto(`${dashboard.apiUrl}/dashboard/partner/clients`);
    await page.waitForURL((url) => url.pathname === p('/partner/clients'));
    await page.getByRole('heading', { level: 1, name: 'Clients' }).waitFor();
    await page.goto(`${dashboard.apiUrl}/dashboard/links?search=nothing-like-this`);
    await page.waitForURL((url) => url.pathname === w('/links') && url.searchParams.get('search') === 'nothing-like-this');
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
  });

  it('says so when the address names a workspace the person is not a member of', async () => {
    await page.goto(`${dashboard.apiUrl}/dashboard/w/ws_not_mine/links`);
    await page.getByRole('heading', { level: 1, name: 'No access to this workspace' }).waitFor();
    expect(refused).to.deep.equal([]);
  });

  it('loads the sign-in page without a single failed request or console error, with its favicon', async () => {
    const context = await dashboard.browser.browser.newContext();
    const fresh = await context.newPage();
    const failed: string[] = [];
    const console: string[] = [];
    fresh.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    fresh.on('console', (message) => {
      if (message.type() === 'error') console.push(message.text());
    });
    await fresh.goto(`${dashboard.apiUrl}/dashboard/sign-in`);
    await fresh.locator('form[data-ready] button[type=submit]:enabled').waitFor();
    await fresh.waitForLoadState('networkidle');
    expect(failed).to.deep.equal([]);
    expect(console).to.deep.equal([]);
    const icon = await fresh.locator('link[rel=icon]').getAttribute('href');
    const answer = await context.request.get(`${dashboard.apiUrl}${icon}`);
    expect(answer.status()).to.equal(200);
    expect(answer.headers()['content-type']).to.equal('image/svg+xml');
    expect((await context.request.get(`${dashboard.apiUrl}/dashboard/favicon.ico`)).status()).to.equal(404);
    // Signed in already: the sign-in page leads on, without a 401 either.
    await fresh.getByLabel('E-mail', { exact: true }).fill(dashboard.user.email);
    await fresh.getByLabel('Password', { exact: true }).fill(dashboard.user.password);
    await fresh.getByRole('button', { name: 'Sign in', exact: true }).click();
    await fresh.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    await fresh.goto(`${dashboard.apiUrl}/dashboard/sign-in?next=${encodeURIComponent('/dashboard/keys')}`);
    await fresh.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    expect(failed).to.deep.equal([]);
    await context.close();
  });

  it('rings the heading a screen focuses for keyboard users only', async () => {
    const outline = () => page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle + ":" + document.activeElement.tagName');
    await page.goto(`${dashboard.apiUrl}${w('/links')}`);
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains' }).click();
    await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor();
    expect(await outline(), 'after a click').to.equal('none:H1');
    const keys = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' });
    await tabTo(page, keys);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    expect(await outline(), 'after the keyboard').to.equal('solid:H1');
  });
});
