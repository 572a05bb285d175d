import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const out = mkdtempSync(path.join(root, 'node_modules', '.sdk-test-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the SDK bundle (tollgate/sdk)', () => {
  it('is built from contract/ alone, with zod and @ts-rest/core as its only packages', async () => {
    const result = await build({
      entryPoints: [path.join(root, 'contract/index.ts')],
      bundle: true,
      platform: 'neutral',
      format: 'esm',
      external: ['zod', '@ts-rest/core'],
      outfile: path.join(out, 'sdk.mjs'),
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.length).toBeGreaterThan(1);
    for (const input of inputs) expect(input).toMatch(/^contract\//);
    const imports = result.metafile.outputs[Object.keys(result.metafile.outputs)[0]!]!.imports.map((i) => i.path);
    for (const imported of imports) expect(['zod', '@ts-rest/core']).toContain(imported);
    expect(imports).toContain('@ts-rest/core');

    const sdk = (await import(pathToFileURL(path.join(out, 'sdk.mjs')).href)) as typeof import('../../contract');
    const client = sdk.createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'tg_x' });
    expect(typeof client.token.verify).toBe('function');
    expect(sdk.contract.token.verify.path).toBe('/api/v1/token/verify');
  });
});
