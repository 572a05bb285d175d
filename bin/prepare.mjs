#!/usr/bin/env node
// npm's `prepare` (after `npm install` / `npm ci`): builds the SDK packages (`npm run build:sdk`) in
// a development install. A production install (`npm ci --omit=dev`, or a copy of the release without
// the packages' sources) has neither their sources nor the tools to build them: nothing to do there.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hasTsx = (() => {
  try {
    createRequire(path.join(root, 'package.json')).resolve('tsx');
    return true;
  } catch {
    return false;
  }
})();
if (!existsSync(path.join(root, 'packages/build.ts')) || !hasTsx) {
  console.log('prepare: a production install (no SDK sources or no tsx): the SDK packages are not built.');
} else {
  const npm = process.env.npm_execpath;
  const run = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build:sdk'], { stdio: 'inherit', cwd: root })
    : spawnSync('npm', ['run', 'build:sdk'], { stdio: 'inherit', cwd: root });
  process.exit(run.status ?? 1);
}
