// The Analytics screen in real Chromium against real api, redirect and worker processes: a link created through
// the API, followed on the redirect over real HTTP, and its click seen in the tiles, the chart's table, the
// breakdowns and the top links; range, time zone, bots and filters change what is shown; the CSV export downloads.
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { axeOn, checkAccessibility, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { bearer } from '../helpers/tenants.ts';
import { until } from '../helpers/wait.ts';

const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

interface Link {
  id: string;
  short_url: string;
}

/** Presses Tab until the focused element matches (keyboard only, without counting stops that may change). */
async function tabTo(page: Page, test: string, what: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(`(() => { const el = document.activeElement; return !!el && (${test}); })()`)) === true) return;
  }
  throw new Error(`Tab never reached ${what}`);
}

/** Today's date in a zone, as a date input takes it. */
function today(zone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}

describe('Dashboard analytics screen', function () {
  this.timeout(360_000);
  let dashboard: Dashboard;
  let link: Link;
  let other: Link;

  before(async function () {
    if (chromiumMissing()) this.skip();
    // Without any GeoIP source (the packaged open data turned off), so the screen must say why countries are unknown.
    dashboard = await startDashboard({ redirect: true, worker: true, partner: true, env: { GEOIP_OPEN_DATA: 'false' } });
    const { key } = await dashboard.tenants.aWorkspaceKey(dashboard.workspaceId);
    const create = async (url: string): Promise<Link> => {
      const res = await fetch(`${dashboard.apiUrl}/v1/links`, { method: 'POST', headers: { ...bearer(key), 'Content-Type': 'application/json' }, body: JSON.stringify({ url }) });
      expect(res.status, await res.clone().text()).to.equal(201);
      return (await res.json()) as Link;
    };
    link = await create('https://example.com/spring-sale?utm_source=newsletter');
    other = await create('https://example.com/other');
    // A person follows the short link on the redirect port, from Hacker News.
    const visit = await fetch(link.short_url, { redirect: 'manual', headers: { 'User-Agent': DESKTOP, Referer: 'https://news.ycombinator.com/item?id=1' } });
    expect(visit.status, dashboard.output()).to.be.oneOf([301, 302, 307, 308]);
    expect(visit.headers.get('location')).to.equal('https://example.com/spring-sale?utm_source=newsletter');
    // Analytics read rollups the worker writes after ingesting the click.
    await until(
      async () => {
        const res = await fetch(`${dashboard.apiUrl}/v1/analytics/summary?interval=24h&link_id=${link.id}`, { headers: bearer(key) });
        return ((await res.json()) as { clicks: number }).clicks === 1;
      },
      60_000,
      'the click in the analytics rollups',
    );
  });

  after(async () => {
    await dashboard?.stop();
  });

  const tile = (page: Page, name: string) => page.getByTestId(`tile-${name}`);

  it('shows the click of a followed link in the tiles, the chart and its table, the breakdowns and the top links', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics`);
    await page.getByRole('heading', { level: 1, name: 'Analytics' }).waitFor();
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    expect(await tile(page, 'unique_visitors').textContent()).to.equal('1');
    // The chart is drawn (uPlot's canvas) and described for screen readers.
    const chart = page.getByTestId('timeseries-chart');
    expect(await chart.locator('canvas').count()).to.be.greaterThan(0);
    expect(await chart.getAttribute('aria-label')).to.match(/^Clicks and unique visitors per day, \d+ buckets, 1 clicks in all; most on \d{4}-\d{2}-\d{2} \(1\)$/);
    await page.getByText('Show the numbers as a table').click();
    const table = page.getByRole('table', { name: /^Clicks per day/ });
    const rowsWithClicks = await table.getByRole('row').filter({ has: page.getByRole('cell', { name: '1', exact: true }) }).count();
    expect(rowsWithClicks).to.equal(1);

    const top = page.getByRole('table', { name: 'Links with most clicks' });
    await top.waitFor();
    expect(await top.getByRole('row').count(), 'heading row and the one clicked link').to.equal(2);
    expect(await top.textContent()).to.include(link.short_url).and.not.include(other.short_url);

    await page.getByLabel('Break down by').selectOption('referer');
    await page.getByRole('table', { name: 'Clicks by referring site' }).getByRole('button', { name: 'news.ycombinator.com' }).waitFor();
    await page.getByLabel('Break down by').selectOption('utm_source');
    await page.getByRole('table', { name: 'Clicks by utm source' }).getByText('newsletter').waitFor();
    await page.getByLabel('Break down by').selectOption('device');
    await page.getByRole('table', { name: 'Clicks by device' }).getByText('desktop').waitFor();
    await page.context().close();
  });

  it('shows countries, devices, browsers and referrers at once, with each value’s figures on hover and keyboard focus', async () => {
    const context = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signInThroughForm(page, dashboard.apiUrl, dashboard.user);
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics`);
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    for (const title of ['Countries', 'Devices', 'Browsers', 'Referring sites']) await page.getByRole('region', { name: title }).waitFor();
    await page.getByRole('region', { name: 'Devices' }).getByRole('button', { name: /^Desktop/ }).waitFor();
    await page.getByRole('region', { name: 'Browsers' }).getByRole('button', { name: /^Chrome/ }).waitFor();
    // This installation has no GeoIP database: the country is unknown, and the panel says why.
    const countries = page.getByRole('region', { name: 'Countries' });
    await countries.getByText('Unknown (not recorded)', { exact: true }).waitFor();
    expect(await countries.textContent()).to.include('turned the packaged open data off (GEOIP_OPEN_DATA=false)');
    // Unique visitors are marked as what they are.
    expect(await page.getByTestId('unique-visitors-estimate').textContent()).to.match(/^(Estimate, ±[\d.]+ %|Exact count)$/);

    // Hover: the referrer's figures appear beside it.
    const referrer = page.getByRole('region', { name: 'Referring sites' }).getByRole('button', { name: /^news\.ycombinator\.com/ });
    await referrer.hover();
    const tip = page.getByRole('region', { name: 'Referring sites' }).getByRole('tooltip');
    await tip.waitFor({ state: 'visible' });
    expect(await tip.textContent()).to.equal('news.ycombinator.com: 1 click, 100.0 % of all; 1 unique visitor');
    expect(await referrer.getAttribute('aria-describedby')).to.equal(await tip.getAttribute('id'));
    // Keyboard: focus alone shows it too.
    await page.mouse.move(0, 0);
    await tip.waitFor({ state: 'hidden' });
    await referrer.focus();
    await tip.waitFor({ state: 'visible' });

    // The chart: focused from the keyboard it shows the last bucket; the arrow keys step through the others.
    await page.getByTestId('chart-frame').focus();
    const chartTip = page.getByTestId('chart-tooltip');
    const last = await chartTip.textContent();
    expect(last).to.match(/^\d{4}-\d{2}-\d{2}: [\d,]+ clicks?, [\d,]+ unique visitors? \(estimate\)$/);
    await page.keyboard.press('Home');
    expect(await chartTip.textContent()).not.to.equal(last);
    let found = false;
    for (let i = 0; i < 31 && !found; i++) {
      found = /: 1 click, 1 unique visitor/.test((await chartTip.textContent()) ?? '');
      if (!found) await page.keyboard.press('ArrowRight');
    }
    expect(found, 'the bucket holding the click, reached with the arrow keys').to.equal(true);
    // Hovering the canvas shows a bucket too.
    const box = (await page.getByTestId('timeseries-chart').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    expect(await chartTip.textContent()).to.match(/^\d{4}-\d{2}-\d{2}: /);

    expect(await axeOn(page, 'moderate'), 'axe on /analytics').to.deep.equal([]);
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await horizontalOverflow(page), 'sideways overflow at 375 px on /analytics').to.equal(0);
    await context.close();
  });

  it('opens one link’s analytics from the top links, at a URL the links screen can point to', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics`);
    await page.getByRole('table', { name: 'Links with most clicks' }).getByRole('button', { name: link.short_url }).click();
    await page.waitForURL((url) => url.searchParams.get('link_id') === link.id);
    await page.getByRole('heading', { level: 1, name: `Analytics of ${link.short_url.replace(/^https?:\/\//, '')}` }).waitFor();
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();

    // The link's own page leads here, and back.
    await page.getByRole('link', { name: 'Edit the link' }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/w/${dashboard.workspaceId}/links/${link.id}`);
    await page.goto(`${dashboard.apiUrl}/dashboard/links/${other.id}`);
    await page.getByRole('link', { name: 'Analytics of this link' }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/w/${dashboard.workspaceId}/analytics` && url.searchParams.get('link_id') === other.id);
    await page.getByRole('heading', { level: 1, name: `Analytics of ${other.short_url.replace(/^https?:\/\//, '')}` }).waitFor();
    await tile(page, 'clicks').filter({ hasText: /^0$/ }).waitFor();
    await page.context().close();
  });

  it('follows the time zone, the range presets and custom dates, and the bots toggle', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics?link_id=${link.id}`);
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();

    await page.getByLabel('Time zone').selectOption('Asia/Tehran');
    await page.waitForURL((url) => url.searchParams.get('timezone') === 'Asia/Tehran');
    await page.locator('.range-note').filter({ hasText: '(Asia/Tehran)' }).first().waitFor();
    // Tehran is UTC+03:30: every bucket of the answer starts at its midnight, and the click is still there.
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();

    await page.getByLabel('Range').selectOption('24h');
    await page.waitForURL((url) => url.searchParams.get('interval') === '24h');
    await page.getByText('Show the numbers as a table').click();
    await page.getByRole('table', { name: 'Clicks per hour (Asia/Tehran)' }).waitFor();
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();

    // Custom dates: today in the zone holds the click; the same day a year ago, none.
    const day = today('Asia/Tehran');
    await page.getByLabel('Range').selectOption('custom');
    await page.getByLabel('From').fill(day);
    await page.getByLabel('To (included)').fill(day);
    await page.getByRole('button', { name: 'Apply dates' }).click();
    await page.waitForURL((url) => url.searchParams.get('from') === day && url.searchParams.get('to') === day);
    await page.locator('.range-note').filter({ hasText: `${day} 00:00 – ` }).first().waitFor();
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    const yearAgo = `${Number(day.slice(0, 4)) - 1}${day.slice(4)}`;
    await page.getByLabel('From').fill(yearAgo);
    await page.getByLabel('To (included)').fill(yearAgo);
    await page.getByRole('button', { name: 'Apply dates' }).click();
    await page.waitForURL((url) => url.searchParams.get('from') === yearAgo);
    await tile(page, 'clicks').filter({ hasText: /^0$/ }).waitFor();
    // A first day after the last is refused before any request.
    await page.getByLabel('From').fill(day);
    expect(await page.getByRole('button', { name: 'Apply dates' }).isDisabled()).to.equal(true);
    await page.getByRole('alert').filter({ hasText: 'The first day must not come after the last.' }).waitFor();

    await page.getByLabel('Range').selectOption('7d');
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    // The visit came from a desktop browser: people only and everything count it, bots only does not.
    await page.getByRole('radio', { name: 'Bots only' }).check();
    await page.waitForURL((url) => url.searchParams.get('bots') === 'only');
    await tile(page, 'clicks').filter({ hasText: /^0$/ }).waitFor();
    await page.getByRole('radio', { name: 'People and bots' }).check();
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    await page.context().close();
  });

  it('adds and removes filters from the keyboard alone', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics`);
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    await tabTo(page, "el.tagName === 'SUMMARY' && el.textContent === 'Add a filter'", 'the filter form');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.tagName')).to.equal('SELECT');
    // Typing on a focused select picks the option that starts with the letters.
    await page.keyboard.type('Device');
    expect(await page.getByLabel('Filter on').inputValue()).to.equal('device');
    await page.keyboard.press('Tab');
    await page.keyboard.type('mobile');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('device') === 'mobile');
    await tile(page, 'clicks').filter({ hasText: /^0$/ }).waitFor();
    const remove = page.getByRole('button', { name: 'Remove the filter Device mobile' });
    await remove.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => !url.searchParams.has('device'));
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();

    // A value in a breakdown narrows the screen to it.
    await page.getByLabel('Break down by').selectOption('referer');
    await page.getByRole('table', { name: 'Clicks by referring site' }).getByRole('button', { name: 'news.ycombinator.com' }).click();
    await page.waitForURL((url) => url.searchParams.get('referer') === 'news.ycombinator.com');
    await page.getByRole('list', { name: 'Filters in force' }).getByText('news.ycombinator.com').waitFor();
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    await page.context().close();
  });

  it('downloads the CSV export with the screen’s range and filters', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics?interval=7d&link_id=${link.id}`);
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).to.match(/^clicks-\d{4}-\d{2}-\d{2}\.csv$/);
    // Followed as a link (the browser writes it to disk as it arrives), not fetched into the page's memory first.
    expect(download.url()).to.match(new RegExp(`^${dashboard.apiUrl}/auth/downloads/[\\w-]+\\.[\\w-]+$`));
    const csv = await readFile((await download.path()), 'utf8');
    const lines = csv.trim().split(/\r?\n/);
    expect(lines[0]).to.include('link_id');
    expect(lines).to.have.length(2);
    expect(lines[1]).to.include(link.id);
    await page.getByRole('status').filter({ hasText: 'The CSV export is downloading.' }).waitFor();

    // Another link's export holds no click.
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics?interval=7d&link_id=${other.id}`);
    await tile(page, 'clicks').filter({ hasText: /^0$/ }).waitFor();
    const [empty] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect((await readFile((await empty.path()), 'utf8')).trim().split(/\r?\n/)).to.have.length(1);
    await page.context().close();
  });

  it('shows a partner the traffic across its clients, broken down by client', async () => {
    const page = await dashboard.signedInPage();
    await page.getByLabel('Workspace or partner in view').selectOption({ value: dashboard.partnerId! });
    await page.waitForURL((url) => url.pathname === `/dashboard/p/${dashboard.partnerId}/partner`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
    await page.getByText('Traffic across every client workspace of').waitFor();
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    await page.getByLabel('Break down by').selectOption('client');
    await page.getByRole('table', { name: 'Clicks by client' }).getByText(`Acme (${dashboard.workspaceId})`).waitFor();
    // Top links and the raw click export are workspace features.
    expect(await page.getByRole('button', { name: 'Export CSV' }).count()).to.equal(0);
    expect(await page.getByRole('heading', { name: 'Top links' }).count()).to.equal(0);
    await page.context().close();

    const violations = await checkAccessibility(dashboard, `${dashboard.apiUrl}/dashboard/analytics`, dashboard.user, async (axePage) => {
      await axePage.getByLabel('Workspace or partner in view').selectOption({ value: dashboard.partnerId! });
      await axePage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
      await tile(axePage, 'clicks').filter({ hasText: /^1$/ }).waitFor();
      await axePage.getByLabel('Break down by').selectOption('client');
      await axePage.getByRole('table', { name: 'Clicks by client' }).waitFor();
    });
    expect(violations).to.deep.equal([]);
  });

  it('has no serious or critical axe-core violation, with the table, filters and custom range open', async () => {
    const violations = await checkAccessibility(dashboard, `${dashboard.apiUrl}/dashboard/analytics?device=desktop`, dashboard.user, async (page) => {
      await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
      await page.getByText('Show the numbers as a table').click();
      await page.getByText('Add a filter').click();
      await page.getByLabel('Range').selectOption('custom');
      await page.getByRole('table', { name: 'Links with most clicks' }).waitFor();
    });
    expect(violations).to.deep.equal([]);
  });

  it('fits a 375 px wide phone without sideways scrolling', async () => {
    const page = await dashboard.signedInPage(undefined, { viewport: { width: 375, height: 812 } });
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics`);
    await tile(page, 'clicks').filter({ hasText: /^1$/ }).waitFor();
    await page.getByRole('table', { name: 'Links with most clicks' }).waitFor();
    await page.getByText('Show the numbers as a table').click();
    expect(await horizontalOverflow(page)).to.equal(0);
    await page.context().close();
  });
  // Last: its click would change the counts the tests above read.
  it('shows a click in the live feed as it happens', async () => {
    const page = await dashboard.signedInPage();
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics`);
    await page.getByRole('heading', { level: 1, name: 'Analytics' }).waitFor();
    await page.getByRole('button', { name: 'Watch live' }).click();
    await page.getByText('Waiting for the next click…').waitFor();
    const visit = await fetch(other.short_url, { redirect: 'manual', headers: { 'User-Agent': DESKTOP } });
    expect(visit.status).to.be.oneOf([301, 302, 307, 308]);
    const row = page.getByTestId('live-click').first();
    await row.waitFor({ timeout: 15_000 });
    const slug = new URL(other.short_url).pathname;
    expect(await row.textContent()).to.include(slug).and.include('human').and.include('→ https://example.com/other');
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.context().close();
  });
});
