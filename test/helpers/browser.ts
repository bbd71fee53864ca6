// Headless Chromium for tests of the pages visitors see (DESIGN, "Browser"): Debian's `chromium` driven by
// playwright-core, so the tests exercise a real browser engine with its real CSP, form and navigation handling.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or null when they can. A machine without Chromium gets this one message,
 * from one test (test/e2e/chromium.test.ts); the browser suites skip themselves rather than repeat it as hook errors.
 */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM_PATH) ? null : `Chromium not found at ${CHROMIUM_PATH}: apt-get install chromium (Debian), or set CHROMIUM_PATH`;
}

/** Quiet and offline: no GPU, no QUIC, no first-run or update traffic that could reach the network. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  browser: Browser;
  /** A page in its own context: no cookies or storage shared with other pages. Closed by `close()`. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** One Chromium for a suite (`before`), with a throwaway profile that playwright creates and deletes. */
export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS] });
  const contexts = new Set<BrowserContext>();
  return {
    browser,
    async newPage() {
      const context = await browser.newContext();
      contexts.add(context);
      context.on('close', () => contexts.delete(context));
      return context.newPage();
    },
    async close() {
      await Promise.all([...contexts].map((context) => context.close()));
      await browser.close();
    },
  };
}

/** A Content-Security-Policy violation as the page reported it, or as Chromium logged it to the console. */
export interface CspViolation {
  source: 'event' | 'console';
  directive: string;
  blocked: string;
}

/**
 * Records every CSP violation on a page from now on: the DOM `securitypolicyviolation` event (listened to from an
 * init script, which CSP does not govern) and Chromium's console errors about the policy. Call before `goto`.
 */
export async function watchCspViolations(page: Page): Promise<CspViolation[]> {
  const violations: CspViolation[] = [];
  await page.exposeBinding('__linkplaneCspViolation', (_source, directive: string, blocked: string) => {
    violations.push({ source: 'event', directive, blocked });
  });
  // A string, not a function: the test code is type-checked without the DOM library.
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (event) => {
    window.__linkplaneCspViolation(event.effectiveDirective, event.blockedURI);
  });`);
  page.on('console', (message) => {
    if (/content security policy/i.test(message.text())) {
      violations.push({ source: 'console', directive: message.type(), blocked: message.text() });
    }
  });
  return violations;
}
