import type { Response } from 'express';
import { errorResponse, type ErrorCode, type ErrorResponse } from './errors';

/**
 * The answer for a use case's failure: its error code's answer, and for a rate-limit refusal
 * (which carries `retryAfterMs`) the 429 with Retry-After in whole seconds. The answer's type has
 * exactly the codes the failure can carry, so a route declares 429 only if its use case limits.
 */
export function failureResponse<F extends { ok: false; error: ErrorCode }>(res: Response, failure: F): ErrorResponse<F['error']> {
  if ('retryAfterMs' in failure && typeof failure.retryAfterMs === 'number') {
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(failure.retryAfterMs / 1000))));
  }
  return errorResponse(failure.error) as ErrorResponse<F['error']>;
}
