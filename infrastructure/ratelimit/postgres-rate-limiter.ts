import type { Clock } from '../../application/ports/clock';
import type { RateLimitCheck, RateLimitDecision, RateLimiter, RateLimitRule } from '../../application/ports/rate-limiter';
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
    return (await this.consumeInOrder([{ key, rule }]))[0]!;
  }

  /**
   * One statement for all the checks: each counter's upsert is a data-modifying CTE, and each after
   * the first counts only if the one before it allowed (its points within its allowance), so the
   * keys after a refusal are not counted, as if consumed one by one. A key given twice is counted
   * one statement at a time (a statement may not change a row twice).
   */
  async consumeInOrder(checks: ReadonlyArray<RateLimitCheck>): Promise<RateLimitDecision[]> {
    if (checks.length === 0) return [];
    if (new Set(checks.map((c) => c.key)).size < checks.length) {
      const decisions: RateLimitDecision[] = [];
      for (const check of checks) {
        const [decision] = await this.consumeInOrder([check]);
        decisions.push(decision!);
        if (!decision!.allowed) break;
      }
      return decisions;
    }
    const now = this.clock.now();
    const allowance = (rule: RateLimitRule) => Math.max(1, Math.floor(rule.points * this.scale));
    const params: unknown[] = [];
    checks.forEach((check, i) => {
      params.push(check.key, new Date(now.getTime() + check.rule.windowMs));
      if (i > 0) params.push(allowance(checks[i - 1]!.rule));
      params.push(now, now);
    });
    const rows = await this.db.query<{ i: number; points: number; expires_at: Date }>(consumeSql(checks.length), params);
    return rows
      .sort((a, b) => a.i - b.i)
      .map((row) => {
        const points = allowance(checks[row.i]!.rule);
        return {
          allowed: row.points <= points,
          remaining: Math.max(0, points - row.points),
          retryAfterMs: Math.max(0, new Date(row.expires_at).getTime() - now.getTime()),
        };
      });
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

const consumeSqls: string[] = [];

/**
 * The statement counting `n` keys in order (parameters per key: the key, its window's end, the
 * allowance of the key before it from the second on, then now twice), built once per `n`.
 */
function consumeSql(n: number): string {
  let sql = consumeSqls[n];
  if (sql === undefined) {
    const ctes = Array.from({ length: n }, (_, i) => {
      const gate = i === 0 ? '' : ` where (select points from c${i - 1}) <= ?`;
      return `c${i} as (insert into rate_limits (key, points, expires_at) select ?, 1, ?${gate}
           on conflict (key) do update set
             points = case when rate_limits.expires_at <= ? then 1 else rate_limits.points + 1 end,
             expires_at = case when rate_limits.expires_at <= ? then excluded.expires_at else rate_limits.expires_at end
           returning points, expires_at)`;
    });
    const selects = Array.from({ length: n }, (_, i) => `select ${i} as i, points, expires_at from c${i}`);
    sql = `with ${ctes.join(',\n')}\n${selects.join(' union all ')}`;
    consumeSqls[n] = sql;
  }
  return sql;
}
