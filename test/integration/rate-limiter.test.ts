import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresRateLimiter } from '../../infrastructure/ratelimit/postgres-rate-limiter';
import { TestClock } from '../support/clock';
import { createTestDatabase, type TestDatabase } from '../support/database';

let database: TestDatabase;
// Two Database instances stand for two server processes sharing one PostgreSQL.
let dbA: Database;
let dbB: Database;
let clock: TestClock;
let limiterA: PostgresRateLimiter;
let limiterB: PostgresRateLimiter;
let n = 0;
const freshKey = () => `test:${++n}:${Date.now()}`;

beforeAll(async () => {
  database = await createTestDatabase();
  dbA = await Database.open({ url: database.url, poolMax: 10 });
  await dbA.migrate();
  dbB = await Database.open({ url: database.url, poolMax: 10 });
  clock = new TestClock(new Date('2030-01-01T00:00:00Z'));
  limiterA = new PostgresRateLimiter(dbA, clock);
  limiterB = new PostgresRateLimiter(dbB, clock);
});
afterAll(async () => {
  await dbA?.close();
  await dbB?.close();
  await database?.drop();
});

const consume = (limiter: PostgresRateLimiter, db: Database, key: string, rule = { points: 10, windowMs: 60_000 }) =>
  db.withContext(() => limiter.consume(key, rule));

async function storedPoints(key: string): Promise<number | undefined> {
  const rows = await dbA.withContext(() => dbA.query<{ points: number }>('select points from rate_limits where key = ?', [key]));
  return rows[0]?.points;
}

