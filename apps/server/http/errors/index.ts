import { coreErrors } from './core.errors';
import { emailErrors } from './email.errors';
import { mfaErrors } from './mfa.errors';
import { oauthErrors } from './oauth.errors';
import type { ErrorEntry, ErrorStatus } from './types';

/**
 * Every error Tollgate answers, by stable code: its status and its message (the spec's wording
 * where the spec gives one). Features add their own table and spread it here.
 */
export const ERRORS = {
  ...coreErrors,
  ...emailErrors,
  ...oauthErrors,
  ...mfaErrors,
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorResponse<S extends ErrorStatus = ErrorStatus> {
  status: S;
  body: { error: string; code: string };
}

/** The response for an error code; `message` overrides the default wording (e.g. to name a field). */
export function errorResponse<C extends ErrorCode>(code: C, message?: string): ErrorResponse<(typeof ERRORS)[C]['status']> {
  const entry = ERRORS[code];
  return { status: entry.status, body: { error: message ?? entry.message, code } };
}

export type { ErrorEntry, ErrorStatus };
