import type { Clock } from '../../application/ports/clock';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from '../../application/ports/rate-limiter';
import type { Database } from '../persistence/database';

/**
 * Fixed-window counters in one PostgreSQL table, updated with a single upsert so that concurrent
 * requests in any number of processes count exactly. Time comes from the injected clock.
 */
export class PostgresRateLimiter implements RateLimiter {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    /** Multiplies every rule's allowance (RATE_LIMIT_SCALE); 1 keeps the documented limits. */
    private readonly scale = 1,
  ) {}

  async consume(key: string, rule: RateLimitRule): Promise<RateLimitDecision> {
    const now = this.clock.now();
    const resetAt = new Date(now.getTime() + rule.windowMs);
    const rows = await this.db.query<{ points: number; expires_at: Date }>(
      `insert into rate_limits (key, points, expires_at) values (?, 1, ?)
       on conflict (key) do update set
         points = case when rate_limits.expires_at <= ? then 1 else rate_limits.points + 1 end,
         expires_at = case when rate_limits.expires_at <= ? then excluded.expires_at else rate_limits.expires_at end
       returning points, expires_at`,
      [key, resetAt, now, now],
    );
    const row = rows[0]!;
    const expiresAt = new Date(row.expires_at);
    const points = Math.max(1, Math.floor(rule.points * this.scale));
    return {
      allowed: row.points <= points,
      remaining: Math.max(0, points - row.points),
      retryAfterMs: Math.max(0, expiresAt.getTime() - now.getTime()),
    };
  }

  async reset(key: string): Promise<void> {
    await this.db.query('delete from rate_limits where key = ?', [key]);
  }

  /** Drops counters whose window has ended (as `consume` sees it); run periodically by the worker. */
  async purgeExpired(): Promise<number> {
    const rows = await this.db.query('delete from rate_limits where expires_at <= ? returning key', [this.clock.now()]);
    return rows.length;
  }
}
