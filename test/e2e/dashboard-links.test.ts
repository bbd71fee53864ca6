// The Links screens in real Chromium against real api and redirect processes: a link made in the editor (with a
// rule from the rule builder) is followed over HTTP on the redirect port; edits, errors next to their fields, the QR
// preview, CSV import, keyboard-only creation, the list's search, filters and paging, axe-core and a phone width.
import { expect } from 'chai';
import jsQRModule from 'jsqr';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { chromiumMissing } from '../helpers/browser.ts';
import { axeOn, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { bearer } from '../helpers/tenants.ts';
import { until } from '../helpers/wait.ts';

const jsQR = jsQRModule.default;
const PROBE_UA = 'Mozilla/5.0 (X11; Linux x86_64) LinkplaneProbe/1.0';
const DESKTOP_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/** Where the redirect sends a visitor with this User-Agent (the Location header), following nothing. */
async function destination(shortUrl: string, userAgent: string): Promise<string | null> {
  const answer = await fetch(shortUrl, { redirect: 'manual', headers: { 'User-Agent': userAgent, Accept: 'text/html' } });
  await answer.body?.cancel();
  return answer.status >= 300 && answer.status < 400 ? answer.headers.get('location') : `status ${answer.status}`;
}

describe('Dashboard links', function () {
  this.timeout(400_000);
  let dashboard: Dashboard;
  let page: Page;
  let linkPath: string;
  let shortUrl: string;

  before(async function () {
    if (chromiumMissing()) this.skip();
    dashboard = await startDashboard({ redirect: true });
    page = await dashboard.signedInPage();
  });

  after(async () => {
    await dashboard?.stop();
  });

  it('creates a link with a rule in the editor, and the redirect applies the rule', async () => {
    await page.getByRole('button', { name: 'New link' }).click();
    await page.getByRole('heading', { level: 1, name: 'New link' }).waitFor();
    await page.getByLabel('Destination URL').fill('https://example.com/landing');
    await page.getByLabel('Slug', { exact: true }).fill('spring');
    await page.getByLabel('Title', { exact: true }).fill('Spring sale');
    await page.locator('summary', { hasText: 'Rules' }).click();
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await page.getByLabel('Condition to add to Rule 1').selectOption({ label: 'User agent contains' });
    await page.getByRole('button', { name: 'Add condition' }).click();
    await page.getByLabel('User agent contains (Rule 1)').fill('LinkplaneProbe');
    await page.getByLabel('Redirect URL of Rule 1').fill('https://example.com/probe');
    expect(await page.locator('.rule-summary').textContent()).to.equal('When user agent contains "LinkplaneProbe", redirect to https://example.com/probe.');
    await page.getByRole('button', { name: 'Create the link' }).click();
    await page.waitForURL((url) => /^\/dashboard\/w\/[^/]+\/links\/lnk_\w+$/.test(url.pathname));
    await page.getByRole('heading', { level: 1, name: 'Spring sale' }).waitFor();
    linkPath = new URL(page.url()).pathname;
    shortUrl = (await page.locator('.link-summary a').first().getAttribute('href'))!;
    expect(shortUrl).to.equal(`${dashboard.redirectUrl}/spring`);

    expect(await destination(shortUrl, PROBE_UA)).to.equal('https://example.com/probe');
    expect(await destination(shortUrl, DESKTOP_UA)).to.equal('https://example.com/landing');
  });

  it('edits the link (destination, title, the rule disabled) and the redirect follows the change', async () => {
    await page.getByLabel('Destination URL').fill('https://example.com/summer');
    await page.getByLabel('Title', { exact: true }).fill('Summer sale');
    await page.locator('summary', { hasText: 'Rules' }).click();
    await page.getByLabel('Rule 1 enabled').uncheck();
    await page.getByRole('button', { name: 'Save the link' }).click();
    await page.getByRole('heading', { level: 1, name: 'Summer sale' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Link saved.' }).waitFor();
    // The redirect learns of the change through its cache invalidation, a moment later.
    await until(async () => (await destination(shortUrl, PROBE_UA)) === 'https://example.com/summer', 15_000, 'the redirect to follow the edit');
    expect(await destination(shortUrl, DESKTOP_UA)).to.equal('https://example.com/summer');
  });

  it('draws the social card as it is typed, and a crawler gets it from the redirect once saved', async () => {
    await page.locator('summary', { hasText: 'Social preview' }).click();
    await page.getByTestId('preview-none').waitFor();
    await page.getByLabel('Card title').fill('Summer <sale>');
    await page.getByLabel('Card description').fill('Forty new pieces');
    await page.getByLabel('Card image URL').fill('https://cdn.example.com/summer.png');
    const feed = page.getByTestId('preview-feed');
    expect(await feed.locator('strong').textContent()).to.equal('Summer <sale>');
    expect(await feed.locator('.preview-card-site').textContent()).to.equal('EXAMPLE.COM');
    expect(await feed.locator('img').getAttribute('src')).to.equal('https://cdn.example.com/summer.png');
    expect(await page.getByTestId('preview-chat').locator('span').textContent()).to.equal('Forty new pieces');
    await page.getByRole('button', { name: 'Save the link' }).click();
    await page.getByRole('status').filter({ hasText: 'Link saved.' }).waitFor();
    const html = await until(async () => {
      const answer = await fetch(shortUrl, { redirect: 'manual', headers: { 'User-Agent': 'facebookexternalhit/1.1' } });
      return answer.status === 200 ? answer.text() : false;
    }, 15_000, 'the crawler to get the card');
    expect(html).to.include('<meta property="og:title" content="Summer &lt;sale&gt;">');
    expect(await destination(shortUrl, DESKTOP_UA)).to.equal('https://example.com/summer');
  });

  it('shows the QR code of the short link, fetched as an image blob', async () => {
    const image = page.getByRole('img', { name: 'QR code of the short link spring' });
    await image.waitFor();
    expect(await image.getAttribute('src')).to.match(/^blob:/);
    // Structural types: the test code is type-checked without the DOM library.
    const width = await until(() => image.evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth > 0 && img.naturalWidth), 10_000, 'the QR image to decode');
    expect(width).to.be.greaterThan(100);
    // What the page shows is the short link's QR code: read it back from a screenshot of the image.
    const shot = PNG.sync.read(await image.screenshot());
    expect(jsQR(new Uint8ClampedArray(shot.data), shot.width, shot.height)?.data).to.equal(shortUrl);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download SVG' }).click();
    expect((await download).suggestedFilename()).to.equal('spring-qr.svg');
  });

  it('styles the QR code: colours and the workspace logo uploaded on the Workspace screen, and the code still scans', async () => {
    const image = page.getByRole('img', { name: 'QR code of the short link spring' });
    const scanned = async (before: string | null): Promise<string | null> => {
      // A new style is a new object URL; wait for it and for the image to be decoded.
      await until(async () => (await image.getAttribute('src')) !== before && (await image.evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth > 0)), 10_000, 'the styled QR image');
      const shot = PNG.sync.read(await image.screenshot());
      return jsQR(new Uint8ClampedArray(shot.data), shot.width, shot.height, { inversionAttempts: 'dontInvert' })?.data ?? null;
    };
    let src = await image.getAttribute('src');
    await page.locator('input[name="qr_color"]').fill('#1a237e');
    expect(await scanned(src)).to.equal(shortUrl);
    // Without an uploaded logo the api answers 409, shown in place of the image.
    await page.getByLabel('With the workspace logo').check();
    await page.getByRole('alert').filter({ hasText: 'no QR logo' }).waitFor();

    const editor = page.url();
    await page.goto(`${dashboard.apiUrl}${linkPath.replace(/\/links\/[^/]+$/, '/workspace')}`);
    await page.getByText('No logo uploaded.').waitFor();
    const logo = new PNG({ width: 64, height: 64 });
    for (let i = 0; i < 64 * 64; i++) logo.data.set([200, 0, 0, 255], i * 4);
    await page.getByLabel('Upload a QR logo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: PNG.sync.write(logo) });
    await page.getByRole('status').filter({ hasText: 'QR logo saved.' }).waitFor();
    await page.getByRole('img', { name: 'The workspace QR logo' }).waitFor();

    await page.goto(editor);
    await image.waitFor();
    src = await image.getAttribute('src');
    await page.getByLabel('With the workspace logo').check();
    expect(await scanned(src)).to.equal(shortUrl);
  });

  it('makes a tag and a folder from the editor, and the list filters by them', async () => {
    await page.goto(`${dashboard.apiUrl}${linkPath}`);
    await page.locator('summary', { hasText: 'Tags, folder and note' }).click();
    await page.getByLabel('New tag').fill('promo');
    await page.getByLabel('New tag').press('Enter');
    await page.getByRole('checkbox', { name: 'promo' }).waitFor();
    expect(await page.getByRole('checkbox', { name: 'promo' }).isChecked()).to.equal(true);
    await page.getByLabel('New folder').fill('Seasonal');
    await page.getByRole('button', { name: 'Create the folder' }).click();
    await until(async () => (await page.getByLabel('Folder', { exact: true }).inputValue()) !== '', 10_000, 'the new folder to be selected');
    await page.getByRole('button', { name: 'Save the link' }).click();
    await page.getByRole('status').filter({ hasText: 'Link saved.' }).waitFor();

    await page.goto(`${dashboard.apiUrl}/dashboard/links`);
    await page.getByRole('link', { name: /\/by-keyboard$|\/spring$/ }).first().waitFor();
    const rows = page.getByRole('region', { name: 'Links' }).locator('tbody tr');
    await page.getByLabel('Tag', { exact: true }).selectOption({ label: 'promo' });
    await page.waitForURL((url) => url.searchParams.has('tag'));
    await until(async () => (await rows.count()) === 1, 10_000, 'the tag filter to narrow the list');
    expect(await rows.first().textContent()).to.include('/spring');
    await page.getByLabel('Tag', { exact: true }).selectOption({ label: 'All tags' });
    await page.getByLabel('Folder', { exact: true }).selectOption({ label: 'Seasonal' });
    await page.waitForURL((url) => url.searchParams.has('folder_id') && !url.searchParams.has('tag'));
    await until(async () => (await rows.count()) === 1, 10_000, 'the folder filter to narrow the list');
    expect(await rows.first().textContent()).to.include('/spring');
  });

  it("shows the API's validation error next to the field it names", async () => {
    await page.goto(`${dashboard.apiUrl}/dashboard/links/new`);
    await page.getByLabel('Destination URL').fill('https://example.com/x');
    await page.locator('summary', { hasText: 'Rules' }).click();
    await page.getByRole('button', { name: 'Add a rule' }).click();
    // The browser accepts it as a URL; the API wants http(s): only the API's answer can name the field.
    await page.getByLabel('Redirect URL of Rule 1').fill('ftp://example.com/file');
    await page.getByRole('button', { name: 'Create the link' }).click();
    const field = page.getByLabel('Redirect URL of Rule 1');
    await until(async () => (await field.getAttribute('aria-invalid')) === 'true', 10_000, 'the field to be marked invalid');
    const describedBy = (await field.getAttribute('aria-describedby'))!.split(' ')[0]!;
    const message = await page.locator(`[id="${describedBy}"]`).textContent();
    expect(message).to.be.a('string').and.not.equal('');
    // In words, not as the request's path and the error code.
    const summary = (await page.locator('#link-form-errors').textContent())!;
    expect(summary).to.include('Rule 1, action URL');
    expect(summary).not.to.include('rules[0]');
    expect(summary).not.to.include('validation_failed');
    expect(new URL(page.url()).pathname).to.equal(`/dashboard/w/${dashboard.workspaceId}/links/new`);
  });

  it('imports links from pasted CSV: a preview, then each row created or its failure shown on the row', async () => {
    await page.goto(`${dashboard.apiUrl}/dashboard/links/bulk`);
    await page.getByLabel('Paste CSV').fill(['url,slug,title', 'https://example.com/a,bulk-a,Row A', 'https://example.com/b,spring,Taken slug', 'https://example.com/c,bulk-c,Row C'].join('\n'));
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByText('3 rows: 3 ready, 0 with problems').waitFor();
    await page.getByRole('button', { name: 'Create 3 links' }).click();
    await page.getByRole('link', { name: `${dashboard.redirectUrl}/bulk-c` }).waitFor();
    const rows = page.getByRole('region', { name: 'Rows to import' }).locator('tbody tr');
    expect(await rows.count()).to.equal(3);
    expect(await rows.nth(0).textContent()).to.include(`${dashboard.redirectUrl}/bulk-a`);
    expect(await rows.nth(1).textContent()).to.match(/Failed: .*spring/i);
    expect(await rows.nth(2).textContent()).to.include(`${dashboard.redirectUrl}/bulk-c`);
    expect(await destination(`${dashboard.redirectUrl}/bulk-a`, DESKTOP_UA)).to.equal('https://example.com/a');
    // After the import the page says what happened, and offers no "Create 0 links".
    await page.getByText('3 rows: 2 created, 1 failed, 0 with problems (not imported).').waitFor();
    expect(await page.getByRole('button', { name: /^Create / }).count()).to.equal(0);
  });

  it('flags rows the browser can already tell are wrong, and does not send them', async () => {
    await page.goto(`${dashboard.apiUrl}/dashboard/links/bulk`);
    await page.getByLabel('Paste CSV').fill(['url,slug,tags', 'https://example.com/d,bulk-d,', 'not a url,bulk-e,', 'https://example.com/f,bulk-f,no-such-tag'].join('\n'));
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByText('3 rows: 1 ready, 2 with problems (not imported)').waitFor();
    const rows = page.getByRole('region', { name: 'Rows to import' }).locator('tbody tr');
    expect(await rows.nth(1).textContent()).to.include('url "not a url" is not an http(s) URL');
    expect(await rows.nth(2).textContent()).to.include('tag "no-such-tag" does not exist');
    await page.getByRole('button', { name: 'Create 1 link', exact: true }).click();
    await page.getByRole('link', { name: `${dashboard.redirectUrl}/bulk-d` }).waitFor();
    expect(await destination(`${dashboard.redirectUrl}/bulk-e`, DESKTOP_UA)).to.equal('status 404');
  });

  it('creates a link with the keyboard alone (Tab to the fields, Enter to submit)', async () => {
    await page.goto(`${dashboard.apiUrl}/dashboard/links/new`);
    await page.getByRole('heading', { level: 1, name: 'New link' }).waitFor();
    const focusedName = () => page.evaluate<string>('document.activeElement && (document.activeElement.name || document.activeElement.tagName)');
    for (let presses = 0; (await focusedName()) !== 'url'; presses++) {
      if (presses > 10) throw new Error(`Tab never reached the destination field (at ${await focusedName()})`);
      await page.keyboard.press('Tab');
    }
    await page.keyboard.type('https://example.com/keyboard');
    await page.keyboard.press('Tab'); // the domain
    await page.keyboard.press('Tab'); // the slug
    expect(await focusedName()).to.equal('slug');
    await page.keyboard.type('by-keyboard');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => /^\/dashboard\/w\/[^/]+\/links\/lnk_\w+$/.test(url.pathname));
    await page.getByText(`${dashboard.redirectUrl}/by-keyboard`).first().waitFor();
    expect(await destination(`${dashboard.redirectUrl}/by-keyboard`, DESKTOP_UA)).to.equal('https://example.com/keyboard');
  });

  it('lists links newest first, pages through them, searches, and archives from the list', async () => {
    const key = await dashboard.tenants.aWorkspaceKey(dashboard.workspaceId);
    for (let i = 0; i < 26; i++) {
      const answer = await fetch(`${dashboard.apiUrl}/v1/links`, {
        method: 'POST',
        headers: { ...bearer(key.key), 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `https://example.com/page-${i}`, slug: `page-${String(i).padStart(2, '0')}` }),
      });
      expect(answer.status).to.equal(201);
    }
    await page.goto(`${dashboard.apiUrl}/dashboard/links`);
    const rows = page.getByRole('region', { name: 'Links' }).locator('tbody tr');
    await page.getByRole('link', { name: /\/page-25$/ }).waitFor();
    expect(await rows.count()).to.equal(25);
    expect(await rows.first().textContent()).to.include('/page-25');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2').waitFor();
    await page.getByRole('link', { name: /\/spring$/ }).waitFor();
    expect(await page.getByRole('link', { name: /\/page-25$/ }).count()).to.equal(0);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByRole('link', { name: /\/page-25$/ }).waitFor();

    await page.getByLabel('Search').fill('page-07');
    await page.waitForURL((url) => url.searchParams.get('search') === 'page-07');
    await until(async () => (await rows.count()) === 1, 10_000, 'the search to narrow the list');
    await page.getByRole('button', { name: 'Archive page-07' }).click();
    await page.getByRole('status').filter({ hasText: 'Archived' }).waitFor();
    await page.getByText('No links match').waitFor();
    await page.getByLabel('Status').selectOption('true');
    await page.getByRole('button', { name: 'Restore page-07' }).waitFor();
    expect(new URL(page.url()).searchParams.get('archived')).to.equal('true');
  });

  it('has no serious or critical axe-core violation on the links list and the link editor with every block open', async () => {
    const context = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    const checked = await context.newPage();
    await signInThroughForm(checked, dashboard.apiUrl, dashboard.user);
    await checked.goto(`${dashboard.apiUrl}/dashboard/links`);
    await checked.getByRole('link', { name: /\/page-25$/ }).waitFor();
    const list = await axeOn(checked);
    await checked.goto(`${dashboard.apiUrl}${linkPath}`);
    await checked.getByRole('heading', { level: 1, name: 'Summer sale' }).waitFor();
    await checked.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");
    for (const button of ['Set up an A/B test', 'Set up mobile deep links', 'Set up a rotator', 'Add a targeting entry']) await checked.getByRole('button', { name: button }).click();
    const editor = await axeOn(checked);
    await context.close();
    expect(list, 'links list').to.deep.equal([]);
    expect(editor, 'link editor').to.deep.equal([]);
  });

  it('fits a 375 px wide phone: the list scrolls inside its table, the editor does not overflow', async () => {
    const phone = await dashboard.signedInPage(undefined, { viewport: { width: 375, height: 812 } });
    await phone.getByRole('link', { name: /\/page-25$/ }).waitFor();
    expect(await horizontalOverflow(phone), 'links list').to.equal(0);
    await phone.goto(`${dashboard.apiUrl}${linkPath}`);
    await phone.getByRole('heading', { level: 1, name: 'Summer sale' }).waitFor();
    await phone.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");
    expect(await horizontalOverflow(phone), 'link editor').to.equal(0);
    await phone.goto(`${dashboard.apiUrl}/dashboard/links/bulk`);
    await phone.getByRole('heading', { level: 1, name: 'Import links from CSV' }).waitFor();
    expect(await horizontalOverflow(phone), 'CSV import').to.equal(0);
    await phone.context().close();
  });
});
