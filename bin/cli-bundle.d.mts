/** The `tollgate` CLI bundle (bin/cli-bundle.mjs). */
export declare const ENTRY: string;
export declare function sourceStamp(root: string): string;
export declare function buildCliBundle(root: string, dir: string, stamp?: string): Promise<void>;
export declare function freshCliBundle(root: string, dir: string): Promise<string>;
