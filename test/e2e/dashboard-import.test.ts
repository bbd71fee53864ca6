// Moving links in and out from the dashboard, in real Chromium against real api and worker processes: the links
// list's Export downloads every link of the workspace as CSV and as JSON Lines (through a one-minute download link);
// the Import screen previews a CSV import (a dry run, writing nothing), then runs it in the worker, follows its
// progress to the end and lists the row that failed, and the imported links are in the links list.
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { chromiumMissing } from '../helpers/browser.ts';
import { axeOn, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { bearer } from '../helpers/tenants.ts';
import { until } from '../helpers/wait.ts';

describe('Dashboard export and import', function () {
  this.timeout(180_000);
  let dashboard: Dashboard;
  let page: Page;
  let key: string;
  /** The host name of the links' default domain, as the export writes it. */
  let defaultDomain: string;

  async function call(method: string, path: string, body: Record<string, unknown>): Promise<{ id: string }> {
    const answer = await fetch(`${dashboard.apiUrl}${path}`, { method, headers: { ...bearer(key), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await answer.text();
    expect(answer.status, text).to.be.oneOf([200, 201]);
    return JSON.parse(text) as { id: string };
  }

  async function exportFrom(label: string): Promise<{ name: string; text: string }> {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: label, exact: true }).click()]);
    expect(download.url()).to.match(new RegExp(`^${dashboard.apiUrl}/auth/downloads/[\\w-]+\\.[\\w-]+$`));
    return { name: download.suggestedFilename(), text: await readFile((await download.path()), 'utf8') };
  }

  before(async function () {
    if (chromiumMissing()) this.skip();
    // The worker looks for queued imports every 2 s by default; sooner here, so the test does not sit waiting. The
    // stalled service of the cancel test listens on 127.0.0.1.
    dashboard = await startDashboard({ worker: true, env: { IMPORT_POLL_MS: '100', IMPORT_ALLOW_PRIVATE_SOURCES: 'true' } });
    key = (await dashboard.tenants.aWorkspaceKey(dashboard.workspaceId)).key;
    page = await dashboard.signedInPage();
  });

  after(async () => {
    await dashboard?.stop();
  });

  it('exports every link of the workspace from the links list, as CSV and as JSON Lines', async () => {
    const tag = await call('POST', '/v1/tags', { name: 'season' });
    await call('POST', '/v1/links', { url: 'https://example.com/spring', slug: 'spring', title: 'Spring sale', tag_ids: [tag.id] });
    const summer = await call('POST', '/v1/links', { url: 'https://example.com/summer', slug: 'summer' });
    await call('PATCH', `/v1/links/${summer.id}`, { archived: true });
    await call('POST', '/v1/links', { url: 'https://example.com/autumn', slug: 'autumn' });
    await page.goto(`${dashboard.apiUrl}/dashboard/links`);
    await page.getByRole('link', { name: /\/autumn$/ }).waitFor();

    const csv = await exportFrom('Export CSV');
    expect(csv.name).to.match(/^links-\d{4}-\d{2}-\d{2}\.csv$/);
    const rows = parse<Record<string, string>>(csv.text, { columns: true });
    // Every link, the archived one too (the list shows only the active ones), oldest first.
    expect(rows.map((r) => r.slug)).to.deep.equal(['spring', 'summer', 'autumn']);
    expect(rows[0]).to.include({ url: 'https://example.com/spring', title: 'Spring sale', tags: '["season"]', archived: 'false' });
    expect(rows[1]!.archived).to.equal('true');
    defaultDomain = rows[0]!.domain!;
    await page.getByRole('status').filter({ hasText: 'The CSV export of every link is downloading.' }).waitFor();

    const jsonl = await exportFrom('Export JSON Lines');
    expect(jsonl.name).to.match(/^links-\d{4}-\d{2}-\d{2}\.jsonl$/);
    const lines = jsonl.text.trim().split('\n').map((line) => JSON.parse(line) as { slug: string; url: string; tags: { name: string }[] });
    expect(lines.map((l) => l.slug)).to.deep.equal(['spring', 'summer', 'autumn']);
    expect(lines[0]!.tags.map((t) => t.name)).to.deep.equal(['season']);
  });

  it('previews a CSV import, runs it to the end, lists the row that failed, and the links appear in the list', async () => {
    // Our own CSV (docs/importing/export.md), the columns an import needs and a few more; `spring` is taken already.
    // `moved-one` had been imported into the exporting workspace from Bitly, with its click total there.
    const origin = JSON.stringify({ source: 'bitly', source_id: 'bit.ly/one', job_id: 'imp_old', clicks_total: 1234, imported_at: '2026-01-01T00:00:00.000Z' }).replaceAll('"', '""');
    const csv = [
      'id,domain_id,domain,slug,url,title,tags,imported',
      `lnk_old1,dom_default,${defaultDomain},moved-one,https://example.org/one,Moved one,"[""imported""]","${origin}"`,
      `lnk_old2,dom_default,${defaultDomain},moved-two,https://example.org/two,,[],`,
      `lnk_old3,dom_default,${defaultDomain},spring,https://example.org/clash,,[],`,
    ].join('\r\n');
    // The links list's Import CSV opens the Import screen with our CSV chosen: one path for every import.
    await page.goto(`${dashboard.apiUrl}/dashboard/links`);
    await page.getByRole('button', { name: 'Import CSV' }).click();
    await page.getByRole('heading', { level: 1, name: 'Import links' }).waitFor();
    expect(await page.getByLabel('Source', { exact: true }).inputValue()).to.equal('csv');
    await page.getByLabel('Export file').setInputFiles({ name: 'links.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByText('links.csv:').waitFor();

    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    const preview = page.getByRole('article', { name: 'Preview (dry run): Linkplane CSV' });
    await preview.getByTestId('import-status').filter({ hasText: 'Done' }).waitFor();
    expect(await preview.getByRole('status').textContent()).to.equal('Would create 2 · would fail 1 · already imported 0');
    const previewErrors = preview.getByRole('region', { name: 'Rows that would fail' }).locator('tbody tr');
    await previewErrors.first().waitFor();
    expect(await previewErrors.count()).to.equal(1);
    expect(await previewErrors.first().textContent()).to.include('spring').and.to.include('conflict');
    // A dry run writes nothing.
    const before = (await (await fetch(`${dashboard.apiUrl}/v1/links?search=moved`, { headers: bearer(key) })).json()) as { data: unknown[] };
    expect(before.data).to.have.length(0);

    await page.getByRole('button', { name: 'Start the import' }).click();
    const run = page.getByRole('article', { name: 'Import: Linkplane CSV' });
    await run.getByTestId('import-status').filter({ hasText: 'Done' }).waitFor();
    expect(await run.getByRole('status').textContent()).to.equal('Created 2 · failed 1 · already imported 0');
    const bar = run.locator('progress');
    expect([await bar.getAttribute('value'), await bar.getAttribute('max')]).to.deep.equal(['3', '3']);
    const errors = run.getByRole('region', { name: 'Rows not imported' }).locator('tbody tr');
    await errors.first().waitFor();
    expect(await errors.count()).to.equal(1);
    const cells = await errors.first().locator('td').allTextContents();
    expect(cells.slice(1, 4)).to.deep.equal(['spring', 'default', 'conflict']);
    expect(await run.getByRole('button', { name: /^Cancel/ }).count()).to.equal(0);

    await run.getByRole('button', { name: 'See the links' }).click();
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    await page.getByRole('link', { name: /\/moved-one$/ }).waitFor();
    await page.getByRole('link', { name: /\/moved-two$/ }).waitFor();
    expect(await page.getByRole('row', { name: /moved-one/ }).textContent()).to.include('Moved one').and.to.include('imported');

    // The click total it came with is shown as imported, on the link and beside (not inside) its analytics.
    const moved = (await (await fetch(`${dashboard.apiUrl}/v1/links?search=moved-one`, { headers: bearer(key) })).json()) as { data: Array<{ id: string }> };
    await page.goto(`${dashboard.apiUrl}/dashboard/links/${moved.data[0]!.id}`);
    expect(await page.getByTestId('link-imported').textContent()).to.match(/^1,234 clicks imported from Linkplane CSV on .+\(counted there before the import; not part of this link's analytics\)$/);
    await page.goto(`${dashboard.apiUrl}/dashboard/analytics`);
    expect(await page.getByTestId('imported-csv').textContent()).to.match(/^1,234 clicks imported from Linkplane CSV on .+ \(1 link\)$/);
    expect(await page.getByTestId('tile-clicks').textContent()).to.equal('0');
  });

  it('cancels a running import of a self-hosted service from the screen', async () => {
    // A Shlink server that takes the request and never answers: the job stays running until it is canceled.
    const asked: IncomingMessage[] = [];
    const stalled: Server = createServer((request) => void asked.push(request));
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    try {
      await page.goto(`${dashboard.apiUrl}/dashboard/imports`);
      await page.getByLabel('Source', { exact: true }).selectOption({ label: 'Shlink (REST API)' });
      const start = page.getByRole('button', { name: 'Start the import' });
      await page.getByLabel('API token').fill('shlink-api-key');
      // The base URL is required for a self-hosted service.
      expect(await start.isDisabled()).to.equal(true);
      await page.getByLabel('Base URL').fill(`http://127.0.0.1:${(stalled.address() as AddressInfo).port}`);
      await start.click();
      const run = page.getByRole('article', { name: 'Import: Shlink (REST API)' });
      await run.getByTestId('import-status').filter({ hasText: 'Running' }).waitFor();
      await until(() => asked.length > 0, 30_000, 'the import to call the Shlink server');
      expect(asked[0]!.headers['x-api-key']).to.equal('shlink-api-key');
      await run.getByRole('button', { name: 'Cancel the import' }).click();
      await run.getByTestId('import-status').filter({ hasText: 'Canceled' }).waitFor();
      await page.getByRole('status').filter({ hasText: 'The import was canceled.' }).waitFor();
      expect(await run.getByRole('button', { name: 'Cancel the import' }).count()).to.equal(0);
      const jobs = (await (await fetch(`${dashboard.apiUrl}/v1/imports`, { headers: bearer(key) })).json()) as { data: { source: string; status: string }[] };
      expect(jobs.data[0]).to.include({ source: 'shlink', status: 'canceled' });
    } finally {
      stalled.closeAllConnections();
      await new Promise<void>((resolve) => stalled.close(() => resolve()));
    }
  });

  it('has no serious or critical axe-core violation on the Import screen, with a job and its errors shown', async () => {
    const context = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    const checked = await context.newPage();
    await signInThroughForm(checked, dashboard.apiUrl, dashboard.user);
    await checked.goto(`${dashboard.apiUrl}/dashboard/imports`);
    await checked.getByLabel('Source', { exact: true }).selectOption({ label: 'YOURLS' });
    await checked.getByLabel('Base URL').waitFor();
    const service = await axeOn(checked);
    await checked.getByLabel('Source', { exact: true }).selectOption({ label: 'Linkplane CSV' });
    const csv = `id,domain_id,domain,slug,url\r\nlnk_x,dom_default,${defaultDomain},spring,https://example.org/x\r\n`;
    await checked.getByLabel('Export file').setInputFiles({ name: 'clash.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await checked.getByText('clash.csv:').waitFor();
    await checked.getByRole('button', { name: 'Preview (dry run)' }).click();
    await checked.getByRole('region', { name: 'Rows that would fail' }).locator('tbody tr').first().waitFor();
    const withJob = await axeOn(checked);
    await context.close();
    expect({ service, withJob }).to.deep.equal({ service: [], withJob: [] });
  });

  it('fits a 375 px wide phone: the Import screen with a job shown does not overflow', async () => {
    const phone = await dashboard.signedInPage(undefined, { viewport: { width: 375, height: 740 } });
    await phone.goto(`${dashboard.apiUrl}/dashboard/imports`);
    await phone.getByLabel('Source', { exact: true }).selectOption({ label: 'Linkplane CSV' });
    const csv = `id,domain_id,domain,slug,url\r\nlnk_y,dom_default,${defaultDomain},spring,https://example.org/y\r\n`;
    await phone.getByLabel('Export file').setInputFiles({ name: 'phone.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await phone.getByText('phone.csv:').waitFor();
    await phone.getByRole('button', { name: 'Preview (dry run)' }).click();
    await phone.getByRole('region', { name: 'Rows that would fail' }).locator('tbody tr').first().waitFor();
    expect(await horizontalOverflow(phone)).to.equal(0);
    await phone.context().close();
  });
});
