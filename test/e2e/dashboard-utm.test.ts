// UTM parameters in the link editor, in real Chromium against real api and redirect processes: set on an existing
// A/B-tested link's edit page, they reach every variant (a variant's own utm_content kept), and the redirect sends
// visitors of each variant there with them; saved as a workspace template, then applied to a new link; axe-core
// (moderate and worse) with the UTM section open.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { axeOn, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { callApi, type Reply } from '../helpers/http.ts';

const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

// A type alias, not an interface: it takes the API answer's index signature.
type ApiLink = {
  id: string;
  slug: string;
  short_url: string;
  url: string;
  ab_test: { variants: Array<{ url: string }> } | null;
};

describe('Dashboard: UTM parameters on every destination, and saved templates', function () {
  this.timeout(360_000);

  let dash: Dashboard;
  let key: string;
  let page: Page;
  const v1 = (method: string, path: string, body?: unknown): Promise<Reply> => callApi(dash.apiUrl, method, path, { key, body });
  const params = (url: string) => Object.fromEntries(new URL(url).searchParams);

  before(async function () {
    if (chromiumMissing()) this.skip();
    dash = await startDashboard({ redirect: true });
    key = (await dash.tenants.aWorkspaceKey(dash.workspaceId)).key;
    const context = await dash.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signInThroughForm(page, dash.apiUrl, dash.user);
  });

  after(async () => {
    await dash?.stop();
  });

  it('edits the UTM of an A/B-tested link: every variant gets it, and the redirect to each variant carries it', async () => {
    const created = await v1('POST', '/links', {
      url: 'https://example.com/main',
      slug: 'spring',
      ab_test: { enabled: true, variants: [{ url: 'https://example.com/a?utm_content=hero', weight: 50 }, { url: 'https://example.com/b', weight: 50 }] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const link = created.body as ApiLink;

    await page.goto(`${dash.apiUrl}/dashboard/links/${link.id}`);
    await page.locator('summary', { hasText: /^UTM parameters/ }).click();
    await page.getByLabel('Source (utm_source)').fill('newsletter');
    await page.getByLabel('Campaign (utm_campaign)').fill('spring-sale');
    await page.getByLabel('Content (utm_content)').fill('footer');
    expect(await axeOn(page, 'moderate'), 'axe on the link editor with the UTM section open').to.deep.equal([]);
    await page.getByRole('button', { name: 'Save the link' }).click();
    await page.getByText('Link saved.').waitFor();

    const saved = (await v1('GET', `/links/${link.id}`)).body as ApiLink;
    expect(params(saved.url)).to.deep.equal({ utm_source: 'newsletter', utm_campaign: 'spring-sale', utm_content: 'footer' });
    expect(saved.ab_test!.variants.map((v) => params(v.url))).to.deep.equal([
      { utm_content: 'hero', utm_source: 'newsletter', utm_campaign: 'spring-sale' },
      { utm_source: 'newsletter', utm_campaign: 'spring-sale', utm_content: 'footer' },
    ]);
    // Reopened, the editor shows the UTM apart and the variants with only what is their own.
    await page.reload();
    expect(await page.getByLabel('Destination URL').inputValue()).to.equal('https://example.com/main');
    await page.locator('summary', { hasText: /^UTM parameters/ }).click();
    expect(await page.getByLabel('Source (utm_source)').inputValue()).to.equal('newsletter');
    await page.locator('summary', { hasText: /^A\/B test/ }).click();
    expect(await page.getByLabel('Variant 1 URL').inputValue()).to.equal('https://example.com/a?utm_content=hero');
    expect(await page.getByLabel('Variant 2 URL').inputValue()).to.equal('https://example.com/b');

    // Visitors are sent to both variants, each with the UTM.
    const seen = new Map<string, Record<string, string>>();
    for (let i = 0; i < 60 && seen.size < 2; i++) {
      const visit = await fetch(link.short_url, { redirect: 'manual', headers: { 'User-Agent': DESKTOP } });
      expect(visit.status, dash.output()).to.equal(302);
      const location = new URL(visit.headers.get('location')!);
      seen.set(location.pathname, Object.fromEntries(location.searchParams));
    }
    expect(seen.get('/a')).to.deep.equal({ utm_content: 'hero', utm_source: 'newsletter', utm_campaign: 'spring-sale' });
    expect(seen.get('/b')).to.deep.equal({ utm_source: 'newsletter', utm_campaign: 'spring-sale', utm_content: 'footer' });

    // Clearing a parameter removes it everywhere it came from the link.
    await page.getByLabel('Campaign (utm_campaign)').fill('');
    await page.getByRole('button', { name: 'Save the link' }).click();
    await page.getByText('Link saved.').waitFor();
    const cleared = (await v1('GET', `/links/${link.id}`)).body as ApiLink;
    expect(params(cleared.url)).to.deep.equal({ utm_source: 'newsletter', utm_content: 'footer' });
    expect(cleared.ab_test!.variants.map((v) => params(v.url))).to.deep.equal([
      { utm_content: 'hero', utm_source: 'newsletter' },
      { utm_source: 'newsletter', utm_content: 'footer' },
    ]);
  });

  it('saves the parameters as a workspace template and applies it to a new link', async () => {
    await page.locator('summary', { hasText: /^UTM parameters/ }).click();
    await page.getByLabel('Save these parameters as a template named').fill('Newsletter');
    await page.getByRole('button', { name: 'Save the template' }).click();
    await page.getByText('Template Newsletter saved.').waitFor();
    const profile = (await v1('GET', '/workspace')).body as { utm_templates: unknown[] };
    expect(profile.utm_templates).to.deep.equal([{ name: 'Newsletter', utm: { utm_source: 'newsletter', utm_content: 'footer' } }]);

    await page.goto(`${dash.apiUrl}/dashboard/links/new`);
    await page.getByLabel('Destination URL').fill('https://example.com/new');
    await page.locator('summary', { hasText: /^UTM parameters/ }).click();
    await page.getByLabel('Saved template').selectOption('Newsletter');
    await page.getByRole('button', { name: 'Apply the template' }).click();
    expect(await page.getByLabel('Source (utm_source)').inputValue()).to.equal('newsletter');
    expect(await axeOn(page, 'moderate'), 'axe on a new link with a template applied').to.deep.equal([]);
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await horizontalOverflow(page), 'sideways overflow at 375 px').to.equal(0);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('button', { name: 'Create the link' }).click();
    await page.waitForURL((url) => /^\/dashboard\/w\/ws_[A-Za-z0-9]+\/links\/lnk_/.test(url.pathname));
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const made = (await v1('GET', `/links/${id}`)).body as ApiLink;
    expect(params(made.url)).to.deep.equal({ utm_source: 'newsletter', utm_content: 'footer' });
  });
});
