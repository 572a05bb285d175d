import type { ErrorEntry } from './types';

export const mfaErrors = {} as const satisfies Record<string, ErrorEntry>;
