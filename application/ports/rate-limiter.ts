export interface RateLimitRule {
  /** Requests allowed per window. */
  points: number;
  /** Window length in milliseconds. */
  windowMs: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  remaining: number;
  /** Milliseconds until the window resets (for Retry-After). */
  retryAfterMs: number;
}

/** A limiter whose counters live in the database, so limits hold across server processes. */
export interface RateLimiter {
  consume(key: string, rule: RateLimitRule): Promise<RateLimitDecision>;
  reset(key: string): Promise<void>;
}
