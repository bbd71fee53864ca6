// Moving links in and out from the dashboard, in real Chromium against real api and worker processes: the links
// list's Export downloads every link of the workspace as CSV and as JSON Lines (through a one-minute download link).
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { chromiumMissing } from '../helpers/browser.ts';
import { startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { bearer } from '../helpers/tenants.ts';

describe('Dashboard export and import', function () {
  this.timeout(180_000);
  let dashboard: Dashboard;
  let page: Page;
  let key: string;

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
    dashboard = await startDashboard({ worker: true });
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
    await page.getByRole('status').filter({ hasText: 'The CSV export of every link is downloading.' }).waitFor();

    const jsonl = await exportFrom('Export JSON Lines');
    expect(jsonl.name).to.match(/^links-\d{4}-\d{2}-\d{2}\.jsonl$/);
    const lines = jsonl.text.trim().split('\n').map((line) => JSON.parse(line) as { slug: string; url: string; tags: { name: string }[] });
    expect(lines.map((l) => l.slug)).to.deep.equal(['spring', 'summer', 'autumn']);
    expect(lines[0]!.tags.map((t) => t.name)).to.deep.equal(['season']);
  });
});
