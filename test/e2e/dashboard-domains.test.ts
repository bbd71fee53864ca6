// The Domains screen in real Chromium against a real api run as the all-in-one does it (no Kubernetes cluster):
// the screen says before any form that custom domains cannot work here; with a (test) cluster the form connects one
// and shows its records at once; a domain on its way to active shows its copyable DNS records
// and follows its status live; deletion asks first.
import { expect } from 'chai';
import { chromiumMissing } from '../helpers/browser.ts';
import { checkAccessibility, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { DomainStore, type DomainDoc } from '../../src/domains/domain.store.ts';
import { newId } from '../../src/platform/ids.ts';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube-apiserver.ts';

describe('Dashboard domains screen', function () {
  this.timeout(400_000);
  let dashboard: Dashboard;
  let domains: DomainStore;

  before(async function () {
    if (chromiumMissing()) this.skip();
    dashboard = await startDashboard({ partner: true });
    domains = new DomainStore(dashboard.tenants.client.db(dashboard.mongo.dbName));
  });

  after(async () => {
    await dashboard?.stop();
  });

  /** A connected domain as the api records it, written where a cluster's operator would move it along. */
  async function aDomain(hostname: string, status: DomainDoc['status'] = 'pending_verification'): Promise<DomainDoc> {
    const now = new Date();
    const doc: DomainDoc = {
      _id: newId('dom'),
      workspace_id: dashboard.workspaceId,
      hostname,
      status,
      verification_token: 'tok123',
      records: [
        { type: 'TXT', name: `_linkplane.${hostname}`, value: 'linkplane-verify=tok123' },
        { type: 'CNAME', name: hostname, value: 'ingress.linkplane.example' },
      ],
      error: null,
      created_at: now,
      updated_at: now,
      activated_at: status === 'active' ? now : null,
    };
    await domains.collection.insertOne(doc);
    return doc;
  }

  it('says up front, before any form, that this server cannot connect custom domains', async () => {
    const page = await dashboard.signedInPage();
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().includes('/v1/domains')) posts.push(request.url());
    });
    await page.goto(`${dashboard.apiUrl}/dashboard/domains`);
    await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor();
    // The default short domain is listed, active.
    await page.getByRole('article').filter({ hasText: 'default short domain' }).getByTestId('domain-status').filter({ hasText: 'Active' }).waitFor();
    const notice = page.locator('.not-configured');
    await notice.getByText('Custom domains are not available on this server').waitFor();
    expect(await notice.textContent()).to.include('runs without Kubernetes');
    expect(await page.getByLabel('Hostname').count(), 'no form offered in vain').to.equal(0);
    expect(await page.getByRole('button', { name: 'Connect' }).count()).to.equal(0);
    expect(posts).to.deep.equal([]);
    await page.context().close();
  });

  it('lists the DNS records to set, each copyable, and follows the domain live through SSL to active', async () => {
    const domain = await aDomain('go.example-shop.com');
    const page = await dashboard.signedInPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.apiUrl });
    await page.goto(`${dashboard.apiUrl}/dashboard/domains`);
    const card = page.getByRole('article', { name: 'go.example-shop.com' });
    await card.waitFor();
    expect(await card.getByTestId('domain-status').textContent()).to.equal('DNS verification');
    const records = card.getByRole('table', { name: 'DNS records to set for go.example-shop.com' });
    expect(await records.getByRole('row').count()).to.equal(3);
    await records.getByRole('button', { name: 'Copy TXT record value' }).click();
    await page.getByRole('status').filter({ hasText: 'copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).to.equal('linkplane-verify=tok123');

    // The operator moves it along; the screen polls while it is not active.
    await domains.collection.updateOne({ _id: domain._id }, { $set: { status: 'pending_ssl' } });
    await card.getByTestId('domain-status').filter({ hasText: 'Certificate' }).waitFor({ timeout: 20_000 });
    expect(await card.locator('[aria-current="step"]').textContent()).to.include('Certificate');
    await domains.collection.updateOne({ _id: domain._id }, { $set: { status: 'active', activated_at: new Date() } });
    await card.getByTestId('domain-status').filter({ hasText: 'Active' }).waitFor({ timeout: 20_000 });
    await page.getByRole('status').filter({ hasText: 'go.example-shop.com: Active.' }).waitFor();
    // Once active the records fold away.
    expect(await card.getByRole('table').isVisible()).to.equal(false);
    await page.context().close();
  });

  it('shows why provisioning failed', async () => {
    const domain = await aDomain('broken.example-shop.com');
    await domains.collection.updateOne({ _id: domain._id }, { $set: { status: 'error', error: { reason: 'CAARecordForbids', message: 'A CAA record forbids our certificate issuer.' } } });
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/domains`);
    const card = page.getByRole('article', { name: 'broken.example-shop.com' });
    await card.getByText('A CAA record forbids our certificate issuer.').waitFor();
    expect(await card.getByTestId('domain-status').textContent()).to.equal('Error');
    await page.context().close();
  });

  it('deletes a domain after confirmation', async () => {
    await aDomain('old.example-shop.com', 'active');
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/domains`);
    const card = page.getByRole('article', { name: 'old.example-shop.com' });
    await card.getByRole('button', { name: 'Delete old.example-shop.com' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete old.example-shop.com?' });
    await dialog.getByRole('button', { name: 'Delete domain' }).click();
    await card.waitFor({ state: 'detached' });
    expect(await domains.collection.countDocuments({ hostname: 'old.example-shop.com' })).to.equal(0);
    await page.context().close();
  });

  it('has no serious or critical axe-core violation, with records and the not-configured reason on screen', async () => {
    await aDomain('axe.example-shop.com');
    const violations = await checkAccessibility(dashboard, `${dashboard.apiUrl}/dashboard/domains`, dashboard.user, async (page) => {
      await page.getByRole('article', { name: 'axe.example-shop.com' }).waitFor();
      await page.getByText('Custom domains are not available on this server').waitFor();
    });
    expect(violations).to.deep.equal([]);
  });

  it('lists a partner its clients’ domains with their owner, and says why none can be connected', async () => {
    await aDomain('client.example-shop.com');
    const violations = await checkAccessibility(dashboard, `${dashboard.apiUrl}/dashboard/domains`, dashboard.user, async (page) => {
      await page.getByLabel('Workspace or partner in view').selectOption({ value: dashboard.partnerId! });
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains' }).click();
      const card = page.getByRole('article', { name: 'client.example-shop.com' });
      await card.getByText(`Owner: client ${dashboard.workspaceId}`).waitFor();
      await page.locator('.not-configured').filter({ hasText: /not available on this server|plan does not include/ }).waitFor();
    });
    expect(violations).to.deep.equal([]);
  });

  it('fits a 375 px wide phone without sideways scrolling', async () => {
    await aDomain('a-rather-long-subdomain-name.of-a-long-registered-domain.example-shop.com');
    const page = await dashboard.signedInPage(undefined, { viewport: { width: 375, height: 812 } });
    await page.goto(`${dashboard.apiUrl}/dashboard/domains`);
    await page.getByRole('article', { name: 'a-rather-long-subdomain-name.of-a-long-registered-domain.example-shop.com' }).waitFor();
    expect(await horizontalOverflow(page)).to.equal(0);
    await page.context().close();
  });
});

