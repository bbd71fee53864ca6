// One signed-in page that walks a suite's screens through the shared checks (dashboard-checks.ts): axe-core at
// desktop width and no sideways scrolling at 375 × 812. Signing in once per suite instead of once per screen keeps
// the suites quick (every sign-in runs the password KDF). And `tabTo`, for forms driven by the keyboard alone.
import { expect } from 'chai';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { signInThroughForm, type Dashboard, type DashboardUser } from './dashboard.ts';
import { axeOn, horizontalOverflow, type AxeViolation } from './dashboard-checks.ts';

export class ScreenAudit {
  private readonly context: BrowserContext;
  readonly page: Page;
  private readonly apiUrl: string;

  private constructor(context: BrowserContext, page: Page, apiUrl: string) {
    this.context = context;
    this.page = page;
    this.apiUrl = apiUrl;
  }

  /** axe is injected as a script, which the dashboard's CSP forbids; so this context alone bypasses the CSP. */
  static async open(dashboard: Dashboard, account: DashboardUser = dashboard.user): Promise<ScreenAudit> {
    const context = await dashboard.browser.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signInThroughForm(page, dashboard.apiUrl, account);
    return new ScreenAudit(context, page, dashboard.apiUrl);
  }

  /** Opens a screen (a path below /dashboard), waits for `ready` (its heading by default) and checks it. */
  async check(path: string, ready?: (page: Page) => Locator): Promise<void> {
    await this.page.setViewportSize({ width: 1280, height: 900 });
    await this.page.goto(`${this.apiUrl}/dashboard${path}`);
    await (ready ? ready(this.page) : this.page.locator('h1#page-title')).first().waitFor();
    await this.checkHere(path);
  }

  /** Checks the screen as it is now (after opening a form or a dialog, say). */
  async checkHere(label: string): Promise<void> {
    // Strings, not functions: the test code is type-checked without the DOM library.
    await this.page.waitForFunction(`!document.querySelector('[aria-busy="true"]')`);
    expect(await this.axe(), `axe on ${label}`).to.deep.equal([]);
    await this.page.setViewportSize({ width: 375, height: 812 });
    expect(await horizontalOverflow(this.page), `sideways overflow at 375 px on ${label}`).to.equal(0);
    await this.page.setViewportSize({ width: 1280, height: 900 });
  }

  async axe(): Promise<AxeViolation[]> {
    return axeOn(this.page);
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}

/**
 * Moves the focus with Tab alone until `target` has it, as a keyboard user would; fails when it is not reachable
 * within `maxPresses`.
 */
export async function tabTo(page: Page, target: Locator, maxPresses = 60): Promise<void> {
  await target.waitFor();
  for (let i = 0; i < maxPresses; i++) {
    if (await target.evaluate((element) => element === element.ownerDocument.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`not reachable with Tab within ${maxPresses} presses: ${String(target)}`);
}
