import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCliBundle as build, ENTRY } from '../../bin/cli-bundle.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the test run's CLI is built (test-results/ is git-ignored), as bin/tollgate.mjs builds the product's. */
export const CLI_BUNDLE = path.join(ROOT, 'test-results/cli', ENTRY);

/**
 * Bundles the CLI once for the test run (bin/cli-bundle.mjs): each `tollgate` run of the tests
 * then starts without tsx's loader hooks, as `tollgate` does for its users.
 */
export async function buildCliBundle(): Promise<void> {
  await build(ROOT, path.dirname(CLI_BUNDLE));
}
