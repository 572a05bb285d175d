#!/usr/bin/env node
// `npm run build`: the release in dist/, plain JavaScript that runs without the build tools:
//   dist/server/main.mjs, dist/server/worker.mjs  the server and the worker (`npm start`, `npm run worker`)
//   dist/cli/tollgate.mjs                          the admin CLI (bin/tollgate.mjs runs it)
//   dist/dashboard/                                the web console's static files (Vite)
//   dist/build.json                                version, git commit, build time, stamp of the sources
// The server, the worker and the CLI are bundled by esbuild (bin/cli-bundle.mjs's options): one file
// per entry point, plus the chunks they share, loads much faster than the ~700 TypeScript modules
// through tsx's loader hooks; the npm dependencies stay external, in node_modules, as npm installed
// them. Each part is built beside its place and then swapped in; build.json is written last, so a
// release without it is not one.
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildCliBundle, buildInfo, bundleOptions, copyAssets, sourceStamp } from '../bin/cli-bundle.mjs';
import { distOf, releaseStamp } from '../bin/release.mjs';

/**
 * Moves `from` to `to`, replacing what was there. Another build (an `npm start` beside this one)
 * may swap its own in at the same moment: when ours cannot take the place, theirs is there, built
 * from the same sources, and is kept.
 */
function swapIn(from, to) {
  const old = `${to}.old-${process.pid}`;
  try {
    if (existsSync(to)) renameSync(to, old);
    renameSync(from, to);
  } catch (e) {
    if (!existsSync(to)) throw e;
  } finally {
    rmSync(old, { recursive: true, force: true });
    rmSync(from, { recursive: true, force: true });
  }
}

/**
 * Builds the release of the checkout at `root` into `out` (dist/ by default). `stamp` is the
 * sources' stamp taken before the build (an edit made during the build leaves the build stale).
 */
export async function buildRelease(root, { out = distOf(root), stamp = releaseStamp(root), log = console.log } = {}) {
  const { build } = await import('esbuild');
  const info = buildInfo(root);
  mkdirSync(out, { recursive: true });
  rmSync(path.join(out, 'build.json'), { force: true });
  const started = Date.now();

  const server = path.join(out, `server.build-${process.pid}`);
  await build({
    ...bundleOptions(root, info),
    entryPoints: { main: path.join(root, 'apps/server/main.ts'), worker: path.join(root, 'apps/server/worker.ts') },
    // The shared chunks beside the entry points: code finds what it reads (the console, the locales) from there.
    outdir: server,
  });
  copyAssets(root, server);
  swapIn(server, path.join(out, 'server'));
  log(`server and worker: ${path.join(out, 'server')} (${Date.now() - started} ms)`);

  const cliStarted = Date.now();
  await buildCliBundle(root, path.join(out, 'cli'), sourceStamp(root), info);
  log(`CLI: ${path.join(out, 'cli')} (${Date.now() - cliStarted} ms)`);

  // The console: built by Vite into apps/dashboard/dist when its sources changed (its own stamp), then copied.
  const consoleStarted = Date.now();
  const { tsImport } = await import('tsx/esm/api');
  const dashboard = await tsImport(pathToFileURL(path.join(root, 'apps/dashboard/build.ts')).href, import.meta.url);
  await dashboard.ensureDashboardBuilt(log);
  const copy = path.join(out, `dashboard.build-${process.pid}`);
  cpSync(dashboard.DIST, copy, { recursive: true });
  swapIn(copy, path.join(out, 'dashboard'));
  log(`console: ${path.join(out, 'dashboard')} (${Date.now() - consoleStarted} ms)`);

  writeFileSync(path.join(out, 'build.json'), `${JSON.stringify({ ...info, stamp, node: process.version }, null, 2)}\n`);
  log(`Tollgate ${info.version}${info.commit ? ` (${info.commit})` : ''} built in ${out} in ${Date.now() - started} ms.`);
  return info;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  buildRelease(root).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
