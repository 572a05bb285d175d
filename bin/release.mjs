// The built release (dist/, made by scripts/build.mjs) and its freshness, for the launchers
// (bin/server.mjs, bin/worker.mjs, bin/tollgate.mjs). Plain JavaScript that imports nothing but
// Node's own modules when the build is fresh: a production install has no esbuild, tsx or Vite.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SOURCE_DIRS, SOURCE_FILES, sourceStamp } from './cli-bundle.mjs';

/** What the release is built from: the CLI's sources, the console's, and the build's own scripts. */
export const RELEASE_DIRS = [...SOURCE_DIRS, 'apps/dashboard'];
export const RELEASE_FILES = [...SOURCE_FILES, 'bin/release.mjs', 'scripts/build.mjs'];

/** Where `npm run build` writes the release (git-ignored). */
export const distOf = (root) => path.join(root, 'dist');

/** The stamp of the sources (bin/cli-bundle.mjs's sourceStamp over RELEASE_DIRS and RELEASE_FILES). */
export const releaseStamp = (root) => sourceStamp(root, RELEASE_DIRS, RELEASE_FILES);

/** dist/build.json: version, commit, build time and the stamp of the sources it was built from; null when not built. */
export function readBuild(dist) {
  try {
    return JSON.parse(readFileSync(path.join(dist, 'build.json'), 'utf8'));
  } catch {
    return null;
  }
}

/** True when the TypeScript sources are here (a checkout), false in a copy of the release without them. */
export const hasSources = (root) => existsSync(path.join(root, 'apps/server/main.ts'));

/** True when the build tools are installed (a development install; not after `npm ci --omit=dev`). */
export function canBuild(root) {
  const require = createRequire(path.join(root, 'package.json'));
  try {
    for (const tool of ['esbuild', 'tsx', 'vite']) require.resolve(tool);
    return true;
  } catch {
    return false;
  }
}

/**
 * The release in dist/, built first when it is missing or older than the sources (so that
 * `npm install && npm start` works on a fresh clone). Without the sources (a copy of dist/) the
 * build is taken as it is. Without the build tools, a stale build runs with a warning, and a
 * missing one stops with what to do.
 */
export async function freshRelease(root, log = (line) => process.stderr.write(`${line}\n`)) {
  const dist = distOf(root);
  const built = readBuild(dist);
  const sources = hasSources(root);
  if (built && !sources) return dist;
  const stamp = sources ? releaseStamp(root) : null;
  if (built && built.stamp === stamp) return dist;
  if (!sources || !canBuild(root)) {
    if (built) {
      log(
        'Warning: dist/ was built from other sources than these (they changed since `npm run build`), and the build tools ' +
          'are not installed here: running the build that is there. Run `npm run build` where the development dependencies are installed.',
      );
      return dist;
    }
    const missing = sources ? 'no build tools (esbuild, tsx, Vite: a production install, `npm ci --omit=dev`)' : 'no sources to build from';
    log(
      `Tollgate is not built: dist/build.json is missing, and this install has ${missing}. Build the release where the ` +
        'development dependencies are installed (`npm ci && npm run build`), then either install for production beside it ' +
        '(`npm ci --omit=dev`), or copy dist/, bin/, package.json and package-lock.json to the production machine and run ' +
        '`npm ci --omit=dev` there (docs/deployment.md).',
    );
    process.exit(1);
  }
  const started = Date.now();
  log(built ? 'The sources changed since the last build: building the release (dist/)…' : 'Building the release (dist/)…');
  const { buildRelease } = await import(pathToFileURL(path.join(root, 'scripts/build.mjs')).href);
  await buildRelease(root, { stamp, log: () => undefined });
  log(`Built the release in ${Date.now() - started} ms.`);
  return dist;
}

/** Runs an entry point of the release (`server` or `worker`) in this process, with source maps for stack traces. */
export async function runRelease(root, entry) {
  const dist = await freshRelease(root);
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(path.join(dist, 'server', `${entry}.mjs`)).href);
}
