// The Conversions, Alerts and Abuse reports screens and the workspace's name, notice address and UTM templates, in
// real Chromium against real api, redirect and worker processes: a conversion reported for a real visit shows with
// its revenue, an alert rule made in the form and a firing acknowledged, a report filed through the public endpoint
// resolved by blocking the link (which then answers 410 on the redirect); axe-core (moderate and worse) and a
// 375 px pass on each screen and open dialog.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { axeOn, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { callApi, type Reply } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';

const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/** axe-core with moderate findings counted, and no sideways scrolling at phone width, on the page as it is. */
export async function strictAudit(page: Page, label: string): Promise<void> {
  await page.waitForFunction(`!document.querySelector('[aria-busy="true"]')`);
  expect(await axeOn(page, 'moderate'), `axe on ${label}`).to.deep.equal([]);
  await page.setViewportSize({ width: 375, height: 812 });
  expect(await horizontalOverflow(page), `sideways overflow at 375 px on ${label}`).to.equal(0);
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe('Dashboard: conversions, alerts, abuse reports and workspace settings', function () {
  this.timeout(360_000);

  let dash: Dashboard;
  let key: string;
  let page: Page;
  let link: { id: string; slug: string; short_url: string };
  const v1 = (method: string, path: string, body?: unknown): Promise<Reply> => callApi(dash.apiUrl, method, path, { key, body });

  before(async function () {
    if (chromiumMissing()) this.skip();
    dash = await startDashboard({ redirect: true, worker: true });
    key = (await dash.tenants.aWorkspaceKey(dash.workspaceId)).key;
    expect((await v1('PATCH', '/workspace', { conversion_tracking: true })).status).to.equal(200);
    const created = await v1('POST', '/links', { url: 'https://shop.example.com/landing', slug: 'shop' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    link = created.body as typeof link;
    const context = await dash.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signInThroughForm(page, dash.apiUrl, dash.user);
  });

  after(async () => {
    await dash?.stop();
  });

  it('lists a conversion reported for a real visit, with its revenue in total and for its link', async () => {
    const visit = await fetch(link.short_url, { redirect: 'manual', headers: { 'User-Agent': DESKTOP } });
    expect(visit.status, dash.output()).to.equal(302);
    const clickId = new URL(visit.headers.get('location')!).searchParams.get('lp_click_id');
    expect(clickId, 'lp_click_id on the destination').to.be.a('string');
    const reported = await v1('POST', '/conversions', { click_id: clickId, type: 'order', amount: 4999, currency: 'EUR', external_id: 'order-1001' });
    expect(reported.status, JSON.stringify(reported.body)).to.equal(201);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Conversions' }).click();
    await page.getByRole('heading', { level: 1, name: 'Conversions' }).waitFor();
    const row = page.getByRole('row', { name: /order-1001/ });
    await row.waitFor();
    const euros = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' }).format(49.99);
    expect(await row.textContent()).to.include('Order').and.to.include(euros).and.to.include(`${new URL(link.short_url).host}/shop`);
    // The 30-day totals come from the rollups the worker writes: once the API has them, the screen shows them.
    await until(async () => ((await v1('GET', '/analytics/summary?interval=30d')).body as { revenue: Record<string, number> }).revenue.EUR === 4999, 60_000, 'the revenue in the rollups');
    await page.reload();
    const totals = page.getByRole('region', { name: 'Last 30 days', exact: true });
    await totals.getByText(euros).waitFor();
    await page.getByRole('region', { name: 'Revenue per link, last 30 days' }).getByRole('row', { name: /shop/ }).getByText(euros).waitFor();
    await strictAudit(page, '/conversions');

    // Per link: choosing the link filters the list and the totals.
    await page.getByLabel('Link', { exact: true }).selectOption({ label: `${new URL(link.short_url).host}/shop` });
    await page.getByRole('heading', { name: 'Last 30 days, this link' }).waitFor();
    await page.getByRole('row', { name: /order-1001/ }).waitFor();
  });

  it('creates an alert rule in the form, pauses it, and acknowledges a firing', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('heading', { name: 'No alert rules yet' }).waitFor();
    await page.getByRole('button', { name: 'New alert rule' }).click();
    await strictAudit(page, 'the new alert rule form');
    await page.getByLabel('Name', { exact: true }).fill('Traffic spike');
    await page.getByLabel('Condition').selectOption({ label: 'Click spike' });
    await page.getByLabel('Threshold').fill('4');
    await page.getByLabel('Window (minutes)').fill('30');
    await page.getByLabel('E-mail these addresses').fill('ops@acme.example');
    await page.getByRole('button', { name: 'Create the alert rule' }).click();
    const ruleRow = page.getByRole('row', { name: /Traffic spike/ });
    await ruleRow.waitFor();
    let rules = (await v1('GET', '/alerts/rules')).body as { data: Array<{ id: string; name: string; type: string; threshold: number; window_minutes: number; enabled: boolean; channels: { emails: string[] } }> };
    expect(rules.data.map((r) => ({ name: r.name, type: r.type, threshold: r.threshold, window: r.window_minutes, emails: r.channels.emails }))).to.deep.equal([
      { name: 'Traffic spike', type: 'click_spike', threshold: 4, window: 30, emails: ['ops@acme.example'] },
    ]);

    await page.getByRole('button', { name: 'Pause Traffic spike' }).click();
    await page.getByRole('button', { name: 'Turn on Traffic spike' }).waitFor();
    rules = (await v1('GET', '/alerts/rules')).body as typeof rules;
    expect(rules.data[0]!.enabled).to.equal(false);

    // A firing as the worker's evaluator writes one (its evaluation is timed; this screen only reads and acknowledges).
    const started = new Date();
    await dash.tenants.client.db(dash.mongo.dbName).collection('alert_firings').insertOne({
      _id: 'alf_test000001', workspace_id: dash.workspaceId, rule_id: rules.data[0]!.id, rule_name: 'Traffic spike', type: 'click_spike', state: 'firing',
      value: 9, last_value: 9, threshold: 4, message: '36 clicks in 30 minutes, 9 times the usual', started_at: started, resolved_at: null, acknowledged_at: null, created_at: started,
    } as never);
    await page.reload();
    const firing = page.getByRole('row', { name: /9 times the usual/ });
    await firing.waitFor();
    await strictAudit(page, '/alerts');
    await firing.getByRole('button', { name: /^Acknowledge Traffic spike/ }).click();
    await firing.getByRole('button', { name: /^Acknowledge/ }).waitFor({ state: 'detached' });
    const stored = (await v1('GET', '/alerts/firings/alf_test000001')).body as { acknowledged_at: string | null };
    expect(stored.acknowledged_at).to.be.a('string');

    await page.getByRole('button', { name: 'Delete Traffic spike' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this alert rule?' });
    await dialog.waitFor();
    await strictAudit(page, 'the delete alert rule dialog');
    await dialog.getByRole('button', { name: 'Delete the rule' }).click();
    await page.getByRole('heading', { name: 'No alert rules yet' }).waitFor();
    expect(((await v1('GET', '/alerts/rules')).body as { data: unknown[] }).data).to.deep.equal([]);
  });

  it('resolves a filed abuse report by blocking the link, which then answers 410 on the redirect', async () => {
    const filed = await fetch(`${dash.apiUrl}/v1/public/reports`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ short_url: link.short_url, reason: 'phishing', details: 'Asks for my bank password', reporter_contact: 'victim@example.org' }),
    });
    expect(filed.status, await filed.clone().text()).to.equal(201);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Abuse reports' }).click();
    const card = page.getByRole('article', { name: /Phishing/ });
    await card.waitFor();
    expect(await card.textContent()).to.include('Asks for my bank password').and.to.include('victim@example.org').and.to.include('https://shop.example.com/landing');
    await strictAudit(page, '/reports');
    await card.getByRole('button', { name: /^Resolve the report/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Resolve the report' });
    await dialog.waitFor();
    await dialog.getByRole('radio', { name: /Block the link/ }).check();
    await dialog.getByLabel('Note (for your records)').fill('Confirmed phishing');
    await strictAudit(page, 'the resolve report dialog');
    await dialog.getByRole('button', { name: 'Block the link' }).click();
    await page.getByRole('heading', { name: 'Nothing to review' }).waitFor();
    const reports = (await v1('GET', '/reports')).body as { data: Array<{ status: string; resolution: { action: string; note: string } | null }> };
    expect(reports.data.map((r) => [r.status, r.resolution?.action, r.resolution?.note])).to.deep.equal([['resolved', 'disable', 'Confirmed phishing']]);
    // The redirect hears of the change over NATS; poll (bounded) until it answers with the notice.
    await until(async () => (await fetch(link.short_url, { redirect: 'manual', headers: { 'User-Agent': DESKTOP } })).status === 410, 15_000, 'the blocked link answering 410');
    await page.getByLabel('Show').selectOption({ label: 'Resolved' });
    await page.getByRole('article', { name: /Phishing/ }).getByText('Block the link on').waitFor();
  });

  it('renames the workspace, sets its notice address and deletes a saved UTM template', async () => {
    expect((await v1('PATCH', '/workspace', { utm_templates: [{ name: 'Newsletter', utm: { utm_source: 'newsletter', utm_medium: 'email' } }] })).status).to.equal(200);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workspace' }).click();
    await page.getByLabel('Workspace name').fill('Acme Europe');
    await page.getByLabel('Notice e-mail').fill('not an address');
    await page.getByRole('button', { name: 'Save name and notices' }).click();
    await page.locator('.field-error[role="alert"]').waitFor();
    await strictAudit(page, '/workspace with an error');
    await page.getByLabel('Notice e-mail').fill('ops@acme.example');
    await page.getByRole('button', { name: 'Save name and notices' }).click();
    await page.getByText('Workspace name and notice address saved.').waitFor();
    const profile = (await v1('GET', '/workspace')).body as { name: string; owner_email: string | null; utm_templates: unknown[] };
    expect(profile).to.include({ name: 'Acme Europe', owner_email: 'ops@acme.example' });
    await page.getByRole('region', { name: 'UTM templates' }).getByText('utm_source=newsletter').waitFor();
    await page.getByRole('button', { name: 'Delete the template Newsletter' }).click();
    await page.getByText('No saved templates.', { exact: false }).waitFor();
    expect(((await v1('GET', '/workspace')).body as { utm_templates: unknown[] }).utm_templates).to.deep.equal([]);
    await strictAudit(page, '/workspace');
  });
});
