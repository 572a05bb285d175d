import type { Response } from 'express';
import type { RateLimitDecision } from '../../../application/ports/rate-limiter';
import { errorResponse } from './errors';

/** The 429 answer for a refused rate-limit decision, with Retry-After in whole seconds. */
export function tooManyRequests(res: Response, decision: RateLimitDecision) {
  res.setHeader('Retry-After', String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000))));
  return errorResponse('rate_limited');
}
