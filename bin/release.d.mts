/** The built release and its freshness (bin/release.mjs). */
export declare const RELEASE_DIRS: string[];
export declare const RELEASE_FILES: string[];
export declare function distOf(root: string): string;
export declare function releaseStamp(root: string): string;
export declare function readBuild(dist: string): { version: string; commit: string | null; builtAt: string; stamp: string; node: string } | null;
export declare function hasSources(root: string): boolean;
export declare function canBuild(root: string): boolean;
export declare function freshRelease(root: string, log?: (line: string) => void): Promise<string>;
export declare function runRelease(root: string, entry: 'main' | 'worker'): Promise<void>;
