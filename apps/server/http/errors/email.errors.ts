import type { ErrorEntry } from './types';

export const emailErrors = {} as const satisfies Record<string, ErrorEntry>;