describe('Dashboard domains screen, with a Kubernetes cluster', function () {
  this.timeout(400_000);
  let dashboard: Dashboard;
  let kube: KubeApiServer;

  before(async function () {
    if (chromiumMissing()) this.skip();
    kube = await startKubeApiServer();
    dashboard = await startDashboard({
      env: { DOMAINS_KUBE: 'kubeconfig', KUBECONFIG: kube.kubeconfigFile(), DOMAIN_NAMESPACE: 'linkplane-domains', DOMAIN_CNAME_TARGET: 'ingress.linkplane.test' },
    });
  });

  after(async () => {
    await dashboard?.stop();
    await kube?.stop();
  });

  it('offers the form with the quota, connects from the keyboard alone and shows the DNS records to set at once', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/domains`);
    await page.getByText(/^0 of \d+ custom domains in use/).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.name')).to.equal('hostname');
    await page.keyboard.type('links.acme-shop.com');
    await page.keyboard.press('Enter');
    const card = page.getByRole('article', { name: 'links.acme-shop.com' });
    await card.waitFor();
    expect(await card.getByTestId('domain-status').textContent()).to.equal('DNS verification');
    const records = card.getByRole('table', { name: 'DNS records to set for links.acme-shop.com' });
    await records.getByText('ingress.linkplane.test', { exact: true }).waitFor();
    expect(await records.getByRole('cell', { name: 'TXT', exact: true }).count()).to.equal(1);
    await page.getByText(/^1 of \d+ custom domains in use/).waitFor();
    await page.context().close();
  });

  it('shows a refused hostname next to the field', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/domains`);
    await page.getByLabel('Hostname').fill('localhost');
    await page.getByRole('button', { name: 'Connect' }).click();
    const error = page.locator('.field-error');
    await error.waitFor();
    expect(await page.getByLabel('Hostname').getAttribute('aria-invalid')).to.equal('true');
    const describedBy = (await page.getByLabel('Hostname').getAttribute('aria-describedby'))!;
    expect(describedBy.split(' ')).to.include(await error.getAttribute('id'));
    await page.context().close();
  });
});
