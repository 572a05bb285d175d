import type { RateLimitRule } from '../ports/rate-limiter';

export { consumeLimits, type RateLimited } from '../ports/rate-limiter';

/** Rate limits of the MFA endpoints; counters live in the database, so they hold across processes. */
export interface MfaLimits {
  /** mfa/verify, counted per IP, per challenge and per user (the spec: 5 per 15 minutes per IP). */
  verify: RateLimitRule;
  /** SMS codes sent, per user, per challenge and per IP. */
  smsSend: RateLimitRule;
}