describe('PostgresRateLimiter', () => {
  it('counts exactly under 50 concurrent consumes from two processes: exactly `points` are allowed', async () => {
    const key = freshKey();
    const rule = { points: 17, windowMs: 60_000 };
    const decisions = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? consume(limiterA, dbA, key, rule) : consume(limiterB, dbB, key, rule))),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(17);
    expect(decisions.filter((d) => !d.allowed)).toHaveLength(33);
    // Every consume counted once: remaining values of the allowed ones are 16..0, each exactly once.
    const remaining = decisions
      .filter((d) => d.allowed)
      .map((d) => d.remaining)
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 17 }, (_, i) => i));
    expect(await storedPoints(key)).toBe(50);
  });

  it('allows `points` requests per window, then denies with the time left until the window resets', async () => {
    const key = freshKey();
    const rule = { points: 3, windowMs: 60_000 };
    const first = await consume(limiterA, dbA, key, rule);
    expect(first).toEqual({ allowed: true, remaining: 2, retryAfterMs: 60_000 });
    clock.advance(10_000);
    expect(await consume(limiterB, dbB, key, rule)).toEqual({ allowed: true, remaining: 1, retryAfterMs: 50_000 });
    expect(await consume(limiterA, dbA, key, rule)).toEqual({ allowed: true, remaining: 0, retryAfterMs: 50_000 });
    clock.advance(15_500);
    const denied = await consume(limiterB, dbB, key, rule);
    expect(denied).toEqual({ allowed: false, remaining: 0, retryAfterMs: 34_500 });

    // One millisecond before the window ends: still denied, 1 ms to wait.
    clock.advance(34_499);
    expect(await consume(limiterA, dbA, key, rule)).toEqual({ allowed: false, remaining: 0, retryAfterMs: 1 });

    // The window has passed: a new one starts with a full allowance.
    clock.advance(1);
    expect(await consume(limiterA, dbA, key, rule)).toEqual({ allowed: true, remaining: 2, retryAfterMs: 60_000 });
    expect(await storedPoints(key)).toBe(1);
  });

  it('keeps separate keys separate', async () => {
    const a = freshKey();
    const b = freshKey();
    const rule = { points: 1, windowMs: 1000 };
    expect((await consume(limiterA, dbA, a, rule)).allowed).toBe(true);
    expect((await consume(limiterA, dbA, a, rule)).allowed).toBe(false);
    expect((await consume(limiterB, dbB, b, rule)).allowed).toBe(true);
  });

  it('reset(key) gives the key a fresh allowance at once, from any process', async () => {
    const key = freshKey();
    const other = freshKey();
    const rule = { points: 2, windowMs: 60_000 };
    for (let i = 0; i < 3; i++) await consume(limiterA, dbA, key, rule);
    await consume(limiterA, dbA, other, rule);
    expect((await consume(limiterA, dbA, key, rule)).allowed).toBe(false);

    await dbB.withContext(() => limiterB.reset(key));
    expect(await storedPoints(key)).toBeUndefined();
    expect(await storedPoints(other)).toBe(1);
    expect(await consume(limiterA, dbA, key, rule)).toEqual({ allowed: true, remaining: 1, retryAfterMs: 60_000 });
  });

  it('consumeInOrder counts the keys in one statement, in order, and stops at the first refusal', async () => {
    const ip = freshKey();
    const email = freshKey();
    const third = freshKey();
    const byIp = { points: 2, windowMs: 60_000 };
    const byEmail = { points: 5, windowMs: 30_000 };
    const checks = [
      { key: ip, rule: byIp },
      { key: email, rule: byEmail },
      { key: third, rule: { points: 1, windowMs: 10_000 } },
    ];
    const inOrder = (limiter: PostgresRateLimiter, db: Database) => db.withContext(() => limiter.consumeInOrder(checks));
    expect(await inOrder(limiterA, dbA)).toEqual([
      { allowed: true, remaining: 1, retryAfterMs: 60_000 },
      { allowed: true, remaining: 4, retryAfterMs: 30_000 },
      { allowed: true, remaining: 0, retryAfterMs: 10_000 },
    ]);
    // The third key refuses: the first two were counted, as consumed one by one.
    clock.advance(1_000);
    expect(await inOrder(limiterB, dbB)).toEqual([
      { allowed: true, remaining: 0, retryAfterMs: 59_000 },
      { allowed: true, remaining: 3, retryAfterMs: 29_000 },
      { allowed: false, remaining: 0, retryAfterMs: 9_000 },
    ]);
    // The first key refuses: the keys after it are not counted.
    expect(await inOrder(limiterA, dbA)).toEqual([{ allowed: false, remaining: 0, retryAfterMs: 59_000 }]);
    expect([await storedPoints(ip), await storedPoints(email), await storedPoints(third)]).toEqual([3, 2, 2]);
    // No checks: nothing counted, nothing refused.
    expect(await dbA.withContext(() => limiterA.consumeInOrder([]))).toEqual([]);
    // A key given twice is counted twice.
    const twice = freshKey();
    expect(
      await dbA.withContext(() =>
        limiterA.consumeInOrder([
          { key: twice, rule: byIp },
          { key: twice, rule: byIp },
          { key: email, rule: byEmail },
        ]),
      ),
    ).toEqual([
      { allowed: true, remaining: 1, retryAfterMs: 60_000 },
      { allowed: true, remaining: 0, retryAfterMs: 60_000 },
      { allowed: true, remaining: 2, retryAfterMs: 29_000 },
    ]);
  });

  it('consumeInOrder counts exactly under 40 concurrent calls from two processes: the second key only behind an allowed first', async () => {
    const first = freshKey();
    const second = freshKey();
    const checks = [
      { key: first, rule: { points: 15, windowMs: 60_000 } },
      { key: second, rule: { points: 10, windowMs: 60_000 } },
    ];
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0 ? dbA.withContext(() => limiterA.consumeInOrder(checks)) : dbB.withContext(() => limiterB.consumeInOrder(checks)),
      ),
    );
    expect(results.filter((r) => r.length === 1 && !r[0]!.allowed)).toHaveLength(25);
    expect(results.filter((r) => r.length === 2 && r[1]!.allowed)).toHaveLength(10);
    expect(results.filter((r) => r.length === 2 && !r[1]!.allowed)).toHaveLength(5);
    expect([await storedPoints(first), await storedPoints(second)]).toEqual([40, 15]);
  });

  it('purgeExpired drops only counters whose window has passed on the injected clock', async () => {
    await dbA.withContext(() => dbA.query('delete from rate_limits'));
    const short = freshKey();
    const long = freshKey();
    await consume(limiterA, dbA, short, { points: 5, windowMs: 1_000 });
    await consume(limiterA, dbA, long, { points: 5, windowMs: 120_000 });

    clock.advance(999);
    expect(await dbA.withContext(() => limiterA.purgeExpired())).toBe(0);
    // At the very instant the window ends the counter is spent (consume starts a new window then).
    clock.advance(1);
    expect(await dbA.withContext(() => limiterA.purgeExpired())).toBe(1);
    expect(await storedPoints(short)).toBeUndefined();
    expect(await storedPoints(long)).toBe(1);

    clock.advance(119_000);
    expect(await dbB.withContext(() => limiterB.purgeExpired())).toBe(1);
    expect(await storedPoints(long)).toBeUndefined();
  });
});
