// The Partner screens in real Chromium against a real api, signed in as the owner of a partner whose client is the
// workspace the owner also belongs to: a plan created in the UI, a client created with the keyboard alone on it,
// suspended and reactivated, a payment recorded and partly refunded (figures checked against the API), switching
// into a client workspace the person is a member of; axe-core and a 375 px pass on every partner screen.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { ScreenAudit, tabTo } from '../helpers/dashboard-audit.ts';
import { axeOn } from '../helpers/dashboard-checks.ts';
import { callApi } from '../helpers/http.ts';

interface ApiPlan {
  id: string;
  name: string;
  status: string;
  price: { amount: number; currency: string; interval: string };
  capabilities: string[];
}

describe('Dashboard: partner', function () {
  this.timeout(360_000);

  let dash: Dashboard;
  let key: string;
  let page: Page;
  const v1 = (method: string, path: string, body?: unknown) => callApi(dash.apiUrl, method, path, { key, body });

  before(async function () {
    if (chromiumMissing()) this.skip();
    // The worker computes payouts of closed months; its billing sweep runs often here.
    dash = await startDashboard({ partner: true, worker: true, env: { BILLING_SWEEP_INTERVAL_MS: '200' } });
    key = (await dash.tenants.aPartnerKey(dash.partnerId!)).key;
    page = await dash.signedInPage();
    await page.getByLabel('Workspace or partner in view').selectOption(dash.partnerId);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Partner' }).click();
    await page.getByRole('heading', { level: 1, name: 'Partner' }).waitFor();
  });

  after(async () => {
    await dash?.stop();
  });

  it('shows the partner profile with its client quota', async () => {
    const profile = (await v1('GET', '/partner')).body as { name: string; clients: { count: number; quota: number }; billing: { stripe_ingestion_url: string } };
    await page.getByRole('heading', { level: 2, name: profile.name }).waitFor();
    const quota = page.getByRole('progressbar', { name: /^Clients:/ });
    expect(await quota.getAttribute('value')).to.equal(String(profile.clients.count));
    expect(await quota.getAttribute('max')).to.equal(String(Math.max(profile.clients.quota, 1)));
    expect(await page.locator('dl.facts').textContent()).to.include(profile.billing.stripe_ingestion_url);
  });

  it('creates a plan', async () => {
    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Plans' }).click();
    await page.getByRole('heading', { name: 'No plans yet' }).waitFor();
    await page.getByRole('button', { name: 'New plan' }).click();
    await page.getByLabel('Plan name').fill('Starter');
    await page.getByLabel('Price').fill('19.999');
    await page.getByRole('button', { name: 'Create plan' }).click();
    // Three decimals in euros is refused before anything is sent.
    await page.getByText('An amount with at most 2 decimals').waitFor();
    await page.getByLabel('Price').fill('19.99');
    await page.getByLabel('Links', { exact: true }).fill('500');
    await page.getByRole('checkbox', { name: 'webhooks' }).check();
    await page.getByRole('button', { name: 'Create plan' }).click();
    const row = page.getByRole('row', { name: /Starter/ });
    await row.waitFor();
    expect(await row.textContent()).to.include('Active').and.to.include('€19.99 per month').and.to.include('500 links');
    const plans = (await v1('GET', '/partner/plans')).body as { data: ApiPlan[] };
    expect(plans.data.map((p) => ({ name: p.name, price: p.price, capabilities: p.capabilities }))).to.deep.equal([
      { name: 'Starter', price: { amount: 1999, currency: 'EUR', interval: 'month' }, capabilities: ['webhooks'] },
    ]);
  });

  it('creates a client on the plan with the keyboard alone, suspends and reactivates it', async () => {
    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Clients' }).click();
    await page.getByRole('heading', { level: 1, name: 'Clients' }).waitFor();
    await tabTo(page, page.getByRole('button', { name: 'New client' }));
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByLabel('Client name'));
    await page.keyboard.type('Globex');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown'); // from "No plan" to Starter
    await tabTo(page, page.getByRole('button', { name: 'Create client' }));
    await page.keyboard.press('Enter');
    const row = page.getByRole('row', { name: /Globex/ });
    await row.waitFor();
    expect(await row.textContent()).to.include('Pending').and.to.include('Starter');
    const plans = (await v1('GET', '/partner/plans')).body as { data: ApiPlan[] };
    const clients = (await v1('GET', '/partner/clients')).body as { data: Array<{ id: string; name: string; plan: string | null; status: string }> };
    const globex = clients.data.find((c) => c.name === 'Globex');
    expect(globex).to.include({ plan: plans.data[0]!.id, status: 'pending' });

    await page.getByRole('button', { name: 'Suspend Globex' }).click();
    await page.getByRole('dialog', { name: 'Suspend Globex?' }).getByRole('button', { name: 'Suspend client' }).click();
    await row.getByText('Suspended (manual)').waitFor();
    expect(((await v1('GET', `/partner/clients/${globex!.id}`)).body as { status: string }).status).to.equal('suspended');
    await page.getByRole('button', { name: 'Reactivate Globex' }).click();
    await page.getByRole('dialog', { name: 'Reactivate Globex?' }).getByRole('button', { name: 'Reactivate client' }).click();
    await row.getByText('Subscribed').waitFor();
    expect(((await v1('GET', `/partner/clients/${globex!.id}`)).body as { status: string }).status).to.equal('subscribed');
  });

  it('records a payment and refunds part of it', async () => {
    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Payments' }).click();
    await page.getByRole('button', { name: 'Record a payment' }).click();
    await page.getByLabel('Client', { exact: true }).selectOption({ label: 'Globex' });
    await page.getByLabel('Amount paid').fill('49.00');
    await page.getByLabel('Reference (optional)').fill('bank-4711');
    await page.getByRole('button', { name: 'Record payment' }).click();
    const row = page.getByRole('row', { name: /Globex/ });
    await row.waitFor();
    const payments = (await v1('GET', '/partner/payments')).body as { data: Array<{ id: string; gross: number; platform_fee: number; partner_share: number; refunded: number }> };
    expect(payments.data).to.have.length(1);
    const payment = payments.data[0]!;
    expect(payment.gross).to.equal(4900);
    const euros = (minor: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' }).format(minor / 100);
    expect(await row.textContent()).to.include(euros(4900)).and.to.include(euros(payment.platform_fee)).and.to.include(euros(payment.partner_share));

    await page.getByRole('button', { name: /^Refund the payment of Globex/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Refund a payment' });
    await dialog.getByLabel('Amount to refund (EUR)').fill('10');
    await dialog.getByRole('button', { name: 'Record refund' }).click();
    await row.getByText('Partly refunded').waitFor();
    const after = (await v1('GET', `/partner/payments/${payment.id}`)).body as { refunded: number; status: string };
    expect(after).to.include({ refunded: 1000, status: 'partially_refunded' });
    expect(await row.textContent()).to.include(euros(1000));
  });

  it('records a payment of last month; its payout, computed once the month closed, is marked paid', async () => {
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
    const period = lastMonth.toISOString().slice(0, 7);
    await page.getByRole('button', { name: 'Record a payment' }).click();
    await page.getByLabel('Client', { exact: true }).selectOption({ label: 'Globex' });
    await page.getByLabel('Amount paid').fill('120');
    await page.getByLabel('Paid on (optional)').fill(lastMonth.toISOString().slice(0, 10));
    await page.getByRole('button', { name: 'Record payment' }).click();
    await page.getByRole('region', { name: `Payments in ${period}` }).getByRole('row', { name: /Globex/ }).waitFor();

    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Payouts' }).click();
    const payouts = page.getByRole('region', { name: `Payouts for ${period}` });
    // The worker's sweep computes it shortly; the page shows it once it exists.
    for (let tries = 0; !(await payouts.isVisible()) && tries < 60; tries++) {
      await page.waitForTimeout(500);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    }
    const row = payouts.getByRole('row', { name: /EUR/ });
    const payout = ((await v1('GET', `/partner/payouts?period=${period}`)).body as { data: Array<{ id: string; amount: number; status: string }> }).data[0]!;
    expect(payout.status).to.equal('pending');
    const euros = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' }).format(payout.amount / 100);
    expect(await row.textContent()).to.include('Pending').and.to.include(euros);
    await page.getByRole('button', { name: 'Mark the EUR payout paid' }).click();
    const dialog = page.getByRole('dialog', { name: 'Mark the EUR payout paid' });
    await dialog.getByLabel('Transfer reference').fill('sepa-2026-001');
    await dialog.getByRole('button', { name: 'Mark paid' }).click();
    await row.getByText(/Paid .*sepa-2026-001/).waitFor();
    expect(((await v1('GET', `/partner/payouts/${payout.id}`)).body)).to.include({ status: 'paid', reference: 'sepa-2026-001' });
  });

  it('passes axe-core and fits a 375 px phone on every partner screen', async () => {
    const audit = await ScreenAudit.open(dash);
    try {
      await audit.page.getByLabel('Workspace or partner in view').selectOption(dash.partnerId);
      await audit.check('/partner', (p) => p.getByRole('progressbar'));
      await audit.check('/partner/clients', (p) => p.getByRole('row', { name: /Globex/ }));
      await audit.page.getByRole('button', { name: 'New client' }).click();
      await audit.checkHere('/partner/clients with the new client form');
      await audit.check('/partner/plans', (p) => p.getByRole('row', { name: /Starter/ }));
      await audit.page.getByRole('button', { name: 'New plan' }).click();
      await audit.checkHere('/partner/plans with the new plan form');
      await audit.check('/partner/payments', (p) => p.getByRole('row', { name: /Globex/ }));
      await audit.check('/partner/payouts', (p) => p.getByRole('row', { name: /EUR/ }));
    } finally {
      await audit.close();
    }
  });

  it('leads the navigation with Partner, names capabilities, shows each client’s real plan and changes a plan', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link').first().textContent()).to.equal('Partner');
    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Clients' }).click();
    // Acme has no partner plan: it is on its workspace's platform plan (business in this setup), as its own page says.
    const acme = page.getByRole('row', { name: /Acme/ });
    await acme.waitFor();
    expect(await acme.textContent()).to.include('Business platform plan').and.not.include('Free');
    const acmeProfile = await callApi(dash.apiUrl, 'GET', '/workspace', { key: (await dash.tenants.aWorkspaceKey(dash.workspaceId)).key });
    expect((acmeProfile.body as { plan: { name: string } }).plan.name).to.equal('Business');

    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Plans' }).click();
    const starter = page.getByRole('row', { name: /Starter/ });
    await starter.waitFor();
    expect(await starter.textContent()).to.include('Webhooks').and.not.include('webhooks');
    await page.getByRole('button', { name: 'Edit Starter' }).click();
    const form = page.getByRole('form', { name: 'Change Starter' });
    await form.getByLabel('Price').fill('24.50');
    await form.getByRole('checkbox', { name: 'A/B tests' }).check();
    await form.getByRole('button', { name: 'Save plan' }).click();
    await starter.getByText('A/B tests and Webhooks').waitFor();
    const plans = (await v1('GET', '/partner/plans')).body as { data: ApiPlan[] };
    expect(plans.data.map((p) => ({ name: p.name, price: p.price, capabilities: [...p.capabilities].sort() }))).to.deep.equal([
      { name: 'Starter', price: { amount: 2450, currency: 'EUR', interval: 'month' }, capabilities: ['ab_test', 'webhooks'] },
    ]);
  });

  it('invites the owner of a new client and opens it, joining it as its owner', async () => {
    const audit = await ScreenAudit.open(dash);
    try {
      await audit.page.getByLabel('Workspace or partner in view').selectOption(dash.partnerId);
      await audit.page.goto(`${dash.apiUrl}/dashboard/partner/clients`);
      await audit.page.getByRole('button', { name: 'Invite owner of Globex' }).click();
      const dialog = audit.page.getByRole('dialog', { name: 'Invite the owner of Globex' });
      await dialog.waitFor();
      expect(await axeOn(audit.page, 'moderate'), 'axe on the invite dialog').to.deep.equal([]);
      await dialog.getByLabel("Owner's e-mail address").fill('boss@globex.example');
      await dialog.getByRole('button', { name: 'Send the invitation' }).click();
      // No SMTP here: the link is handed over to send by hand.
      await dialog.getByText('/auth/invites/').waitFor();
      await dialog.getByRole('button', { name: 'Done' }).click();
      await dialog.waitFor({ state: 'hidden' });
    } finally {
      await audit.close();
    }
    const globex = ((await v1('GET', '/partner/clients')).body as { data: Array<{ id: string; name: string }> }).data.find((c) => c.name === 'Globex')!;
    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Clients' }).click();
    await page.getByRole('button', { name: 'Open Globex' }).click();
    // The client's own address: the partner owner joined it and now sees it.
    await page.waitForURL((url) => url.pathname.startsWith(`/dashboard/w/${globex.id}/`));
    expect(await page.getByLabel('Workspace or partner in view').inputValue()).to.equal(globex.id);
    // Its members: the partner's owner, who joined, and the open invitation.
    await page.goto(`${dash.apiUrl}/dashboard/members`);
    await page.getByRole('region', { name: 'Open invitations' }).getByText('boss@globex.example').waitFor();
    expect(await page.getByRole('region', { name: 'Current members' }).textContent()).to.include(dash.user.email);
    await page.getByLabel('Workspace or partner in view').selectOption(dash.partnerId);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Partner' }).click();
  });

  it('switches into a client workspace the person is a member of', async () => {
    await page.getByRole('navigation', { name: 'Partner pages' }).getByRole('link', { name: 'Clients' }).click();
    // Acme is a client of the partner and the owner is one of its members; Globex has no members.
    await page.getByRole('row', { name: /Globex/ }).waitFor();
    await page.getByRole('button', { name: 'Open Acme' }).click();
    await page.waitForURL((url) => url.pathname.startsWith(`/dashboard/w/${dash.workspaceId}/`));
    expect(await page.getByLabel('Workspace or partner in view').inputValue()).to.equal(dash.workspaceId);
  });
});
