// The dashboard shell in real Chromium against a real api process: sign-in through the form, the signed-in frame
// (navigation, workspace/partner switcher, sign-out), accessibility (axe-core), a phone-sized viewport, and the
// first-load figures (transferred JavaScript, time to interactive), printed rather than asserted.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { checkAccessibility, firstLoad, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';

describe('Dashboard shell', function () {
  this.timeout(400_000);
  let dashboard: Dashboard;

  before(async function () {
    if (chromiumMissing()) this.skip();
    dashboard = await startDashboard({ partner: true });
  });

  after(async () => {
    await dashboard?.stop();
  });

  async function freshPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
    const context = await dashboard.browser.browser.newContext({ viewport });
    return context.newPage();
  }

  it('signs in through the form and lands on the first screen of the workspace, with its navigation', async () => {
    const page = await freshPage();
    await signInThroughForm(page, dashboard.apiUrl, dashboard.user);
    expect(new URL(page.url()).pathname).to.equal(`/dashboard/w/${dashboard.workspaceId}/links`);
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const label of ['Links', 'Analytics', 'Domains', 'Keys', 'Webhooks', 'Workspace']) {
      expect(await nav.getByRole('link', { name: label, exact: true }).count(), label).to.equal(1);
    }
    expect(await nav.getByRole('link', { name: 'Links', exact: true }).getAttribute('aria-current')).to.equal('page');
    expect(await page.getByText('Olive Owner').isVisible()).to.equal(true);
    expect(await page.getByRole('link', { name: 'API reference', exact: true }).getAttribute('href'), 'the API reference, served by the api').to.equal('/docs');
    await page.context().close();
  });

  it('refuses a wrong password with one message next to the form and keeps the person on the sign-in page', async () => {
    const page = await freshPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/sign-in`);
    await page.getByLabel('E-mail', { exact: true }).fill(dashboard.user.email);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'do not match' });
    await alert.waitFor();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/sign-in');
    await page.context().close();
  });

  it('returns to the page asked for after signing in, and back to sign-in after signing out', async () => {
    const page = await freshPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/keys`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail', { exact: true }).fill(dashboard.user.email);
    await page.getByLabel('Password', { exact: true }).fill(dashboard.user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/w/${dashboard.workspaceId}/keys`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    // The session is gone on the server too: a reload does not bring the dashboard back.
    await page.goto(`${dashboard.apiUrl}/dashboard/links`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/sign-in');
    await page.context().close();
  });

  it('switches between the workspace and the partner, showing each one its own navigation', async () => {
    const page = await dashboard.signedInPage();
    const switcher = page.getByLabel('Workspace or partner in view');
    await switcher.selectOption({ value: dashboard.partnerId! });
    await page.waitForURL((url) => url.pathname === `/dashboard/p/${dashboard.partnerId}/partner`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Partner', exact: true }).waitFor();
    expect(await nav.getByRole('link', { name: 'Links', exact: true }).count()).to.equal(0);
    // Remembered for the next visit in this browser.
    await page.goto(`${dashboard.apiUrl}/dashboard/`);
    await page.waitForURL((url) => url.pathname === `/dashboard/p/${dashboard.partnerId}/partner`);
    await switcher.selectOption({ value: dashboard.workspaceId });
    await page.waitForURL((url) => url.pathname === `/dashboard/w/${dashboard.workspaceId}/links`);
    await page.context().close();
  });

  it('accepts an invitation on the accept page: the new account is made, signed in and a member of the workspace', async () => {
    // The owner invites through the session API (without SMTP the link comes back to the owner to pass on).
    const owner = await dashboard.signedInPage();
    const session = (await (await owner.request.get(`${dashboard.apiUrl}/auth/session`)).json()) as { csrf_token: string };
    const invited = await owner.request.post(`${dashboard.apiUrl}/auth/invites`, {
      data: { context: dashboard.workspaceId, email: 'newcomer@example.test', role: 'member' },
      headers: { 'X-CSRF-Token': session.csrf_token, Origin: dashboard.apiUrl },
    });
    expect(invited.status(), await invited.text()).to.equal(201);
    const { url } = (await invited.json()) as { url: string };
    await owner.context().close();

    const page = await freshPage();
    await page.goto(url);
    await page.getByRole('heading', { level: 1, name: 'Accept an invitation' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/accept-invite');
    await page.getByLabel('Your name').fill('Nina Newcomer');
    await page.getByLabel('Password').fill('a long passphrase for nina');
    await page.getByRole('button', { name: 'Join' }).click();
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    expect(await page.getByText('Nina Newcomer').isVisible()).to.equal(true);
    // The password chosen works for the next sign-in.
    const again = await freshPage();
    await signInThroughForm(again, dashboard.apiUrl, { email: 'newcomer@example.test', password: 'a long passphrase for nina' });
    await page.context().close();
    await again.context().close();
  });

  it('has no serious or critical axe-core violation on the sign-in and invitation pages', async () => {
    const violations = await checkAccessibility(dashboard, `${dashboard.apiUrl}/dashboard/sign-in`, null, async (page) => {
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    });
    expect(violations).to.deep.equal([]);
    const invite = await checkAccessibility(dashboard, `${dashboard.apiUrl}/dashboard/accept-invite?token=x`, null, async (page) => {
      await page.getByRole('button', { name: 'Join' }).waitFor();
    });
    expect(invite, 'accept-invite page').to.deep.equal([]);
  });

  it('fits a 375 px wide phone: no sideways scrolling, the navigation behind a Menu button', async () => {
    const page = await freshPage({ width: 375, height: 812 });
    await page.goto(`${dashboard.apiUrl}/dashboard/sign-in`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await horizontalOverflow(page), 'sign-in').to.equal(0);
    await signInThroughForm(page, dashboard.apiUrl, dashboard.user);
    expect(await horizontalOverflow(page), 'links').to.equal(0);
    const menu = page.getByRole('button', { name: 'Menu' });
    const links = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' });
    expect(await links.isVisible()).to.equal(false);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).to.equal('true');
    await links.click();
    await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    expect(await links.isVisible(), 'the menu closes after choosing').to.equal(false);
    await page.context().close();
  });

  it('moves focus to the heading of each screen it navigates to', async () => {
    const page = await dashboard.signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains' }).click();
    await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor();
    expect(await page.evaluate('document.activeElement.tagName + ":" + document.activeElement.textContent')).to.equal('H1:Domains');
    await page.context().close();
  });

  it('reports the first load: transferred JavaScript and time to interactive (printed, not asserted)', async () => {
    const signIn = await firstLoad(dashboard, null, `${dashboard.apiUrl}/dashboard/sign-in`, 'form[data-ready] button[type=submit]:enabled');
    const links = await firstLoad(dashboard, dashboard.user, `${dashboard.apiUrl}/dashboard/links`, 'h1:text("Links")');
    console.log(`      first load, sign-in page: ${(signIn.jsBytes / 1024).toFixed(1)} KB of JavaScript transferred (compressed) in ${signIn.jsFiles} files, ${(signIn.cssBytes / 1024).toFixed(1)} KB CSS; interactive after ${signIn.interactiveMs.toFixed(0)} ms`);
    console.log(`      first load, links (signed in): ${(links.jsBytes / 1024).toFixed(1)} KB of JavaScript transferred (compressed) in ${links.jsFiles} files; first screen after ${links.interactiveMs.toFixed(0)} ms`);
    console.log('      target: under 200 KB of compressed JavaScript on the first load');
    // Every screen is its own chunk: the sign-in page does not load the links screen, which loads on demand.
    expect(signIn.scripts.some((name) => name.startsWith('links.screen-')), signIn.scripts.join(' ')).to.equal(false);
    expect(links.scripts.some((name) => name.startsWith('links.screen-')), links.scripts.join(' ')).to.equal(true);
  });
});
