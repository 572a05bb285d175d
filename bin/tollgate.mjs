#!/usr/bin/env node
// The `tollgate` admin CLI launcher, from any working directory. In order:
// - the release's CLI (dist/cli, `npm run build`) when it was built from these sources, or in a copy
//   of the release without the sources, or in a production install that cannot build (no esbuild);
// - else the CLI bundled by esbuild (bin/cli-bundle.mjs; rebuilt when its sources changed, in
//   node_modules/.tollgate-cli);
// - else, when no bundle can be built or written there, apps/cli/main.ts through tsx.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ENTRY, freshCliBundle, sourceStamp } from './cli-bundle.mjs';
import { canBuild, hasSources } from './release.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Without an explicit data directory, use the checkout's .tollgate/ (embedded PostgreSQL and the
// development key), the same one `npm start` uses, whatever the current directory is.
if (!process.env.TOLLGATE_DATA_DIR) process.env.TOLLGATE_DATA_DIR = path.join(root, '.tollgate');

/** The release's CLI when it is the one to run (see above), else null. */
function releaseCli() {
  const dir = path.join(root, 'dist', 'cli');
  if (!existsSync(path.join(dir, ENTRY))) return null;
  if (!hasSources(root)) return path.join(dir, ENTRY);
  let stamp = null;
  try {
    stamp = readFileSync(path.join(dir, '.source-stamp'), 'utf8');
  } catch {
    // not built by bin/cli-bundle.mjs
  }
  if (stamp === sourceStamp(root)) return path.join(dir, ENTRY);
  if (!canBuild(root)) {
    process.stderr.write('Warning: dist/cli was built from other sources than these; run `npm run build` where the development dependencies are installed.\n');
    return path.join(dir, ENTRY);
  }
  return null;
}

process.setSourceMapsEnabled(true);
const bundle = releaseCli() ?? (await freshCliBundle(root, path.join(root, 'node_modules', '.tollgate-cli')).catch(() => null));
if (bundle) {
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: path.join(root, 'tsconfig.json') });
  await import(pathToFileURL(path.join(root, 'apps', 'cli', 'main.ts')).href);
}
