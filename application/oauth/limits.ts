import type { RateLimitRule } from '../ports/rate-limiter';

/** Rate limits of the OAuth proxy (apps/server/config.ts reads them from the OAUTH_* settings). */
export interface OAuthLimits {
  /** Initiations (POST or GET /api/proxy/{provider}) per API key and client IP. */
  initiation: RateLimitRule;
}
