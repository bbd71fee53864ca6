// The Workspace, Members and Account screens in real Chromium against a real api: limits and usage as the API
// counts them, conversion tracking saved with the keyboard alone, workspace rules through the rule builder, IP list
// entries added and removed, a member invited by e-mail through a real SMTP server who joins with the mailed link
// and is removed again, sessions revoked and the password changed; axe-core and a 375 px pass on every screen.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { ScreenAudit, tabTo } from '../helpers/dashboard-audit.ts';
import { callApi } from '../helpers/http.ts';
import { Inbox } from '../helpers/smtp.ts';

describe('Dashboard: workspace, members and account', function () {
  this.timeout(120_000);

  let dash: Dashboard;
  let inbox: Inbox;
  let key: string;
  let page: Page;
  const v1 = (method: string, path: string, body?: unknown) => callApi(dash.apiUrl, method, path, { key, body });

  before(async function () {
    if (chromiumMissing()) this.skip();
    inbox = await new Inbox().start();
    dash = await startDashboard({ env: { SMTP_URL: inbox.url } });
    // Rules and IP lists need a plan with those capabilities (before the api has read the workspace).
    await dash.tenants.workspaces.collection.updateOne({ _id: dash.workspaceId }, { $set: { plan_id: 'business' } });
    key = (await dash.tenants.aWorkspaceKey(dash.workspaceId)).key;
    for (const slug of ['one', 'two', 'three']) {
      expect((await v1('POST', '/links', { url: `https://example.com/${slug}`, slug })).status).to.equal(201);
    }
    page = await dash.signedInPage();
  });

  after(async () => {
    await dash?.stop();
    await inbox?.stop();
  });

  it('shows the plan limits and the usage the API counts', async () => {
    const profile = (await v1('GET', '/workspace')).body as { plan: { name: string; limits: { links: number; domains: number } }; usage: { links: number } };
    expect(profile.usage.links).to.equal(3);
    await page.goto(`${dash.apiUrl}/dashboard/workspace`);
    const usage = page.getByRole('region', { name: 'Limits and usage' });
    await usage.waitFor();
    const number = new Intl.NumberFormat('en-US');
    const links = page.getByRole('progressbar', { name: /^Links:/ });
    expect(await links.getAttribute('value')).to.equal('3');
    expect(await links.getAttribute('max')).to.equal(String(profile.plan.limits.links));
    expect(await usage.textContent()).to.include(`Links: 3 of ${number.format(profile.plan.limits.links)}`);
    expect(await usage.textContent()).to.include(`Custom domains: 0 of ${number.format(profile.plan.limits.domains)}`);
    expect(await page.locator('dl.facts').textContent()).to.include(profile.plan.name);
  });

  it('saves conversion tracking with the keyboard alone', async () => {
    const tracking = page.getByRole('switch', { name: /Append a signed click id/ });
    await tabTo(page, tracking);
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('14');
    await page.keyboard.press('Enter');
    await page.getByText('Conversion tracking saved.').waitFor();
    const profile = (await v1('GET', '/workspace')).body as { conversion_tracking: boolean; attribution_window_days: number };
    expect(profile).to.include({ conversion_tracking: true, attribution_window_days: 14 });
  });

  it('adds and removes IP list entries', async () => {
    await page.getByRole('navigation', { name: 'Workspace settings' }).getByRole('link', { name: 'IP lists' }).click();
    await page.getByRole('heading', { name: 'No IP lists yet' }).waitFor();
    await page.getByText('New IP list').click();
    await page.getByLabel('Name', { exact: true }).fill('Office');
    await page.getByLabel('Addresses and ranges').fill('203.0.113.7');
    await page.getByRole('button', { name: 'Create IP list' }).click();
    await page.getByRole('heading', { level: 2, name: 'Office' }).waitFor();

    await page.getByLabel('Add an address or range to Office').fill('198.51.100.0/24');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('listitem').filter({ hasText: '198.51.100.0/24' }).waitFor();
    let lists = (await v1('GET', '/ip-lists')).body as { data: Array<{ name: string; entries: string[] }> };
    expect(lists.data.map((l) => [l.name, l.entries])).to.deep.equal([['Office', ['203.0.113.7', '198.51.100.0/24']]]);

    // A bad entry is refused by the API and the reason is shown next to the field.
    await page.getByLabel('Add an address or range to Office').fill('not-an-address');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('.field-error[role="alert"]').waitFor();

    await page.getByRole('button', { name: 'Remove 203.0.113.7 from Office' }).click();
    await page.getByRole('button', { name: 'Remove 203.0.113.7 from Office' }).waitFor({ state: 'detached' });
    lists = (await v1('GET', '/ip-lists')).body as { data: Array<{ name: string; entries: string[] }> };
    expect(lists.data[0]!.entries).to.deep.equal(['198.51.100.0/24']);
  });

  it('saves workspace rules made with the rule builder', async () => {
    await page.getByRole('navigation', { name: 'Workspace settings' }).getByRole('link', { name: 'Workspace rules' }).click();
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await page.getByLabel('Redirect URL of Rule 1').fill('https://example.com/elsewhere');
    await page.getByRole('button', { name: 'Save workspace rules' }).click();
    await page.getByText('Workspace rules saved.').waitFor();
    const profile = (await v1('GET', '/workspace')).body as { rules: Array<{ id: string; action: { type: string; url?: string } }> };
    expect(profile.rules).to.have.length(1);
    expect(profile.rules[0]!.action).to.deep.equal({ type: 'redirect', url: 'https://example.com/elsewhere' });
    // Reloaded, the builder shows the stored rule.
    await page.reload();
    expect(await page.getByLabel('Redirect URL of Rule 1').inputValue()).to.equal('https://example.com/elsewhere');
  });

  it('invites a member by e-mail; the mailed link lets them join; the owner removes them', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    const members = page.getByRole('region', { name: 'Current members' });
    await members.waitFor();
    expect(await members.textContent()).to.include('owner@example.test');
    await page.getByLabel('E-mail address').fill('newbie@example.test');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByRole('region', { name: 'Open invitations' }).getByText('newbie@example.test').waitFor();

    const [link] = await inbox.waitFor('newbie@example.test', /https?:\/\/[^\s"<>]+\/auth\/invites\/[A-Za-z0-9_-]+/);
    const newcomer = await (await dash.browser.browser.newContext()).newPage();
    await newcomer.goto(link);
    await newcomer.getByLabel('Your name').fill('Newbie');
    await newcomer.getByLabel('Password').fill('a long enough passphrase 42');
    await newcomer.getByRole('button', { name: 'Join' }).click();
    await newcomer.getByRole('navigation', { name: 'Main' }).waitFor();
    await newcomer.context().close();

    await page.reload();
    const row = page.getByRole('region', { name: 'Current members' }).getByRole('row', { name: /newbie@example\.test/ });
    await row.waitFor();
    expect(await row.textContent()).to.include('Member');
    expect(await page.getByRole('region', { name: 'Open invitations' }).count()).to.equal(0);
    await page.getByRole('button', { name: 'Remove newbie@example.test' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove member' }).click();
    await row.waitFor({ state: 'detached' });
  });

  it('lists the sessions, signs another one out, and changes the password', async () => {
    const sam = await dash.createUser('sam@example.test', { workspaceId: dash.workspaceId, role: 'member' });
    const laptop = await dash.signedInPage(sam);
    const phone = await dash.signedInPage(sam);
    await laptop.goto(`${dash.apiUrl}/dashboard/account`);
    const sessions = laptop.getByRole('region', { name: 'Your sessions' });
    await sessions.getByRole('row').nth(2).waitFor();
    expect(await sessions.getByRole('row').count()).to.equal(3); // heading row and two sessions
    expect(await sessions.getByText('This browser').count()).to.equal(1);
    await sessions.getByRole('button', { name: /^Sign out the session/ }).click();
    await sessions.getByRole('row').nth(2).waitFor({ state: 'detached' });
    // The signed-out browser is sent to the sign-in page at its next call.
    await phone.goto(`${dash.apiUrl}/dashboard/workspace`);
    await phone.waitForURL(/\/dashboard\/sign-in/);

    await laptop.getByLabel('Current password').fill('wrong password');
    await laptop.getByLabel('New password', { exact: true }).fill('a brand new passphrase 7');
    await laptop.getByLabel('New password again').fill('a brand new passphrase 7');
    await laptop.getByRole('button', { name: 'Change password' }).click();
    await laptop.locator('.field-error[role="alert"]').filter({ hasText: 'is not correct' }).waitFor();
    await laptop.getByLabel('Current password').fill(sam.password);
    await laptop.getByRole('button', { name: 'Change password' }).click();
    await laptop.getByText('Password changed.', { exact: false }).waitFor();
    const answer = await fetch(`${dash.apiUrl}/auth/sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: dash.apiUrl },
      body: JSON.stringify({ email: sam.email, password: 'a brand new passphrase 7' }),
    });
    expect(answer.status).to.equal(200);
    await laptop.context().close();
    await phone.context().close();
  });

  it('passes axe-core and fits a 375 px phone on every screen', async () => {
    const audit = await ScreenAudit.open(dash);
    try {
      await audit.check('/workspace', (p) => p.getByRole('region', { name: 'Limits and usage' }));
      await audit.check('/workspace/rules', (p) => p.getByLabel('Redirect URL of Rule 1'));
      await audit.check('/workspace/ip-lists', (p) => p.getByRole('heading', { name: 'Office' }));
      await audit.page.getByText('New IP list').click();
      await audit.checkHere('/workspace/ip-lists with the new list form open');
      await audit.check('/members', (p) => p.getByRole('region', { name: 'Current members' }));
      await audit.check('/account', (p) => p.getByRole('region', { name: 'Your sessions' }));
    } finally {
      await audit.close();
    }
  });
});
