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
  /**
   * Counts one attempt against each check's key in order and stops at the first refusal (the keys
   * after it are not counted): the decisions of the keys counted, the refusal last. An adapter
   * does it in one step (one statement), not one per key.
   */
  consumeInOrder(checks: ReadonlyArray<RateLimitCheck>): Promise<RateLimitDecision[]>;
}

export interface RateLimitCheck {
  key: string;
  rule: RateLimitRule;
}

/** A refused rate-limit decision, as a use case result: the caller answers 429 with Retry-After. */
export type RateLimited = { readonly ok: false; readonly error: 'rate_limited'; readonly retryAfterMs: number };

/** Counts one attempt against every key, stopping at the first that refuses it. */
export function consumeLimits(limiter: Pick<RateLimiter, 'consumeInOrder'>, keys: string[], rule: RateLimitRule): Promise<RateLimited | null> {
  return consumeChecks(
    limiter,
    keys.map((key) => ({ key, rule })),
  );
}

/** Counts one attempt against each check in order, stopping at the first refusal: that refusal as a result, or null. */
export async function consumeChecks(limiter: Pick<RateLimiter, 'consumeInOrder'>, checks: RateLimitCheck[]): Promise<RateLimited | null> {
  const refused = (await limiter.consumeInOrder(checks)).find((d) => !d.allowed);
  return refused ? { ok: false, error: 'rate_limited', retryAfterMs: refused.retryAfterMs } : null;
}
