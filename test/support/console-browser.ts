import { chromium, type Browser } from 'playwright-core';
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
