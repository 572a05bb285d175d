import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Debian's chromium for the browser tests (driven by playwright-core; nothing downloads a browser):
 * CHROMIUM_PATH when set, else `chromium` (or `chromium-browser`) on PATH, else /usr/bin/chromium.
 * `.ci/run` installs the package when it is missing. Null when there is none: the browser tests
 * are then skipped, and say so.
 */
export function findChromium(): string | null {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const name of ['chromium', 'chromium-browser']) {
      const candidate = path.join(dir, name);
      if (existsSync(candidate)) return candidate;
    }
  }
  return existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : null;
}

/** Says plainly that browser tests were skipped, and why. */
export function reportSkippedBrowserTests(what: string): void {
  const why = process.env.CHROMIUM_PATH ? `CHROMIUM_PATH=${process.env.CHROMIUM_PATH} does not exist` : 'no chromium on PATH or at /usr/bin/chromium';
  console.warn(`\n*** Browser tests SKIPPED (${what}): ${why}. Install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM_PATH. ***\n`);
}
