/** `npm run build` (scripts/build.mjs). */
import type { BuildFacts } from '../bin/cli-bundle.mjs';
export declare function buildRelease(root: string, options?: { out?: string; stamp?: string; log?: (line: string) => void }): Promise<BuildFacts>;
