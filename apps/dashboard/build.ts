import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds the web console (apps/dashboard, React) with Vite into apps/dashboard/dist (git-ignored),
 * when the build is missing or stale: a SHA-256 over its sources, the contract and the domain file
 * it imports is kept beside the build and compared first, so an up-to-date console costs a few ms.
 * `npm start` calls it; `npm run build:dashboard` forces a build.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HERE = path.join(ROOT, 'apps/dashboard');
export const DIST = path.join(HERE, 'dist');
const STAMP = path.join(DIST, '.source-hash');

function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? files(full) : [full];
    });
}

export function sourceHash(): string {
  const hash = createHash('sha256');
  const inputs = [
    path.join(HERE, 'index.html'),
    path.join(HERE, 'build.ts'),
    ...files(path.join(HERE, 'src')),
    ...files(path.join(ROOT, 'contract')),
    path.join(ROOT, 'domain/console.ts'),
    path.join(ROOT, 'domain/mfa.ts'),
    path.join(ROOT, 'domain/billing/money.ts'),
    path.join(ROOT, 'domain/result.ts'),
  ];
  for (const file of inputs) hash.update(path.relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

/**
 * Builds into a folder of its own and then swaps it in, so that a server reading the console, or
 * another build running at the same time (test files starting side by side), never sees half of one.
 */
export async function buildDashboard(): Promise<void> {
  const { build } = await import('vite');
  const hash = sourceHash();
  const out = `${DIST}.build-${process.pid}-${Date.now()}`;
  // Vite sets NODE_ENV=production in the process it builds in. `npm start` on a fresh checkout
  // builds in the process that then runs the server, which would take itself for a production
  // deployment (and refuse to start without TOLLGATE_SECRET_KEY): the variable is put back after.
  const nodeEnv = process.env.NODE_ENV;
  try {
    await build({
      configFile: false,
      root: HERE,
      base: '/dashboard/',
      logLevel: 'warn',
      // The JSX transform is Vite's own (no plugin); React 17+ automatic runtime.
      oxc: { jsx: { runtime: 'automatic' } },
      build: { outDir: out, emptyOutDir: true, sourcemap: false, modulePreload: { polyfill: false }, assetsInlineLimit: 0 },
    } as never);
    writeFileSync(path.join(out, '.source-hash'), hash);
    const old = `${DIST}.old-${process.pid}-${Date.now()}`;
    if (existsSync(DIST)) renameSync(DIST, old);
    renameSync(out, DIST);
    rmSync(old, { recursive: true, force: true });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
    rmSync(out, { recursive: true, force: true });
  }
}

/** Builds the console if its build is missing or older than its sources; answers whether it built. */
export async function ensureDashboardBuilt(log: (line: string) => void = () => undefined): Promise<boolean> {
  const hash = sourceHash();
  if (existsSync(path.join(DIST, 'index.html')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash) return false;
  const started = Date.now();
  log('Building the web console (apps/dashboard)…');
  await buildDashboard();
  log(`Built the web console in ${Date.now() - started} ms.`);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes('--force');
  const run = force ? buildDashboard() : ensureDashboardBuilt(console.log);
  run.catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
