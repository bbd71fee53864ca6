// "Forgot your password?" in real Chromium with a real SMTP server: the sign-in page's link, the request form that
// answers the same for any address, the e-mailed link (opening it uses nothing), the reset page that sets the new
// password once and signs in, every other session of the account ended; and the sign-in lockout's "try again at".
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { checkAccessibility } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { Inbox } from '../helpers/smtp.ts';
import { until } from '../helpers/wait.ts';

describe('Dashboard password reset', function () {
  this.timeout(120_000);
  let dashboard: Dashboard;
  let inbox: Inbox;
  const RESET = /(http:\/\/[^\s]+\/auth\/password\/reset\/([A-Za-z0-9_-]{43}))/;

  before(async function () {
    if (chromiumMissing()) this.skip();
    inbox = await new Inbox().start();
    dashboard = await startDashboard({ env: { SMTP_URL: inbox.url, MAIL_FROM: 'Linkplane <no-reply@linkplane.test>', SIGN_IN_MAX_ATTEMPTS: '2' } });
  });

  after(async () => {
    await dashboard?.stop();
    await inbox?.stop();
  });

  async function freshPage(): Promise<Page> {
    const context = await dashboard.browser.browser.newContext({ viewport: { width: 1280, height: 900 } });
    return context.newPage();
  }

  it('resets a forgotten password from the sign-in page through the e-mailed link, and signs out the other sessions', async () => {
    const account = await dashboard.createUser('forgetful@example.test', { password: 'the-old-password-1', role: 'member', workspaceId: dashboard.workspaceId });
    // A session opened before the reset, elsewhere.
    const elsewhere = await freshPage();
    await signInThroughForm(elsewhere, dashboard.apiUrl, account);

    const page = await freshPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/sign-in`);
    await page.getByLabel('E-mail', { exact: true }).fill(account.email);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor();
    expect(await page.getByLabel('E-mail', { exact: true }).inputValue(), 'the address typed on the sign-in page comes along').to.equal(account.email);
    await page.getByRole('button', { name: 'Send the reset link' }).click();
    await page.getByRole('status').filter({ hasText: 'an e-mail with a link to choose a new password is on its way' }).waitFor();
    const [, url] = await inbox.waitFor(account.email, RESET);

    // A mail scanner opens the link first: that uses nothing.
    expect((await fetch(url!, { redirect: 'follow' })).status).to.equal(200);

    await page.goto(url!);
    await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor();
    await page.getByText(`A new password for ${account.email}`).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/reset-password');
    expect(new URL(page.url()).search, 'the token leaves the address bar once read').to.equal('');
    // Too short: the page says so, and the link still works.
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByText('must be at least 10 characters').waitFor();
    await page.getByLabel('New password', { exact: true }).fill('a-brand-new-password');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.locator('main#main h1').filter({ hasText: 'Links' }).waitFor();
    expect((await page.context().cookies()).map((c) => c.name)).to.include('lp_session');

    // The session from before is over: its next screen asks to sign in.
    await elsewhere.reload();
    await until(() => new URL(elsewhere.url()).pathname === '/dashboard/sign-in', 20_000, 'the other session sent to sign-in');
    // The old password fails, the new one works.
    await signInThroughForm(elsewhere, dashboard.apiUrl, { email: account.email, password: 'a-brand-new-password' });

    // The link is used: opening it again leads to the sign-in page, which says so.
    const again = await freshPage();
    await again.goto(url!);
    await again.getByRole('alert').filter({ hasText: 'password reset link has expired or was already used' }).waitFor();
    expect(new URL(again.url()).pathname).to.equal('/dashboard/sign-in');
    for (const p of [page, elsewhere, again]) await p.context().close();
  });

  it('has no serious accessibility findings on the request page and on the reset page', async () => {
    for (const path of ['/dashboard/forgot-password', '/dashboard/reset-password?token=unknown&email=someone%40example.test']) {
      const violations = await checkAccessibility(dashboard, `${dashboard.apiUrl}${path}`, null, async (page) => {
        await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor();
      });
      expect(violations, path).to.deep.equal([]);
    }
  });

  it('tells the person locked out by wrong passwords when to try again, in their own clock', async () => {
    const account = await dashboard.createUser('unlucky@example.test', { password: 'the-right-password-2', role: 'member', workspaceId: dashboard.workspaceId });
    const page = await freshPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/sign-in`);
    await page.getByLabel('E-mail', { exact: true }).fill(account.email);
    for (let i = 0; i < 2; i++) {
      await page.getByLabel('Password', { exact: true }).fill(`wrong-password-${i}`);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'do not match an account' }).waitFor();
    }
    await page.getByLabel('Password', { exact: true }).fill(account.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Too many sign-in attempts' });
    await alert.waitFor();
    const text = (await alert.textContent())!.trim();
    const match = /^Too many sign-in attempts for this account from this address\. Try again at (\d\d):(\d\d)\.$/.exec(text);
    expect(match, text).to.not.equal(null);
    // The window is 15 minutes: the time shown is within it, in the browser's clock (the test's, here).
    const shown = new Date();
    shown.setHours(Number(match![1]), Number(match![2]), 0, 0);
    if (shown.getTime() < Date.now() - 60_000) shown.setDate(shown.getDate() + 1);
    expect(shown.getTime() - Date.now()).to.be.within(0, 16 * 60_000);
    await page.context().close();
  });
});
