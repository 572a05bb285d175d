/** The `tollgate` CLI bundle (bin/cli-bundle.mjs). */
export interface BuildFacts {
  version: string;
  commit: string | null;
  builtAt: string;
}
export declare const ENTRY: string;
export declare const SOURCE_DIRS: string[];
export declare const SOURCE_FILES: string[];
export declare function sourceStamp(root: string, dirs?: string[], files?: string[]): string;
export declare function buildInfo(root: string): BuildFacts;
export declare function bundleOptions(root: string, info?: BuildFacts): Record<string, unknown>;
export declare function copyAssets(root: string, out: string): void;
export declare function buildCliBundle(root: string, dir: string, stamp?: string, info?: BuildFacts): Promise<void>;
export declare function freshCliBundle(root: string, dir: string): Promise<string>;
