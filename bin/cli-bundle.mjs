// The `tollgate` CLI as one ES module bundle: apps/cli/main.ts and the TypeScript it imports,
// bundled by esbuild (the transpiler tsx uses too), its npm dependencies left in node_modules.
// bin/tollgate.mjs runs a fresh bundle instead of loading every module through tsx's loader hooks:
// a command starts in about half the time. The test run builds one the same way.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** What the CLI is built from: these folders' files, and these files. */
export const SOURCE_DIRS = ['apps/cli', 'apps/server', 'application', 'domain', 'infrastructure', 'contract'];
export const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'bin/cli-bundle.mjs'];
const STAMP = '.source-stamp';
export const ENTRY = 'tollgate.mjs';

/**
 * A SHA-256 over the path, size and modification time of every source file: a change to any of
 * them (an edit, a checkout, an upgrade) makes the bundle stale. Reading only the file metadata of
 * a few hundred files costs a few milliseconds.
 */
export function sourceStamp(root, dirs = SOURCE_DIRS, files = SOURCE_FILES) {
  const hash = createHash('sha256');
  const add = (full) => {
    const s = statSync(full);
    hash.update(`${path.relative(root, full)}\0${s.size}\0${s.mtimeMs}\0`);
  };
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        // Build outputs (dist, and dist.* while a build swaps one in) are not sources.
        if (entry.name !== 'node_modules' && entry.name !== 'dist' && !entry.name.startsWith('dist.')) visit(full);
      } else add(full);
    }
  };
  for (const dir of dirs) visit(path.join(root, dir));
  for (const file of files) if (existsSync(path.join(root, file))) add(path.join(root, file));
  return hash.digest('hex');
}

/**
 * What a build embeds (apps/server/version.ts reads it): the package version, the git commit of the
 * checkout when git can tell (none in a copy without .git), and the time of the build.
 */
export function buildInfo(root) {
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  let commit = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() || null;
  } catch {
    // not a git checkout, or no git
  }
  return { version, commit, builtAt: new Date().toISOString() };
}

/**
 * What esbuild is told for every Tollgate bundle (the CLI's, the server's and the worker's): Node's
 * ES modules, npm dependencies left in node_modules (one file per entry point loads much faster than
 * hundreds of modules through a loader, and the packages stay as npm installed them), the build's
 * facts in place of `__TOLLGATE_BUILD__`, and source maps without the sources (stack traces name the
 * TypeScript file and line; the launchers enable them). CommonJS dependencies are loaded with
 * require() (requireCommonJs).
 */
export function bundleOptions(root, info = buildInfo(root)) {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const packages = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => name !== 'otplib');
  return {
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    sourcesContent: false,
    define: { __TOLLGATE_BUILD__: JSON.stringify(info) },
    external: packages.flatMap((name) => [name, `${name}/*`]),
    // CommonJS code inside the bundle (otplib) calls require() for Node's own modules.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    plugins: [requireCommonJs(root, packages)],
    logLevel: 'error',
  };
}

/** The package a bare specifier names (`@scope/name` or `name`, without a subpath). */
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/**
 * An esbuild plugin: a dependency that is CommonJS (MikroORM, Express, pg, ...) is loaded with
 * require(), as its own code loads its modules, instead of an ES `import`. Node imports a CommonJS
 * module by first scanning its source, and every module it re-exports, for the names it exports:
 * for MikroORM's index that is hundreds of files, about 0.2 s of each start. Named imports become
 * property reads on `module.exports` (esbuild's interop, the same values Node's import gives). A
 * dynamic import() stays an import (esbuild would give it only a `default` export), as do ES module
 * packages and packages that are both when `require` resolves to their ES build.
 */
function requireCommonJs(root, packages) {
  const names = new Set(packages);
  const resolve = createRequire(path.join(root, 'package.json')).resolve;
  const commonJs = new Map();
  const isCommonJs = (specifier) => {
    if (commonJs.has(specifier)) return commonJs.get(specifier);
    let answer = false;
    try {
      const file = resolve(specifier);
      if (file.endsWith('.cjs')) answer = true;
      else if (file.endsWith('.js')) {
        // A .js file is CommonJS unless the nearest package.json says "type": "module".
        for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
          const manifest = path.join(dir, 'package.json');
          if (!existsSync(manifest)) continue;
          answer = JSON.parse(readFileSync(manifest, 'utf8')).type !== 'module';
          break;
        }
      }
    } catch {
      // not resolvable with require() (an ES module only package): stays an import
    }
    commonJs.set(specifier, answer);
    return answer;
  };
  return {
    name: 'require-commonjs',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.namespace === 'require-commonjs') return { path: args.path, external: true };
        if (args.kind !== 'import-statement') return undefined;
        if (!names.has(packageOf(args.path)) || !isCommonJs(args.path)) return undefined;
        return { path: args.path, namespace: 'require-commonjs' };
      });
      build.onLoad({ filter: /.*/, namespace: 'require-commonjs' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(args.path)});`,
        loader: 'js',
      }));
    },
  };
}

/**
 * Files the bundled code reads beside itself (`new URL('./x/', import.meta.url)` in a source file
 * resolves next to the bundle's chunk once bundled): the e-mail templates' translations.
 */
export function copyAssets(root, out) {
  cpSync(path.join(root, 'infrastructure/mail/locales'), path.join(out, 'locales'), { recursive: true });
}

/**
 * Builds the bundle into `dir` (`dir/tollgate.mjs` and its chunks): built into a folder of its own,
 * then swapped in. Code is split at dynamic imports (the migrations), so what a command does not use
 * is not loaded: an ES module bundle hoists every external import of the code it inlines to its top.
 * otplib goes into the bundle: its `otplib/core` import only resolves through tsx's resolver.
 */
export async function buildCliBundle(root, dir, stamp = sourceStamp(root), info = buildInfo(root)) {
  const { build } = await import('esbuild');
  const out = `${dir}.${process.pid}.tmp`;
  const old = `${dir}.${process.pid}.old`;
  try {
    await build({
      ...bundleOptions(root, info),
      entryPoints: { [path.basename(ENTRY, '.mjs')]: path.join(root, 'apps/cli/main.ts') },
      outdir: out,
    });
    copyAssets(root, out);
    writeFileSync(path.join(out, STAMP), stamp);
    if (existsSync(dir)) renameSync(dir, old);
    renameSync(out, dir);
  } catch (e) {
    // Another process swapped its build in at the same moment: the same sources, so the same bundle.
    if (!existsSync(path.join(dir, ENTRY))) throw e;
  } finally {
    rmSync(out, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
}

/** The bundle's entry in `dir`, built first when it is missing or older than the sources. */
export async function freshCliBundle(root, dir) {
  const stamp = sourceStamp(root);
  const entry = path.join(dir, ENTRY);
  let built = null;
  try {
    built = readFileSync(path.join(dir, STAMP), 'utf8');
  } catch {
    // not built yet
  }
  if (built !== stamp || !existsSync(entry)) await buildCliBundle(root, dir, stamp);
  return entry;
}
