// Every route the dashboard declares (read from the areas' own route files, so a new screen cannot be missed), in
// every kind of context it works in, in real Chromium: axe-core with 0 moderate, serious or critical findings, also
// with the confirmation dialogs open, and no sideways scrolling at 375 px. The main screens are photographed at
// 1280 × 800 and 390 × 844 into test-output/screenshots/ (kept out of git) for people to look at.
import { expect } from 'chai';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../helpers/browser.ts';
import { axeOn, horizontalOverflow } from '../helpers/dashboard-checks.ts';
import { signInThroughForm, startDashboard, type Dashboard } from '../helpers/dashboard.ts';
import { ROOT } from '../helpers/processes.ts';
import { bearer } from '../helpers/tenants.ts';

type Kind = 'workspace' | 'partner';
/** What an area file exports (web/src/area.ts), structurally: its types would bring the DOM's into this program. */
interface Area {
  routes: { path: string }[];
  nav: { path: string; kinds: Kind[] }[];
}

const SCREENSHOTS = join(ROOT, 'test-output', 'screenshots');
/** The screens photographed (at both sizes), by path below the context. */
const MAIN_SCREENS = new Set(['/links', '/links/new', '/links/:id', '/analytics', '/domains', '/keys', '/webhooks', '/workspace', '/members', '/partner', '/partner/clients', '/partner/plans']);

/** Every area's routes and navigation entries, as the app assembles them (web/src/routes.tsx). */
async function declaredRoutes(): Promise<{ path: string; kinds: Kind[] }[]> {
  const screens = join(ROOT, 'web', 'src', 'screens');
  const areas: Area[] = [];
  for (const folder of await readdir(screens)) {
    for (const file of (await readdir(join(screens, folder))).filter((f) => f.endsWith('.routes.ts'))) {
      const module = (await import(join(screens, folder, file))) as Record<string, Area>;
      areas.push(...Object.values(module));
    }
  }
  const nav = areas.flatMap((a) => a.nav);
  // As kindsOf in routes.tsx: the kinds of the longest navigation entry the page sits under.
  const kindsOf = (path: string): Kind[] => {
    const entry = nav.filter((e) => path === e.path || path.startsWith(`${e.path}/`)).sort((a, b) => b.path.length - a.path.length)[0];
    return entry?.kinds ?? ['workspace', 'partner'];
  };
  return areas.flatMap((a) => a.routes).map((r) => ({ path: r.path, kinds: kindsOf(r.path) }));
}

