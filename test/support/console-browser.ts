import { chromium, type Browser, type Page } from 'playwright-core';
import { findChromium, reportSkippedBrowserTests } from './chromium';

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
