import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureDashboardBuilt } from '../../apps/dashboard/build';
import { startTestApp, type TestApp } from './app';
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
