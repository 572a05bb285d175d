import type { Response } from 'express';
import { errorResponse, type ErrorCode, type ErrorResponse } from './errors';

/**
 * The answer for a use case's failure: its error code's answer (its `detail`, when it has one,
 * replacing the table's message), and for a rate-limit refusal (which carries `retryAfterMs`) the
 * 429 with Retry-After in whole seconds. The answer's type has exactly the codes the failure can
 * carry, so a route compiles only if it declares every one of them: an undeclared code is a
 * compile error, never a 500.
 */
export function failureResponse<F extends { ok: false; error: ErrorCode; detail?: string }>(res: Response, failure: F): ErrorResponse<F['error']> {
  if ('retryAfterMs' in failure && typeof failure.retryAfterMs === 'number') {
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(failure.retryAfterMs / 1000))));
  }
  return errorResponse(failure.error, failure.detail) as ErrorResponse<F['error']>;
}
