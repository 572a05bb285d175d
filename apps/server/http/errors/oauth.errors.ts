import type { ErrorEntry } from './types';

export const oauthErrors = {} as const satisfies Record<string, ErrorEntry>;
