import type { RateLimiter, RateLimitRule } from '../ports/rate-limiter';

/** A refused rate-limit decision, as a use case result. */
export type RateLimited = { readonly ok: false; readonly error: 'rate_limited'; readonly retryAfterMs: number };

/** Rate limits of the MFA endpoints; counters live in the database, so they hold across processes. */
export interface MfaLimits {
  /** mfa/verify, counted per IP, per challenge and per user (the spec: 5 per 15 minutes per IP). */
  verify: RateLimitRule;
  /** SMS codes sent, per user, per challenge and per IP. */
  smsSend: RateLimitRule;
}

export const DEFAULT_MFA_LIMITS: MfaLimits = {
  verify: { points: 5, windowMs: 15 * 60_000 },
  smsSend: { points: 5, windowMs: 15 * 60_000 },
};

/** Counts one attempt against every key, stopping at the first that refuses it. */
export async function consumeLimits(limiter: Pick<RateLimiter, 'consume'>, keys: string[], rule: RateLimitRule): Promise<RateLimited | null> {
  for (const key of keys) {
    const decision = await limiter.consume(key, rule);
    if (!decision.allowed) return { ok: false, error: 'rate_limited', retryAfterMs: decision.retryAfterMs };
  }
  return null;
}
