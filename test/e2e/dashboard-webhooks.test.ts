// The Webhooks screens in real Chromium against real api and worker processes: an endpoint created with the keyboard
// alone pointing at a real HTTP receiver, its secret shown once, a test event seen in the delivery log with the request
// sent and the receiver's answer, the endpoint driven to `failing` by a receiver that answers 500 through the whole
// (shortened) retry schedule, re-enabled from its page, and the next delivery succeeding.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { ScreenAudit, tabTo } from '../helpers/dashboard-audit.ts';

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('Dashboard: webhooks', function () {
  this.timeout(120_000);

  let dash: Dashboard;
  let receiver: Server;
  let receiverUrl: string;
  let answer = 200;
  const received: Received[] = [];
  let page: Page;

  before(async function () {
    if (chromiumMissing()) this.skip();
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(answer, { 'Content-Type': 'text/plain', 'X-Receiver': 'test' }).end(answer === 200 ? 'received-ok' : 'receiver-broken');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    dash = await startDashboard({
      worker: true,
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms,50ms', WEBHOOK_TIMEOUT_MS: '2000' },
    });
    page = await dash.signedInPage();
  });

  after(async () => {
    await dash?.stop();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const endpointUrl = () => `${receiverUrl}/hooks/acme`;

  it('creates an endpoint with the keyboard alone and shows its secret once', async () => {
    await page.goto(`${dash.apiUrl}/dashboard/webhooks`);
    await page.getByRole('heading', { name: 'No endpoints yet' }).waitFor();
    const add = page.getByRole('button', { name: 'Add endpoint' }).first();
    await tabTo(page, add);
    await page.keyboard.press('Enter');
    const url = page.getByLabel('Endpoint URL');
    await tabTo(page, url);
    await page.keyboard.type(endpointUrl());
    await page.keyboard.press('Tab');
    await page.keyboard.type('Acme receiver');
    await tabTo(page, page.getByRole('checkbox', { name: /link\.created/ }));
    await page.keyboard.press('Space');
    await tabTo(page, page.getByRole('checkbox', { name: /link\.deleted/ }));
    await page.keyboard.press('Space');
    await tabTo(page, page.getByRole('button', { name: 'Create endpoint' }));
    await page.keyboard.press('Enter');

    const secret = page.getByTestId('webhook-secret');
    await secret.waitFor();
    expect(await secret.textContent()).to.match(/^whsec_\S{16,}$/);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await secret.count()).to.equal(0);
    const row = page.getByRole('row', { name: /Acme receiver/ });
    await row.waitFor();
    expect(await row.textContent()).to.include('Active').and.to.include('link.created, link.deleted');
    // The secret is never shown again: not on the list, not on the endpoint's page.
    await row.getByRole('link', { name: 'Acme receiver' }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme receiver' }).waitFor();
    expect(await page.content()).not.to.include('whsec_');
  });

  it('sends a test event and shows it in the delivery log with the request and the response', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    const entry = page.locator('details.delivery', { hasText: 'Succeeded (200)' }).first();
    await entry.waitFor({ timeout: 30_000 });
    await entry.locator('summary').click();
    const requestBody = await entry.getByLabel('Request body').textContent();
    const sent = JSON.parse(requestBody!) as { id: string; type: string; data: unknown };
    expect(sent.data).to.deep.equal({ test: true });
    expect(sent.type).to.equal('link.created');
    expect(await entry.textContent()).to.match(/x-service-signature/i).and.to.include('attempt 1');
    expect(await entry.getByLabel('Response body').textContent()).to.equal('received-ok');
    expect(await entry.textContent()).to.match(/x-receiver/i);
    // What the log shows is what the receiver got.
    const got = received.find((r) => (JSON.parse(r.body) as { id: string }).id === sent.id);
    expect(got, 'the receiver got the logged delivery').to.not.equal(undefined);
    expect(got!.headers['x-service-delivery']).to.equal(sent.id);
  });

  it('shows the endpoint failing after every retry failed, re-enables it, and the next delivery succeeds', async () => {
    answer = 500;
    await page.getByRole('button', { name: 'Send test event' }).click();
    // Six attempts 50 ms apart, all answered 500: the endpoint turns failing and the screen says so.
    await page.getByRole('heading', { name: 'This endpoint is failing' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('dl.facts').textContent()).to.include('Failing');
    expect(await page.getByRole('button', { name: 'Send test event' }).isDisabled()).to.equal(true);
    // Every attempt is in the log: the first and the five retries, each answered 500.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('details.delivery', { hasText: 'attempt 6' }).waitFor();
    for (let attempt = 1; attempt <= 6; attempt++) {
      const row = page.locator('details.delivery', { hasText: `attempt ${attempt} ` }).first();
      expect(await row.textContent(), `attempt ${attempt}`).to.include('Failed (500)');
    }
    const failedRow = page.locator('details.delivery', { hasText: 'attempt 6' });
    await failedRow.locator('summary').click();
    expect(await failedRow.getByLabel('Response body').textContent()).to.equal('receiver-broken');

    answer = 200;
    const successesBefore = await page.locator('details.delivery', { hasText: 'Succeeded (200)' }).count();
    await page.getByRole('button', { name: 'Re-enable endpoint' }).click();
    await page.getByRole('heading', { name: 'This endpoint is failing' }).waitFor({ state: 'detached' });
    expect(await page.locator('dl.facts').textContent()).to.include('Active');
    await page.getByRole('button', { name: 'Send test event' }).click();
    const successes = page.locator('details.delivery', { hasText: 'Succeeded (200)' });
    await page.locator('details.delivery', { hasText: 'Succeeded (200)' }).nth(successesBefore).waitFor({ timeout: 30_000 });
    expect(await successes.count()).to.equal(successesBefore + 1);
    expect(await page.locator('dl.facts').textContent()).to.include('Active');
  });

  it('rotates the secret, shows the new one once and states the grace period', async () => {
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = page.getByTestId('webhook-secret');
    await secret.waitFor();
    expect(await secret.textContent()).to.match(/^whsec_/);
    expect(await page.locator('.secret-once').textContent()).to.match(/Grace period: the previous secret keeps signing deliveries until .* \(about 24 h\)/);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.locator('dl.facts').textContent()).to.include('the previous secret still signs until');
  });

  it('passes axe-core and fits a 375 px phone on the list and the endpoint page', async () => {
    const audit = await ScreenAudit.open(dash);
    try {
      await audit.check('/webhooks');
      await audit.page.getByRole('link', { name: 'Acme receiver' }).click();
      await audit.page.getByRole('heading', { level: 1, name: 'Acme receiver' }).waitFor();
      const path = new URL(audit.page.url()).pathname.replace('/dashboard', '');
      await audit.check(path, (p) => p.locator('details.delivery'));
      // With a delivery opened (headers and bodies on screen).
      await audit.page.locator('details.delivery summary').first().click();
      expect(await audit.axe()).to.deep.equal([]);
    } finally {
      await audit.close();
    }
  });

  it('shows a member the endpoints and their log, without the controls only owners may use', async () => {
    const member = await dash.createUser('mia@example.test', { workspaceId: dash.workspaceId, role: 'member' });
    const memberPage = await dash.signedInPage(member);
    try {
      await memberPage.goto(`${dash.apiUrl}/dashboard/webhooks`);
      await memberPage.getByRole('link', { name: 'Acme receiver' }).click();
      await memberPage.locator('details.delivery').first().waitFor();
      await memberPage.getByText('Only owners send test events and change endpoints.').waitFor();
      for (const name of ['Send test event', 'Rotate secret', 'Edit', 'Delete']) {
        expect(await memberPage.getByRole('button', { name, exact: true }).count(), name).to.equal(0);
      }
      await memberPage.goto(`${dash.apiUrl}/dashboard/webhooks`);
      await memberPage.getByRole('link', { name: 'Acme receiver' }).waitFor();
      expect(await memberPage.getByRole('button', { name: 'Add endpoint' }).count()).to.equal(0);
    } finally {
      await memberPage.context().close();
    }
  });

  it('edits the events and deletes the endpoint', async () => {
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('checkbox', { name: /link\.deleted/ }).uncheck();
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    await page.getByRole('button', { name: 'Save endpoint' }).waitFor({ state: 'detached' });
    expect(await page.locator('dl.facts').textContent()).to.include('link.created').and.not.to.include('link.deleted');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this endpoint?' }).getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByRole('heading', { name: 'No endpoints yet' }).waitFor();
  });
});
