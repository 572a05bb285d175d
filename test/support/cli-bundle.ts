import { readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the test run's CLI is built (test-results/ is git-ignored). */
export const CLI_BUNDLE = path.join(ROOT, 'test-results/cli/tollgate.mjs');

/**
 * Bundles apps/cli/main.ts with esbuild (the transpiler tsx uses too) into one ES module, its npm
 * dependencies left to node_modules. Each `tollgate` run of the tests then starts in about half the
 * time of `node --import tsx apps/cli/main.ts`, whose loader hooks answer for every module loaded.
 * otplib goes into the bundle: its `otplib/core` import only resolves through tsx's resolver.
 * Code is split at dynamic imports (the migrations), so what a command does not use is not loaded
 * (an ES module bundle hoists every external import of the code it inlines to its top).
 * Built into a folder of its own that then replaces the last one.
 */
export async function buildCliBundle(): Promise<void> {
  const { build } = await import('esbuild');
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  const packages = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => name !== 'otplib');
  const dir = path.dirname(CLI_BUNDLE);
  const out = `${dir}.${process.pid}.tmp`;
  await build({
    entryPoints: { [path.basename(CLI_BUNDLE, '.mjs')]: path.join(ROOT, 'apps/cli/main.ts') },
    outdir: out,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: packages.flatMap((name) => [name, `${name}/*`]),
    // CommonJS code inside the bundle (otplib) calls require() for Node's own modules.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'error',
  });
  rmSync(dir, { recursive: true, force: true });
  renameSync(out, dir);
}
