import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureDashboardBuilt } from '../../apps/dashboard/build';
import { startTestApp, type TestApp } from './app';
import { see } from './browser';
import { findChromium, reportSkippedBrowserTests } from './chromium';
import { ROOT } from './cli';

/** One headless Chromium for a console test file, or null (the tests skip, saying why). */
export async function launchConsoleBrowser(): Promise<Browser | null> {
  const executablePath = findChromium();
  if (!executablePath) {
    reportSkippedBrowserTests('web console');
    return null;
  }
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
}

/** The console at a desktop width: a new page that keeps every Content-Security-Policy violation the browser logs in `cspErrors`. */
export async function consolePage(browser: Browser, cspErrors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
  return page;
}

/** Where the console's browser tests write their screenshots (git-ignored; docs/images copies some). */
export const SHOTS = path.join(ROOT, 'test-results/console');

/** What a console browser test file runs against: the app, Chromium (null: the tests skip) and a desktop page. */
export interface ConsoleWalk {
  t: TestApp;
  browser: Browser | null;
  page: Page;
  /** Content-Security-Policy violations the page logged. */
  cspErrors: string[];
  close(): Promise<void>;
}

/**
 * Opens a console browser walk: the console built (when stale), Chromium, the app started with
 * `app`, a page at desktop width, and the screenshot folder. `close()` ends the browser and the app.
 */
export async function openConsoleWalk(app: Parameters<typeof startTestApp>[0] = { runWorker: false }): Promise<ConsoleWalk> {
  await ensureDashboardBuilt();
  const [browser, t] = await Promise.all([launchConsoleBrowser(), startTestApp(app)]);
  const cspErrors: string[] = [];
  const page = browser ? await consolePage(browser, cspErrors) : (undefined as unknown as Page);
  mkdirSync(SHOTS, { recursive: true });
  return {
    t,
    browser,
    page,
    cspErrors,
    async close() {
      await browser?.close();
      await t.close();
    },
  };
}

/**
 * Opens console pages as an operator `email` (signed in with a one-time link the first time):
 * `open('/projects/<id>/billing', 'Billing')` goes there and waits for the page's heading.
 */
export function consoleOpener(walk: () => ConsoleWalk, email: string) {
  let signedIn = false;
  return async (to: string, heading: string) => {
    const { t, page } = walk();
    if (!signedIn) {
      const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email, role: 'operator' }));
      if (!created.ok) throw new Error(created.error);
      await page.goto(t.tollgate.admin.console.signInLinkUrl(created.value.link!.token));
      await see(page.getByRole('heading', { name: 'Projects' })).toBeVisible();
      signedIn = true;
    }
    await page.goto(`${t.baseUrl}/dashboard${to}`);
    await see(page.getByRole('heading', { name: heading, exact: true })).toBeVisible();
  };
}
