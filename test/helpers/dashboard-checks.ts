// Checks every dashboard screen's tests share: axe-core accessibility, phone-width overflow, first-load figures.
import { createRequire } from 'node:module';
import type { Page, Response } from 'playwright-core';
import type { Dashboard, DashboardUser } from './dashboard.ts';
import { signInThroughForm } from './dashboard.ts';

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core on `url` (signed in as `account` unless null) after `prepare`, and returns the serious and critical
 * violations. axe is injected as a script, which the dashboard's CSP forbids; so this page alone bypasses the CSP.
 */
export async function checkAccessibility(
  dashboard: Dashboard,
  url: string,
  account: DashboardUser | null,
  prepare: (page: Page) => Promise<void> = () => Promise.resolve(),
  viewport = { width: 1280, height: 900 },
): Promise<AxeViolation[]> {
  const context = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport });
  try {
    const page = await context.newPage();
    if (account) await signInThroughForm(page, dashboard.apiUrl, account);
    await page.goto(url);
    await prepare(page);
    return await axeOn(page);
  } finally {
    await context.close();
  }
}

/** Which axe findings count: serious and critical by default; `moderate` adds the moderate ones. */
export type AxeThreshold = 'serious' | 'moderate';

/** axe-core on the page as it is now (its context must bypass the CSP); the violations at or above `threshold`. */
export async function axeOn(page: Page, threshold: AxeThreshold = 'serious'): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: AXE_PATH });
  // A string: the test code is type-checked without the DOM library.
  const result = await page.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')),
    })))`);
  const counted = threshold === 'moderate' ? ['moderate', 'serious', 'critical'] : ['serious', 'critical'];
  return result.filter((v) => v.impact !== null && counted.includes(v.impact));
}

/** How many pixels the page is wider than the viewport (0: no sideways scrolling). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - document.documentElement.clientWidth');
}

export interface FirstLoad {
  /** Compressed bytes of JavaScript transferred (response bodies as sent). */
  jsBytes: number;
  jsFiles: number;
  cssBytes: number;
  /** Scripts sent without Content-Encoding (the server leaves very small files as they are). */
  uncompressedJs: number;
  /** File names of the scripts loaded. */
  scripts: string[];
  /** From navigation start to `readySelector` present. */
  interactiveMs: number;
}

/**
 * Loads `url` in a fresh context with an empty cache (signed in through /auth/sign-in first when `account` is
 * given, so no asset is cached) and measures what the first load transferred and when it became usable.
 */
export async function firstLoad(dashboard: Dashboard, account: DashboardUser | null, url: string, readySelector: string): Promise<FirstLoad> {
  const context = await dashboard.browser.browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    if (account) {
      const answer = await context.request.post(`${dashboard.apiUrl}/auth/sign-in`, { data: account, headers: { Origin: dashboard.apiUrl } });
      if (!answer.ok()) throw new Error(`sign-in answered ${answer.status()}: ${await answer.text()}`);
    }
    const page = await context.newPage();
    const responses: Response[] = [];
    page.on('response', (response) => responses.push(response));
    await page.goto(url);
    await page.waitForSelector(readySelector);
    const interactiveMs = await page.evaluate<number>('performance.now()');
    await page.waitForLoadState('networkidle');
    let jsBytes = 0;
    let jsFiles = 0;
    let cssBytes = 0;
    let uncompressedJs = 0;
    const scripts: string[] = [];
    for (const response of responses) {
      const type = response.request().resourceType();
      if (type !== 'script' && type !== 'stylesheet') continue;
      const sizes = await response.request().sizes();
      if (type === 'stylesheet') {
        cssBytes += sizes.responseBodySize;
        continue;
      }
      jsBytes += sizes.responseBodySize;
      jsFiles += 1;
      scripts.push(new URL(response.url()).pathname.split('/').pop()!);
      if (!(await response.headerValue('content-encoding'))) uncompressedJs += 1;
    }
    return { jsBytes, jsFiles, cssBytes, uncompressedJs, scripts, interactiveMs };
  } finally {
    await context.close();
  }
}
