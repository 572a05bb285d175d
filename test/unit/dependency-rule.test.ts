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
afterAll(() => sandboxes.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('dependency rule (.dependency-cruiser.cjs)', () => {
  it('passes on the project tree', async () => {
    const result = await cruise(root, ['contract', 'domain', 'application', 'infrastructure', 'apps']);
    expect(result.output).toContain('no dependency violations');
    expect(result.code).toBe(0);
  }, 60_000);

  it('fails when domain/ imports express', async () => {
    const dir = sandbox({
      'domain/user.ts': "import express from 'express';\nexport const app = express;\n",
    });
    const result = await cruise(dir, ['domain']);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('domain-is-pure');
  }, 60_000);

  it('fails when application/ imports a driver or infrastructure/', async () => {
    const dir = sandbox({
      'application/a.ts': "import pg from 'pg';\nimport { x } from '../infrastructure/x';\nexport const y = [pg, x];\n",
      'infrastructure/x.ts': 'export const x = 1;\n',
    });
    const result = await cruise(dir, ['application', 'infrastructure']);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('application-imports-domain-only');
  }, 60_000);

  it('fails when contract/ imports server code', async () => {
    const dir = sandbox({
      'contract/index.ts': "import { z } from 'zod';\nimport { s } from '../apps/server/s';\nexport const c = [z, s];\n",
      'apps/server/s.ts': 'export const s = 1;\n',
    });
    const result = await cruise(dir, ['contract', 'apps']);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('contract-is-shippable');
  }, 60_000);

  it('fails on an import cycle made of type-only imports', async () => {
    const dir = sandbox({
      'apps/server/root.ts': "import { wire } from './features/feature';\nexport interface Core { n: number }\nexport const root = wire;\n",
      'apps/server/features/feature.ts': "import type { Core } from '../root';\nexport const wire = (core: Core) => core.n;\n",
    });
    const result = await cruise(dir, ['apps']);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('no-circular');
  }, 60_000);
});
