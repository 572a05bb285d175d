#!/usr/bin/env node
// The `tollgate` admin CLI launcher: runs apps/cli/main.ts through tsx from any working directory.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Without an explicit data directory, use the checkout's .tollgate/ (embedded PostgreSQL and the
// development key), the same one `npm start` uses, whatever the current directory is.
if (!process.env.TOLLGATE_DATA_DIR) process.env.TOLLGATE_DATA_DIR = path.join(root, '.tollgate');

register({ tsconfig: path.join(root, 'tsconfig.json') });
await import(pathToFileURL(path.join(root, 'apps', 'cli', 'main.ts')).href);
