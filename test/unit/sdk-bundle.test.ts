import { build, type Metafile } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { REACT_EXTERNAL, SDK_DEPENDENCIES, SDK_EXTERNAL, SDK_PEERS } from '../../packages/build';

/**
 * The SDK packages' bundles, built as `npm run build:sdk` builds them (esbuild, the same entries
 * and externals): what each one is made of and what it imports. Nothing of the server (express,
 * MikroORM, argon2, pg...) may be reachable: a server bundle is contract/ plus the SDK's helpers
 * and imports only its peer dependencies (zod, @ts-rest/core); the browser entry imports only its
 * dependency @simplewebauthn/browser (the passkey ceremonies); the React package imports react and
 * @tollgate/sdk/browser. The React package's browser bundle,
 * react excluded, stays under 35 kB gzip (30 kB before usage-based billing: useUsage, <UsageBar>
 * and its strings in the 20 locales, and the browser client's usage reads, about 2.8 kB; then
 * 33 kB before credit packs: <CreditPacks>, its strings in the 20 locales and the browser
 * client's creditPacks/buyCreditPack, about 1.9 kB).
 */

const root = path.resolve(import.meta.dirname, '../..');
const out = mkdtempSync(path.join(root, 'node_modules', '.sdk-test-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function bundle(entry: string, options: { external: string[]; outfile: string; minify?: boolean; alias?: Record<string, string> }) {
  const result = await build({
    entryPoints: [path.join(root, entry)],
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    jsx: 'automatic',
    mainFields: ['module', 'main'],
    external: options.external,
    outfile: path.join(out, options.outfile),
    minify: options.minify ?? false,
    alias: options.alias ?? {},
    metafile: true,
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0]!;
  return { inputs: Object.keys(result.metafile.inputs), imports: output.imports.map((i) => i.path), metafile: result.metafile as Metafile };
}

describe('@tollgate/sdk (server entry, also the root package `tollgate/sdk`)', () => {
  it('is built from contract/ and the SDK helpers alone, importing only zod and @ts-rest/core', async () => {
    const { inputs, imports } = await bundle('packages/sdk/src/index.ts', { external: SDK_EXTERNAL, outfile: 'sdk.mjs' });
    for (const input of inputs) expect(input).toMatch(/^(contract|packages\/sdk\/src)\//);
    expect(inputs.some((i) => i.startsWith('contract/'))).toBe(true);
    expect(new Set(imports)).toEqual(new Set(SDK_PEERS));

    const sdk = (await import(pathToFileURL(path.join(out, 'sdk.mjs')).href)) as typeof import('../../packages/sdk/src');
    const client = sdk.createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'tg_x' });
    expect(typeof client.token.verify).toBe('function');
    expect(sdk.contract.token.verify.path).toBe('/api/v1/token/verify');
    const tollgate = sdk.createTollgate({ baseUrl: 'http://127.0.0.1:1', apiKey: 'tg_x' });
    expect(typeof tollgate.client.billing.entitlements).toBe('function');
    await expect(tollgate.verifyToken('x')).rejects.toMatchObject({ name: 'TollgateError', code: 'network_error', status: 0 });
    expect(() => sdk.createTollgate({ baseUrl: 'http://127.0.0.1:1', apiKey: '' })).toThrow(/apiKey is required/);
  });
});

describe('@tollgate/sdk/browser', () => {
  it('imports only @simplewebauthn/browser: the contract and zod are types only there', async () => {
    const { inputs, imports } = await bundle('packages/sdk/src/browser/index.ts', { external: SDK_EXTERNAL, outfile: 'browser.mjs' });
    for (const input of inputs) expect(input).toMatch(/^packages\/sdk\/src\//);
    expect(imports).toEqual(SDK_DEPENDENCIES);
  });
});

describe('@tollgate/react', () => {
  it('imports only react and @tollgate/sdk/browser', async () => {
    const { inputs, imports } = await bundle('packages/react/src/index.ts', { external: REACT_EXTERNAL, outfile: 'react.mjs' });
    for (const input of inputs) expect(input).toMatch(/^packages\/react\/src\//);
    expect(new Set(imports)).toEqual(new Set(['react', 'react/jsx-runtime', '@tollgate/sdk/browser']));
  });

  it('weighs under 35 kB gzip in a browser, with the browser client and without react', async () => {
    await bundle('packages/react/src/index.ts', {
      external: ['react', 'react/jsx-runtime', 'react-dom'],
      alias: { '@tollgate/sdk/browser': path.join(root, 'packages/sdk/src/browser/index.ts') },
      outfile: 'react-browser.min.mjs',
      minify: true,
    });
    const { readFileSync } = await import('node:fs');
    const code = readFileSync(path.join(out, 'react-browser.min.mjs'));
    const gzip = gzipSync(code, { level: 9 }).length;
    console.log(
      `@tollgate/react browser bundle (with @tollgate/sdk/browser, without react): ${(code.length / 1024).toFixed(1)} kB minified, ` +
        `${(gzip / 1024).toFixed(1)} kB gzip`,
    );
    expect(gzip).toBeLessThan(35 * 1024);
  });
});
