#!/usr/bin/env node
// `npm run worker`: the background jobs of the built release (dist/server/worker.mjs), built first
// when it is missing or stale (bin/release.mjs).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runRelease } from './release.mjs';

await runRelease(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), 'worker');
