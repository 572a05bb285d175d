import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config = path.join(root, '.dependency-cruiser.cjs');

async function cruise(cwd: string, dirs: string[]) {
  try {
    const { stdout } = await run(process.execPath, [cli, '--config', config, ...dirs], { cwd });
    return { code: 0, output: stdout };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, output: err.stdout + err.stderr };
  }
}

const sandboxes: string[] = [];
function sandbox(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-deprule-'));
  sandboxes.push(dir);
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler' } }));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}
afterAll(() => {
  for (const d of sandboxes) rmSync(d, { recursive: true, force: true });
});

// One sandbox holds a violation of each rule, cruised once (a cruise is a process of its own that
// takes seconds); each case checks its rule is reported. The project tree is cruised beside it.
let violations: Promise<{ code: number; output: string }> | undefined;
const cruiseViolations = () =>
  (violations ??= cruise(
    sandbox({
      // domain/ imports express
      'domain/user.ts': "import express from 'express';\nexport const app = express;\n",
      // application/ imports a driver and infrastructure/
      'application/a.ts': "import pg from 'pg';\nimport { x } from '../infrastructure/x';\nexport const y = [pg, x];\n",
      'infrastructure/x.ts': 'export const x = 1;\n',
      // contract/ imports server code
      'contract/index.ts': "import { z } from 'zod';\nimport { s } from '../apps/server/s';\nexport const c = [z, s];\n",
      'apps/server/s.ts': 'export const s = 1;\n',
      // an import cycle made of type-only imports
      'apps/server/root.ts': "import { wire } from './features/feature';\nexport interface Core { n: number }\nexport const root = wire;\n",
      'apps/server/features/feature.ts': "import type { Core } from '../root';\nexport const wire = (core: Core) => core.n;\n",
      // a shared store reaches into a feature folder (stores/ comes before users/)
      'application/stores/user.store.ts': "import type { Shown } from '../users/show-user';\nexport type Stored = Shown;\n",
      'application/users/show-user.ts': 'export type Shown = { id: string };\n',
    }),
    ['domain', 'application', 'infrastructure', 'contract', 'apps'],
  ));

describe.concurrent('dependency rule (.dependency-cruiser.cjs)', () => {
  it('passes on the project tree', async () => {
    const result = await cruise(root, ['contract', 'domain', 'application', 'infrastructure', 'apps']);
    expect(result.output).toContain('no dependency violations');
    expect(result.code).toBe(0);
  }, 60_000);

  it.each([
    ['domain/ imports express', 'domain-is-pure', 'domain/user.ts'],
    ['application/ imports a driver or infrastructure/', 'application-imports-domain-only', 'application/a.ts'],
    ['contract/ imports server code', 'contract-is-shippable', 'contract/index.ts'],
    ['an import cycle is made of type-only imports', 'no-circular', 'apps/server/features/feature.ts'],
    ['an application folder imports one listed after it', 'application-folders-one-way', 'application/stores/user.store.ts'],
  ])(
    'fails when %s',
    async (_what, rule, file) => {
      const result = await cruiseViolations();
      expect(result.code).not.toBe(0);
      // The rule is reported for the file that breaks it.
      expect(result.output).toMatch(new RegExp(`${rule}:\\s+${file.replace(/[./]/g, '\\$&')}`));
    },
    60_000,
  );
});
