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
}

/** A refused rate-limit decision, as a use case result: the caller answers 429 with Retry-After. */
export type RateLimited = { readonly ok: false; readonly error: 'rate_limited'; readonly retryAfterMs: number };

/** Counts one attempt against every key, stopping at the first that refuses it. */
export async function consumeLimits(limiter: Pick<RateLimiter, 'consume'>, keys: string[], rule: RateLimitRule): Promise<RateLimited | null> {
  for (const key of keys) {
    const decision = await limiter.consume(key, rule);
    if (!decision.allowed) return { ok: false, error: 'rate_limited', retryAfterMs: decision.retryAfterMs };
  }
  return null;
}
