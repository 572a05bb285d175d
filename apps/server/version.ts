import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a build of Tollgate is: the package version, the git commit it was built from, when. */
export interface BuildInfo {
  version: string;
  /** The git commit (short) the release was built from; null when unknown (no git, or run from the sources). */
  commit: string | null;
  /** When the release was built (ISO 8601); null when run from the sources. */
  builtAt: string | null;
  /** True in the built output (dist/, bundled by scripts/build.mjs), false when run from the TypeScript sources (tsx). */
  bundled: boolean;
}

// Replaced by esbuild with the build's facts (scripts/build.mjs, bin/cli-bundle.mjs); undeclared under tsx.
declare const __TOLLGATE_BUILD__: Omit<BuildInfo, 'bundled'> | undefined;

function fromSources(): BuildInfo {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  let version = '0.0.0';
  try {
    version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? version;
  } catch {
    // no package.json beside the sources: the placeholder version
  }
  return { version, commit: null, builtAt: null, bundled: false };
}

/** This process's build: embedded in the built output, read from package.json when run from the sources. */
export const BUILD: BuildInfo = typeof __TOLLGATE_BUILD__ !== 'undefined' ? { ...__TOLLGATE_BUILD__, bundled: true } : fromSources();

/** One line for `tollgate --version` and logs: `0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-29T10:00:00.000Z)`. */
export function describeBuild(build: BuildInfo = BUILD): string {
  const facts = [build.commit ? `commit ${build.commit}` : null, build.builtAt ? `built ${build.builtAt}` : 'from the sources'].filter(Boolean);
  return `${build.version} (${facts.join(', ')})`;
}
