// The Keys screen in real Chromium against a real api: a key created from the keyboard alone, shown once, used
// against /v1 like curl would, revoked from the screen and refused from then on; members see the list only.
import { expect } from 'chai';
import { chromiumMissing } from '../helpers/browser.ts';
import { checkAccessibility, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { bearer } from '../helpers/tenants.ts';
import { until } from '../helpers/wait.ts';

describe('Dashboard keys screen', function () {
  this.timeout(120_000);
  let dashboard: Dashboard;

  before(async function () {
    if (chromiumMissing()) this.skip();
    dashboard = await startDashboard({ partner: true });
  });

  after(async () => {
    await dashboard?.stop();
  });

  /** A key made outside the screen, as another owner or the CLI would. */
  const seedKey = (name: string) => dashboard.tenants.keys.create({ kind: 'workspace', ownerId: dashboard.workspaceId, scopes: ['links:read'], name });
  const v1 = (key: string, path = '/v1/links') => fetch(`${dashboard.apiUrl}${path}`, { headers: bearer(key) });

  it('creates a key from the keyboard alone, shows it once, and the key works against /v1 with the scopes chosen', async () => {
    const page = await dashboard.signedInPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.apiUrl });
    await page.goto(`${dashboard.apiUrl}/dashboard/keys`);
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.getByLabel('Name').waitFor();
    expect(await page.evaluate('document.activeElement.id')).to.equal('page-title');
    // Focus starts on the heading; Tab reaches the form's first field.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.name')).to.equal('name');
    await page.keyboard.type('CI reports');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter'); // "All read scopes"
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter'); // submits from the name field
    const panel = page.getByRole('article').filter({ has: page.getByRole('heading', { name: 'Key “CI reports” created' }) });
    await panel.waitFor();
    expect(await page.evaluate('document.activeElement.id')).to.equal('new-key-title');
    const key = await page.getByLabel('Key value').inputValue();
    expect(key).to.match(/^lp_live_[A-Za-z0-9]{40}$/);
    await panel.getByRole('button', { name: 'Copy the key' }).click();
    await page.getByRole('status').filter({ hasText: 'copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).to.equal(key);

    expect((await v1(key)).status).to.equal(200);
    const write = await fetch(`${dashboard.apiUrl}/v1/links`, { method: 'POST', headers: { ...bearer(key), 'Content-Type': 'application/json' }, body: '{"url":"https://example.com/"}' });
    expect(write.status, 'a read-only key cannot create links').to.equal(403);

    // Once acknowledged the value is gone from the page for good; the list shows only its prefix.
    await panel.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByLabel('Key value').count()).to.equal(0);
    const row = page.getByRole('row').filter({ hasText: 'CI reports' });
    expect(await row.textContent()).to.include(`${key.slice(0, 12)}…`).and.not.include(key.slice(12));
    expect(await row.textContent()).to.include('links:read');
    expect(await row.textContent()).not.to.include('links:write');
    // The last use is recorded just after the call: the list shows it once it is.
    await until(
      async () => {
        await page.reload();
        // The list loads after the page: wait for the row, then read every cell of it (Name, Key, Scopes, Created,
        // Expires, Last used, ...), header cell included.
        const reloaded = page.getByRole('row').filter({ hasText: 'CI reports' });
        await reloaded.waitFor();
        const cells = await reloaded.locator('th, td').allTextContents();
        return cells.length > 5 && cells[5] !== 'Never';
      },
      15_000,
      'the last use shown',
    );
    await page.context().close();
  });

  it('revokes a key after confirmation, and the api refuses it at once', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/keys`);
    await page.getByLabel('Name').fill('Short lived');
    await page.getByRole('checkbox', { name: /links:read/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('Key value').inputValue();
    expect((await v1(key)).status).to.equal(200);

    const row = page.getByRole('row').filter({ hasText: 'Short lived' });
    await row.getByRole('button', { name: /Revoke/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke “Short lived”?' });
    await dialog.waitFor();
    // Cancelling changes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await v1(key)).status).to.equal(200);
    await row.getByRole('button', { name: /Revoke/ }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText(/^Revoked/).waitFor();
    expect(await row.getByRole('button', { name: /Revoke/ }).count()).to.equal(0);
    const refused = await v1(key);
    expect(refused.status).to.equal(401);
    await page.context().close();
  });

  it('shows the keys to a member but no way to create or revoke them', async () => {
    const member = await dashboard.createUser('member@example.test', { workspaceId: dashboard.workspaceId, role: 'member' });
    await seedKey('Made by an owner');
    const page = await dashboard.signedInPage(member);
    await page.goto(`${dashboard.apiUrl}/dashboard/keys`);
    await page.getByText('Only owners of Acme can create or revoke keys.').waitFor();
    await page.getByRole('row').filter({ hasText: 'Made by an owner' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create key' }).count()).to.equal(0);
    expect(await page.getByRole('button', { name: /Revoke/ }).count()).to.equal(0);
    await page.context().close();
  });

  it('creates partner keys in the partner context', async () => {
    const page = await dashboard.signedInPage();
    await page.getByLabel('Workspace or partner in view').selectOption({ value: dashboard.partnerId! });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' }).click();
    await page.getByLabel('Name').fill('Client billing');
    await page.getByRole('checkbox', { name: /clients:read/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('Key value').inputValue();
    expect(key).to.match(/^lpp_live_/);
    const me = (await (await v1(key, '/v1/key')).json()) as { kind: string; partner_id: string };
    expect(me).to.include({ kind: 'partner', partner_id: dashboard.partnerId });
    // The workspace's list does not show it.
    await page.getByLabel('Workspace or partner in view').selectOption({ value: dashboard.workspaceId });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
    await page.getByLabel('Name').waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Client billing' }).count()).to.equal(0);
    await page.context().close();
  });

  it('has no serious or critical axe-core violation, with the form, a new key and the list on screen', async () => {
    const violations = await checkAccessibility(dashboard, `${dashboard.apiUrl}/dashboard/keys`, dashboard.user, async (page) => {
      await page.getByLabel('Name').fill('Axe');
      await page.getByRole('checkbox', { name: /analytics:read/ }).check();
      await page.getByLabel('Expires').selectOption('date');
      await page.getByLabel('Expiry date').fill('2099-01-31');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByLabel('Key value').waitFor();
    });
    expect(violations).to.deep.equal([]);
  });

  it('fits a 375 px wide phone without sideways scrolling', async () => {
    await seedKey('Phone check');
    const page = await dashboard.signedInPage(undefined, { viewport: { width: 375, height: 812 } });
    await page.goto(`${dashboard.apiUrl}/dashboard/keys`);
    await page.getByRole('row').filter({ hasText: 'Phone check' }).waitFor();
    await page.getByLabel('Name').waitFor();
    expect(await horizontalOverflow(page)).to.equal(0);
    await page.context().close();
  });
});
