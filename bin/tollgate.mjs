#!/usr/bin/env node
// The `tollgate` admin CLI launcher, from any working directory: runs the CLI bundled by esbuild
// (bin/cli-bundle.mjs; rebuilt when its sources changed, in node_modules/.tollgate-cli), or, when
// no bundle can be built or written there, apps/cli/main.ts through tsx.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freshCliBundle } from './cli-bundle.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Without an explicit data directory, use the checkout's .tollgate/ (embedded PostgreSQL and the
// development key), the same one `npm start` uses, whatever the current directory is.
if (!process.env.TOLLGATE_DATA_DIR) process.env.TOLLGATE_DATA_DIR = path.join(root, '.tollgate');

// Two levels below the root, as the sources it is built from (apps/cli/main.ts).
const bundle = await freshCliBundle(root, path.join(root, 'node_modules', '.tollgate-cli')).catch(() => null);
if (bundle) {
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: path.join(root, 'tsconfig.json') });
  await import(pathToFileURL(path.join(root, 'apps', 'cli', 'main.ts')).href);
}
