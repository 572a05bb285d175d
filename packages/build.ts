/**
 * `npm run build:sdk`: the installable packages from contract/ and packages/*\/src.
 *
 * - @tollgate/sdk: dist/index.js (server) and dist/browser.js (browser), ESM, one bundled .d.ts
 *   per entry; zod and @ts-rest/core stay imports (peer dependencies), and so does
 *   @simplewebauthn/browser (a dependency, imported by the browser entry only).
 * - @tollgate/react: dist/index.js, dist/index.d.ts and dist/styles.css; react and
 *   @tollgate/sdk/browser stay imports (peer dependencies).
 * - Both also in CommonJS, for `require` (a project made by `npm init -y`, Node before 20.19):
 *   dist/*.cjs beside each entry, typed by dist/*.d.cts (the same declarations), chosen by the
 *   `require` condition of the package's exports.
 * - `--pack`: each package's tarball (`npm pack`) in dist/packages/, under a name without the
 *   version (tollgate-sdk.tgz, tollgate-react.tgz) so that examples can depend on the file.
 *
 * JavaScript is bundled by esbuild; declarations by rollup-plugin-dts, whose `external` list is
 * what keeps the peer packages imported rather than inlined (and @tollgate/react's types importing
 * @tollgate/sdk/browser's, so that a client made by one is the type the other takes).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';

export const PACKAGES_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(PACKAGES_DIR, '..');
/** Where `--pack` puts the tarballs (git-ignored, like every dist/). */
export const TARBALLS_DIR = path.join(ROOT, 'dist', 'packages');
export const TARBALLS = { sdk: path.join(TARBALLS_DIR, 'tollgate-sdk.tgz'), react: path.join(TARBALLS_DIR, 'tollgate-react.tgz') } as const;

const SDK = path.join(PACKAGES_DIR, 'sdk');
const REACT = path.join(PACKAGES_DIR, 'react');
const TSCONFIG = path.join(PACKAGES_DIR, 'tsconfig.json');

/** What the bundles may import: their peer dependencies, and the SDK's dependencies (npm installs them beside it). */
export const SDK_PEERS = ['zod', '@ts-rest/core'];
/** The browser entry's passkey ceremonies. */
export const SDK_DEPENDENCIES = ['@simplewebauthn/browser'];
export const SDK_EXTERNAL = [...SDK_PEERS, ...SDK_DEPENDENCIES];
export const REACT_EXTERNAL = ['react', 'react/jsx-runtime', '@tollgate/sdk', '@tollgate/sdk/browser'];

/** Where tsc writes the declarations of every source file once, for rollup-plugin-dts to bundle. */
const DECLARATIONS_DIR = path.join(ROOT, 'dist', 'declarations');

/** One tsc run (one program) emits the declarations of both packages and the contract. */
function emitDeclarations(): void {
  rmSync(DECLARATIONS_DIR, { recursive: true, force: true });
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [tsc, '-p', TSCONFIG, '--noEmit', 'false', '--declaration', '--emitDeclarationOnly', '--outDir', DECLARATIONS_DIR, '--rootDir', ROOT];
  try {
    execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc could not emit the packages' declarations:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** The emitted declaration file of a source file. */
const declarationOf = (source: string) => path.join(DECLARATIONS_DIR, path.relative(ROOT, source)).replace(/\.tsx?$/, '.d.ts');

async function declarations(source: string, output: string, external: string[]): Promise<void> {
  const bundle = await rollup({
    input: declarationOf(source),
    external: (id) => external.some((name) => id === name || id.startsWith(`${name}/`)),
    plugins: [dts()],
    onwarn(warning, warn) {
      if (warning.code !== 'CIRCULAR_DEPENDENCY') warn(warning);
    },
  });
  await bundle.write({ file: output, format: 'es' });
  await bundle.close();
}

export async function buildPackages(options: { pack?: boolean } = {}): Promise<void> {
  for (const dir of [SDK, REACT]) rmSync(path.join(dir, 'dist'), { recursive: true, force: true });

  const common = { bundle: true, target: 'es2022', logLevel: 'warning', legalComments: 'none' } as const;
  const sdk = {
    ...common,
    entryPoints: { index: path.join(SDK, 'src/index.ts'), browser: path.join(SDK, 'src/browser/index.ts') },
    outdir: path.join(SDK, 'dist'),
    platform: 'neutral',
    external: SDK_EXTERNAL,
  } as const;
  const react = {
    ...common,
    entryPoints: { index: path.join(REACT, 'src/index.ts') },
    outdir: path.join(REACT, 'dist'),
    platform: 'browser',
    jsx: 'automatic',
    external: REACT_EXTERNAL,
  } as const;
  // ES modules (the server and browser entries share a chunk), and CommonJS (one file per entry).
  const commonjs = { format: 'cjs', outExtension: { '.js': '.cjs' } } as const;
  await Promise.all([
    build({ ...sdk, format: 'esm', splitting: true, chunkNames: 'shared-[hash]' }),
    build({ ...sdk, ...commonjs }),
    build({ ...react, format: 'esm' }),
    build({ ...react, ...commonjs }),
  ]);
  copyFileSync(path.join(REACT, 'src/styles.css'), path.join(REACT, 'dist/styles.css'));

  emitDeclarations();
  await declarations(path.join(SDK, 'src/index.ts'), path.join(SDK, 'dist/index.d.ts'), SDK_EXTERNAL);
  await declarations(path.join(SDK, 'src/browser/index.ts'), path.join(SDK, 'dist/browser.d.ts'), SDK_EXTERNAL);
  await declarations(path.join(REACT, 'src/index.ts'), path.join(REACT, 'dist/index.d.ts'), [...SDK_EXTERNAL, ...REACT_EXTERNAL]);
  // The CommonJS entries' types: the same declarations, as .d.cts beside each .cjs.
  for (const file of [path.join(SDK, 'dist/index.d.ts'), path.join(SDK, 'dist/browser.d.ts'), path.join(REACT, 'dist/index.d.ts')]) {
    if (!existsSync(file.replace(/\.d\.ts$/, '.cjs'))) throw new Error(`no CommonJS entry beside ${file}`);
    copyFileSync(file, file.replace(/\.d\.ts$/, '.d.cts'));
  }

  if (options.pack) {
    mkdirSync(TARBALLS_DIR, { recursive: true });
    for (const [dir, target] of [
      [SDK, TARBALLS.sdk],
      [REACT, TARBALLS.react],
    ] as const) {
      const out = execFileSync('npm', ['pack', dir, '--json', '--pack-destination', TARBALLS_DIR, '--ignore-scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const packed = (JSON.parse(out) as Array<{ filename: string }>)[0];
      if (!packed) throw new Error(`npm pack ${dir} answered no tarball`);
      renameSync(path.join(TARBALLS_DIR, path.basename(packed.filename)), target);
    }
  }
}

/** The version the packages carry (both the same). */
export const packageVersion = (): string => (JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as { version: string }).version;

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  await buildPackages({ pack: process.argv.includes('--pack') });
  if (process.argv.includes('--verbose')) console.log(`packages built in ${Date.now() - started} ms`);
}
