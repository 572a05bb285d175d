import type { Response } from 'express';
import type { RateLimited } from '../../../application/ports/rate-limiter';
import { errorResponse, type ErrorCode } from './errors';

/** The 429 answer for a refused rate-limit decision, with Retry-After in whole seconds. */
function tooManyRequests(res: Response, refusal: { retryAfterMs: number }) {
  res.setHeader('Retry-After', String(Math.max(1, Math.ceil(refusal.retryAfterMs / 1000))));
  return errorResponse('rate_limited');
}

/** The answer for a use case's failure: its error code, or 429 with Retry-After for a rate-limit refusal. */
export function failureResponse<C extends ErrorCode>(res: Response, failure: { ok: false; error: C } | RateLimited) {
  if ('retryAfterMs' in failure) return tooManyRequests(res, failure);
  return errorResponse(failure.error);
}
