#!/usr/bin/env node
// `npm start`: the server of the built release (dist/server/main.mjs), built first when it is
// missing or stale (bin/release.mjs). `npm run dev` runs the TypeScript sources instead.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runRelease } from './release.mjs';

await runRelease(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), 'main');
