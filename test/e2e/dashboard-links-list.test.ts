// The links list as a daily user works it, in real Chromium against a real api, redirect and worker: clicks per
// link (from a short link really followed), the total, the page size and the page kept in the address (a reload
// shows the same page), bulk tag, move, export, archive and delete checked against the API, axe-core with the
// delete dialog open, and a 390 × 844 phone: cards, filters behind a button, no sideways scrolling.
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { axeOn, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { bearer } from '../helpers/tenants.ts';
import { until } from '../helpers/wait.ts';

interface ApiLink {
  id: string;
  slug: string;
  short_url: string;
  archived: boolean;
  folder_id: string | null;
  tags: { id: string; name: string }[];
}

describe('Dashboard: the links list', function () {
  this.timeout(400_000);
  let dashboard: Dashboard;
  let key: string;
  let page: Page;
  const slug = (i: number) => `list-${String(i).padStart(2, '0')}`;
  const v1 = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${dashboard.apiUrl}/v1${path}`, { method, headers: { ...bearer(key), 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect(res.status, `${method} ${path}: ${await res.clone().text()}`).to.be.below(300);
    return (await res.json()) as T;
  };
  const linkBySlug = async (s: string) => (await v1<{ data: ApiLink[] }>('GET', `/links?search=${s}&limit=5`)).data.find((l) => l.slug === s)!;
  const rows = () => page.getByRole('region', { name: 'Links' }).locator('tbody tr');
  const row = (s: string) => rows().filter({ has: page.getByRole('link', { name: new RegExp(`/${s}$`) }) });

  before(async function () {
    if (chromiumMissing()) this.skip();
    dashboard = await startDashboard({ redirect: true, worker: true });
    key = (await dashboard.tenants.aWorkspaceKey(dashboard.workspaceId)).key;
    // Created one by one, oldest first: list-30 is the newest, at the top.
    const items = Array.from({ length: 30 }, (_, i) => ({ url: `https://example.com/item-${i + 1}`, slug: slug(i + 1) }));
    for (const item of items) await v1('POST', '/links', item);
    await v1('POST', '/tags', { name: 'promo' });
    await v1('POST', '/folders', { name: 'Spring' });
    const top = await linkBySlug(slug(30));
    for (let i = 0; i < 2; i++) {
      const visit = await fetch(top.short_url, { redirect: 'manual', headers: { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' } });
      expect(visit.status, dashboard.output()).to.be.oneOf([301, 302, 307, 308]);
    }
    await until(
      async () => (await v1<{ clicks: number }>('GET', `/analytics/summary?interval=24h&link_id=${top.id}`)).clicks === 2,
      90_000,
      'the two clicks in the analytics rollups',
    );
    // axe is injected as a script, which the CSP forbids: this page's context bypasses it.
    const context = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signInThroughForm(page, dashboard.apiUrl, dashboard.user);
  });

  after(async () => {
    await dashboard?.stop();
  });

  it('shows each link’s clicks and the total, and keeps the page size and the page in the address', async () => {
    await page.getByText('30 links in total').waitFor();
    await until(async () => ((await row(slug(30)).locator('td').nth(3).textContent()) ?? '').trim() === '2', 20_000, 'the clicks of list-30');
    expect((await row(slug(29)).locator('td').nth(3).textContent())?.trim()).to.equal('0');
    expect(await rows().count()).to.equal(25);

    await page.getByLabel('Per page').selectOption('10');
    await page.waitForURL((url) => url.searchParams.get('limit') === '10');
    await until(async () => (await rows().count()) === 10, 10_000, 'ten rows');
    await page.getByText('Page 1 of 3').waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.waitForURL((url) => url.searchParams.get('page') === '2' && url.searchParams.has('cursor'));
    await row(slug(20)).waitFor();
    // A reload (or a bookmark) shows the same page.
    await page.reload();
    await page.getByText('Page 2 of 3').waitFor();
    await row(slug(20)).waitFor();
    expect(await rows().count()).to.equal(10);
    expect(await row(slug(30)).count()).to.equal(0);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await row(slug(30)).waitFor();
    await page.getByText('Page 1 of 3').waitFor();
  });

  it('tags, moves, exports, archives and deletes the chosen links, as the API then shows', async () => {
    await page.goto(`${dashboard.apiUrl}/dashboard/links?limit=10`);
    await row(slug(30)).waitFor();
    for (const i of [30, 29, 28]) await page.getByRole('checkbox', { name: `Select ${slug(i)}` }).check();
    const bar = page.getByRole('region', { name: 'Selected links' });
    await bar.getByText('3 links selected').waitFor();

    await bar.getByLabel('Add tag').selectOption({ label: 'promo' });
    await page.getByRole('status').filter({ hasText: 'Tagged 3 links.' }).waitFor();
    for (const i of [30, 29, 28]) expect((await linkBySlug(slug(i))).tags.map((t) => t.name), slug(i)).to.deep.equal(['promo']);
    expect((await linkBySlug(slug(27))).tags).to.deep.equal([]);

    await bar.getByLabel('Move to folder').selectOption({ label: 'Spring' });
    await page.getByRole('status').filter({ hasText: 'Moved 3 links.' }).waitFor();
    const folders = (await v1<{ data: { id: string; name: string }[] }>('GET', '/folders')).data;
    const spring = folders.find((f) => f.name === 'Spring')!.id;
    for (const i of [30, 29, 28]) expect((await linkBySlug(slug(i))).folder_id, slug(i)).to.equal(spring);

    const [download] = await Promise.all([page.waitForEvent('download'), bar.getByRole('button', { name: 'Export selected' }).click()]);
    const csv = await readFile(await download.path(), 'utf8');
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).to.equal('short_url,url,slug,title,tags,folder_id,archived,clicks,created_at');
    expect(lines.slice(1).map((l) => l.split(',')[2]).sort()).to.deep.equal([slug(28), slug(29), slug(30)]);
    expect(lines.find((l) => l.includes(slug(30)))!.split(',')[7]).to.equal('2');

    await bar.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('status').filter({ hasText: 'Archived 3 links.' }).waitFor();
    await page.getByText('27 links in total').waitFor();
    for (const i of [30, 29, 28]) expect((await linkBySlug(slug(i))).archived, slug(i)).to.equal(true);
    expect(await bar.count(), 'the selection is cleared once done').to.equal(0);

    await page.getByRole('checkbox', { name: 'Select every link on this page' }).check();
    await bar.getByText('10 links selected').waitFor();
    await bar.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete 10 links?' });
    await dialog.waitFor();
    expect(await axeOn(page), 'axe with the delete dialog open').to.deep.equal([]);
    await dialog.getByRole('button', { name: 'Delete the links' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted 10 links.' }).waitFor();
    await page.getByText('17 links in total').waitFor();
    expect((await v1<{ count: number }>('GET', '/links/count?archived=false')).count).to.equal(17);
  });

  it('passes axe-core with a selection and the bulk bar on screen', async () => {
    const context = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    const checked = await context.newPage();
    await signInThroughForm(checked, dashboard.apiUrl, dashboard.user);
    await checked.getByRole('checkbox', { name: `Select ${slug(17)}` }).check();
    await checked.getByRole('region', { name: 'Selected links' }).waitFor();
    const violations = await axeOn(checked);
    await context.close();
    expect(violations).to.deep.equal([]);
  });

  it('shows cards on a 390 × 844 phone, filters behind a button, and never scrolls sideways', async () => {
    const phone = await dashboard.signedInPage(undefined, { viewport: { width: 390, height: 844 } });
    const cards = phone.getByRole('list', { name: 'Links' }).getByRole('listitem');
    await cards.first().waitFor();
    expect(await phone.getByRole('table').count(), 'no table on a phone').to.equal(0);
    expect(await horizontalOverflow(phone), 'the list').to.equal(0);
    expect(await phone.getByLabel('Domain', { exact: true }).isVisible(), 'filters collapsed').to.equal(false);
    const toggle = phone.getByRole('button', { name: 'Filters' });
    expect(await toggle.getAttribute('aria-expanded')).to.equal('false');
    await toggle.click();
    expect(await phone.getByLabel('Domain', { exact: true }).isVisible()).to.equal(true);
    expect(await horizontalOverflow(phone), 'with the filters open').to.equal(0);
    const card = cards.filter({ hasText: `/${slug(17)}` });
    await card.getByRole('checkbox', { name: `Select ${slug(17)}` }).check();
    await phone.getByRole('region', { name: 'Selected links' }).waitFor();
    expect(await horizontalOverflow(phone), 'with the bulk bar').to.equal(0);
    await phone.context().close();
  });
});