describe('Dashboard: every screen, accessible and photographed', function () {
  this.timeout(900_000);
  let dashboard: Dashboard;
  let page: Page;
  const ids: Record<string, string> = {};
  const shots: string[] = [];

  before(async function () {
    if (chromiumMissing()) this.skip();
    // The webhook's receiver is a local address nobody listens on: it is only listed, never delivered to.
    dashboard = await startDashboard({ partner: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    const { key } = await dashboard.tenants.aWorkspaceKey(dashboard.workspaceId);
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${dashboard.apiUrl}/v1${path}`, { method: 'POST', headers: { ...bearer(key), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).to.equal(201);
      return (await res.json()) as { id: string };
    };
    ids['/links/:id'] = (await post('/links', { url: 'https://example.com/spring-sale', slug: 'spring-sale', title: 'Spring sale' })).id;
    await post('/links', { url: 'https://example.com/autumn', slug: 'autumn' });
    // The consent page of a request no app made: it must still read well (it says the request is unknown or over).
    ids['/authorize/:uid'] = 'no-such-request';
    ids['/webhooks/:id'] = (await post('/webhooks', { url: 'http://127.0.0.1:9/linkplane', name: 'Receiver', events: ['link.created'] })).id;
    const context = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await signInThroughForm(page, dashboard.apiUrl, dashboard.user);
    await mkdir(SCREENSHOTS, { recursive: true });
  });

  after(async () => {
    if (shots.length > 0) console.log(`      screenshots in ${SCREENSHOTS}:\n${shots.map((s) => `        ${s}`).join('\n')}`);
    await dashboard?.stop();
  });

  const settled = async () => {
    await page.locator('main#main h1').first().waitFor();
    await page.waitForFunction(`!document.querySelector('[aria-busy="true"]')`);
  };

  const photograph = async (name: string) => {
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await settled();
      const file = `${name}-${width}x${height}.png`;
      await page.screenshot({ path: join(SCREENSHOTS, file) });
      shots.push(file);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  };

  /** axe (moderate and worse) at desktop width, then no sideways scrolling at 375 px. */
  const audit = async (label: string) => {
    await settled();
    expect(await axeOn(page, 'moderate'), `axe on ${label}`).to.deep.equal([]);
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await horizontalOverflow(page), `sideways overflow at 375 px on ${label}`).to.equal(0);
    await page.setViewportSize({ width: 1280, height: 800 });
  };

  /** Opens a confirmation dialog with `open`, checks it with axe, and closes it with Escape. */
  const auditDialog = async (label: string, open: () => Promise<void>) => {
    await open();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await axeOn(page, 'moderate'), `axe on ${label}`).to.deep.equal([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  };

  /** What to open on a screen after checking it as it loads. */
  const DIALOGS: Record<string, () => Promise<void>> = {
    '/links': async () => {
      await auditDialog('/links, delete dialog', () => page.getByRole('button', { name: 'Delete autumn' }).click());
      await page.getByRole('checkbox', { name: 'Select autumn' }).check();
      await page.getByRole('region', { name: 'Selected links' }).waitFor();
      await audit('/links with the bulk bar');
      await auditDialog('/links, bulk delete dialog', () => page.getByRole('region', { name: 'Selected links' }).getByRole('button', { name: 'Delete' }).click());
    },
    '/links/:id': () => auditDialog('/links/:id, delete dialog', () => page.getByRole('button', { name: 'Delete', exact: true }).click()),
    '/keys': () => auditDialog('/keys, revoke dialog', () => page.getByRole('button', { name: /^Revoke/ }).first().click()),
    '/webhooks/:id': () => auditDialog('/webhooks/:id, delete dialog', () => page.getByRole('button', { name: 'Delete', exact: true }).click()),
  };

  it('checks every declared route in every context it works in, with dialogs open, and photographs the main ones', async () => {
    const routes = await declaredRoutes();
    expect(routes.length).to.be.at.least(20);
    const unopenable = routes.filter((r) => r.path.includes(':') && !ids[r.path]).map((r) => r.path);
    expect(unopenable, 'routes with a parameter this test does not know how to fill: add them to `ids`').to.deep.equal([]);
    const checked: string[] = [];
    for (const kind of ['workspace', 'partner'] as const) {
      const context = kind === 'workspace' ? `w/${dashboard.workspaceId}` : `p/${dashboard.partnerId}`;
      for (const route of routes.filter((r) => r.kinds.includes(kind))) {
        const path = route.path.includes(':') ? route.path.replace(/:[a-z_]+/, ids[route.path]!) : route.path;
        await page.goto(`${dashboard.apiUrl}/dashboard/${context}${path}`);
        await audit(`${kind} ${route.path}`);
        if (MAIN_SCREENS.has(route.path) && !(kind === 'partner' && shots.some((s) => s.startsWith(`workspace${route.path.replace(/[/:]+/g, '-')}-`)))) {
          await photograph(`${kind}${route.path.replace(/[/:]+/g, '-')}`);
        }
        if (kind === 'workspace' && DIALOGS[route.path]) await DIALOGS[route.path]!();
        checked.push(`${kind} ${route.path}`);
      }
    }
    // The public pages, signed out.
    const signedOut = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 800 } });
    const previous = page;
    page = await signedOut.newPage();
    try {
      await page.goto(`${dashboard.apiUrl}/dashboard/sign-in`);
      await page.locator('form[data-ready] button[type=submit]:enabled').waitFor();
      await audit('/sign-in');
      await photograph('sign-in');
      await page.goto(`${dashboard.apiUrl}/dashboard/accept-invite?token=x`);
      await page.getByRole('button', { name: 'Join' }).waitFor();
      await audit('/accept-invite');
    } finally {
      await signedOut.close();
      page = previous;
    }
    console.log(`      checked ${checked.length} screens: ${checked.join(', ')}`);
  });
});
