// The links the dashboard e-mails (sign-in, invitation) in real Chromium, with a real SMTP server: opening a link
// uses nothing (mail scanners open links before the person does), the page's button uses it once, the token leaves
// the address bar and never goes to another origin, and a used sign-in link says so and offers a new one.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { checkAccessibility } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { Inbox } from '../helpers/smtp.ts';
import { until } from '../helpers/wait.ts';

describe('Dashboard links in e-mails', function () {
  this.timeout(120_000);
  let dashboard: Dashboard;
  let inbox: Inbox;
  const LINK = /(http:\/\/[^\s]+\/auth\/sign-in\/link\/([A-Za-z0-9_-]{43}))/;

  before(async function () {
    if (chromiumMissing()) this.skip();
    inbox = await new Inbox().start();
    dashboard = await startDashboard({ env: { SMTP_URL: inbox.url, MAIL_FROM: 'Linkplane <no-reply@linkplane.test>' } });
  });

  after(async () => {
    await dashboard?.stop();
    await inbox?.stop();
  });

  /** A fresh page, and every URL it requested. */
  async function freshPage(): Promise<{ page: Page; requested: string[] }> {
    const context = await dashboard.browser.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    return { page, requested };
  }

  it('asks for a link from the keyboard; a scanner opening it first uses nothing; the button signs in', async () => {
    const { page, requested } = await freshPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/sign-in`);
    await page.getByText('E-mail me a sign-in link instead').click();
    await page.getByLabel('E-mail for the link').focus();
    await page.keyboard.type(dashboard.user.email);
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'a sign-in link is on its way' }).waitFor();
    const [, url] = await inbox.waitFor(dashboard.user.email, LINK);

    // The scanner: follows the link (and its redirect) without a cookie jar of the person's.
    const scanned = await fetch(url!, { redirect: 'follow' });
    expect(scanned.status).to.equal(200);

    await page.goto(url!);
    const button = page.getByRole('button', { name: `Sign in as ${dashboard.user.email}` });
    await button.waitFor();
    const shown = new URL(page.url());
    expect(shown.pathname).to.equal('/dashboard/sign-in/link');
    expect(shown.search, 'the token leaves the address bar once read').to.equal('');
    await button.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    expect((await page.context().cookies()).map((c) => c.name)).to.include('lp_session');
    const origins = new Set(requested.map((u) => new URL(u).origin));
    expect([...origins], 'no request leaves our own origin').to.deep.equal([dashboard.apiUrl]);
    await page.context().close();
  });

  it('says a used link is used, and offers a new one with the address filled in', async () => {
    const { page: asker } = await freshPage();
    await asker.goto(`${dashboard.apiUrl}/dashboard/sign-in`);
    const before = inbox.to(dashboard.user.email).length;
    await asker.getByText('E-mail me a sign-in link instead').click();
    await asker.getByLabel('E-mail for the link').fill(dashboard.user.email);
    await asker.getByRole('button', { name: 'Send the link' }).click();
    await asker.getByRole('status').filter({ hasText: 'a sign-in link is on its way' }).waitFor();
    await asker.context().close();
    await until(() => inbox.to(dashboard.user.email).length > before, 10_000, 'the second sign-in mail');
    const [, url] = LINK.exec(inbox.to(dashboard.user.email)[before]!.raw)!;

    // Two tabs open the same link; the first to press the button signs in, the second is told the link is used.
    const { page: first } = await freshPage();
    const { page: second } = await freshPage();
    for (const page of [first, second]) {
      await page.goto(url!);
      await page.getByRole('button', { name: `Sign in as ${dashboard.user.email}` }).waitFor();
    }
    await first.getByRole('button', { name: `Sign in as ${dashboard.user.email}` }).click();
    await first.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    await second.getByRole('button', { name: `Sign in as ${dashboard.user.email}` }).click();
    await second.getByRole('alert').filter({ hasText: 'expired or was already used' }).waitFor();
    expect(await second.getByLabel('E-mail for the link').inputValue()).to.equal(dashboard.user.email);
    expect((await second.context().cookies()).map((c) => c.name)).not.to.include('lp_session');
    // Following a used link leads to the sign-in page, which says why.
    await second.goto(url!);
    await second.getByRole('alert').filter({ hasText: 'expired or was already used' }).waitFor();
    expect(new URL(second.url()).pathname).to.equal('/dashboard/sign-in');
    await first.context().close();
    await second.context().close();
  });

  it('joins a workspace through an invitation only by the accept page’s button when signed in as the invited address', async () => {
    const invited = await dashboard.createUser('invited@example.test', { name: 'Ivy Invited' });
    const { page: owner } = await freshPage();
    await signInThroughForm(owner, dashboard.apiUrl, dashboard.user);
    const session = (await (await owner.request.get(`${dashboard.apiUrl}/auth/session`)).json()) as { csrf_token: string };
    const sent = await owner.request.post(`${dashboard.apiUrl}/auth/invites`, {
      data: { context: dashboard.workspaceId, email: invited.email, role: 'member' },
      headers: { 'X-CSRF-Token': session.csrf_token, Origin: dashboard.apiUrl },
    });
    expect(sent.status(), await sent.text()).to.equal(201);
    await owner.context().close();
    const [url] = await inbox.waitFor(invited.email, /http:\/\/[^\s]+\/auth\/invites\/[A-Za-z0-9_-]{43}/);

    const { page, requested } = await freshPage();
    await signInThroughForm(page, dashboard.apiUrl, invited);
    await page.goto(url);
    const button = page.getByRole('button', { name: `Join as ${invited.email}` });
    await button.waitFor();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/accept-invite');
    expect(new URL(page.url()).search, 'the token leaves the address bar once read').to.equal('');
    const before = (await (await page.request.get(`${dashboard.apiUrl}/auth/session`)).json()) as { memberships: unknown[] };
    expect(before.memberships, 'opening the link joined nothing').to.deep.equal([]);
    await button.click();
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    const after = (await (await page.request.get(`${dashboard.apiUrl}/auth/session`)).json()) as { memberships: Array<{ id: string; role: string }> };
    expect(after.memberships.map((m) => [m.id, m.role])).to.deep.equal([[dashboard.workspaceId, 'member']]);
    expect([...new Set(requested.map((u) => new URL(u).origin))], 'no request leaves our own origin').to.deep.equal([dashboard.apiUrl]);
    await page.context().close();
  });

  it('has no serious or critical axe-core violation on the link page, before and after a refused link', async () => {
    const url = `${dashboard.apiUrl}/dashboard/sign-in/link?token=${'A'.repeat(43)}&email=someone%40example.test`;
    const ready = await checkAccessibility(dashboard, url, null, async (page) => {
      await page.getByRole('button', { name: 'Sign in as someone@example.test' }).waitFor();
    });
    expect(ready).to.deep.equal([]);
    const refused = await checkAccessibility(dashboard, url, null, async (page) => {
      await page.getByRole('button', { name: 'Sign in as someone@example.test' }).click();
      await page.getByRole('alert').filter({ hasText: 'expired or was already used' }).waitFor();
    });
    expect(refused).to.deep.equal([]);
  });
});
