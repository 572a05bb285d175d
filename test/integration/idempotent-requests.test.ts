import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRunIdempotent, type IdempotentAnswer } from '../../application/idempotency/run-idempotent';
import { IDEMPOTENCY_LEASE_SECONDS } from '../../domain/billing/idempotency';
import { NodeTokenCrypto } from '../../infrastructure/crypto/node-token-crypto';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresIdempotentRequestStore } from '../../infrastructure/persistence/postgres-idempotent-request.store';
import { TestClock } from '../support/clock';
import { createTestDatabase, type TestDatabase } from '../support/database';

let database: TestDatabase;
// Two Database instances stand for two server processes sharing one PostgreSQL.
let dbA: Database;
let dbB: Database;
let storeA: PostgresIdempotentRequestStore;
let storeB: PostgresIdempotentRequestStore;
const clock = new TestClock(new Date('2030-01-01T00:00:00Z'));
let n = 0;
const fresh = () => `key-${++n}`;
const SCOPE = 'project-1:user-1';

beforeAll(async () => {
  database = await createTestDatabase();
  dbA = await Database.open({ url: database.url, poolMax: 10 });
  await dbA.migrate();
  dbB = await Database.open({ url: database.url, poolMax: 10 });
  storeA = new PostgresIdempotentRequestStore(dbA);
  storeB = new PostgresIdempotentRequestStore(dbB);
});
afterAll(async () => {
  await dbA?.close();
  await dbB?.close();
  await database?.drop();
});

const inA = <T>(fn: () => Promise<T>) => dbA.withContext(fn);
const HOUR = 60 * 60 * 1000;
const LEASE_MS = IDEMPOTENCY_LEASE_SECONDS * 1000;
const HOLDER = 'holder-a';
/** A claim by `holder` at `now`, holding the key for the lease's length. */
const lease = (now: Date, holder = HOLDER) => ({ holder, now, expiresAt: new Date(now.getTime() + LEASE_MS) });

describe('PostgresIdempotentRequestStore', () => {
  it('claims a key once; the same fingerprint then waits for the answer, another is a mismatch', async () => {
    const key = fresh();
    const now = clock.now();
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-1', lease(now)))).toEqual({ decision: 'new' });
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-1', lease(now)))).toEqual({ decision: 'in_progress' });
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-2', lease(now)))).toEqual({ decision: 'mismatch' });
    await inA(() => storeA.complete(SCOPE, key, HOLDER, 201, { id: 'sub_1', nested: { amount: 1000 }, list: [1, 2] }, now));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-1', lease(now)))).toEqual({
      decision: 'replay',
      status: 201,
      body: { id: 'sub_1', nested: { amount: 1000 }, list: [1, 2] },
    });
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-2', lease(now)))).toEqual({ decision: 'mismatch' });
    // Keys belong to a scope: another user's identical key is its own.
    expect(await inA(() => storeA.begin('project-1:user-2', key, 'fp-2', lease(now)))).toEqual({ decision: 'new' });
  });

  it('keeps a JSON null body and an error body as they were answered', async () => {
    const key = fresh();
    await inA(() => storeA.begin(SCOPE, key, 'fp', lease(clock.now())));
    await inA(() => storeA.complete(SCOPE, key, HOLDER, 402, { error: 'Your card was declined', code: 'card_declined' }, clock.now()));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', lease(clock.now())))).toEqual({
      decision: 'replay',
      status: 402,
      body: { error: 'Your card was declined', code: 'card_declined' },
    });
    const other = fresh();
    await inA(() => storeA.begin(SCOPE, other, 'fp', lease(clock.now())));
    await inA(() => storeA.complete(SCOPE, other, HOLDER, 200, null, clock.now()));
    expect(await inA(() => storeA.begin(SCOPE, other, 'fp', lease(clock.now())))).toEqual({ decision: 'replay', status: 200, body: null });
  });

  it('forgets a key 24 hours after it was first used: it runs again, with any body', async () => {
    const key = fresh();
    const start = clock.now();
    await inA(() => storeA.begin(SCOPE, key, 'fp-1', lease(start)));
    await inA(() => storeA.complete(SCOPE, key, HOLDER, 200, { ok: 1 }, start));
    const almost = new Date(start.getTime() + 24 * HOUR - 1000);
    expect((await inA(() => storeA.begin(SCOPE, key, 'fp-2', lease(almost)))).decision).toBe('mismatch');
    const later = new Date(start.getTime() + 24 * HOUR);
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-2', lease(later)))).toEqual({ decision: 'new' });
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-2', lease(later)))).toEqual({ decision: 'in_progress' });
    // The purge drops records older than 24 hours, and only those.
    const old = fresh();
    await inA(() => storeA.begin(SCOPE, old, 'fp', lease(start)));
    expect(await inA(() => storeA.purgeExpired(new Date(start.getTime() + 1)))).toBeGreaterThanOrEqual(1);
    expect(await inA(() => storeA.begin(SCOPE, old, 'other', lease(later)))).toEqual({ decision: 'new' });
    expect((await inA(() => storeA.begin(SCOPE, key, 'other', lease(later)))).decision).toBe('mismatch');
  });

  it('releases an abandoned key (the request failed): the retry runs', async () => {
    const key = fresh();
    await inA(() => storeA.begin(SCOPE, key, 'fp', lease(clock.now())));
    await inA(() => storeA.abandon(SCOPE, key, HOLDER));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', lease(clock.now())))).toEqual({ decision: 'new' });
    // A completed record is not abandoned by a late call.
    await inA(() => storeA.complete(SCOPE, key, HOLDER, 200, { done: true }, clock.now()));
    await inA(() => storeA.abandon(SCOPE, key, HOLDER));
    expect((await inA(() => storeA.begin(SCOPE, key, 'fp', lease(clock.now())))).decision).toBe('replay');
  });

  it("hands a dead holder's key to a retry of the same request once its lease ran out, and only then", async () => {
    const key = fresh();
    const start = clock.now();
    const at = (ms: number) => new Date(start.getTime() + ms);
    // Process A begins the request, then dies: it renews nothing from here on.
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', lease(start, 'a')))).toEqual({ decision: 'new' });
    // Its lease still runs: a retry (through process B) waits.
    expect(await dbB.withContext(() => storeB.begin(SCOPE, key, 'fp', lease(at(LEASE_MS - 1), 'b')))).toEqual({ decision: 'in_progress' });
    // Seconds later, not 24 hours: the retry takes the key over and runs.
    expect(await dbB.withContext(() => storeB.begin(SCOPE, key, 'fp', lease(at(LEASE_MS), 'b')))).toEqual({ decision: 'new' });
    // Another request with the key is refused, whatever the leases say.
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-other', lease(at(3 * LEASE_MS), 'c')))).toEqual({ decision: 'mismatch' });
    // The old holder (stalled rather than dead) can no longer renew, complete or release the key.
    expect(await inA(() => storeA.renew(SCOPE, key, lease(at(LEASE_MS + 1), 'a')))).toBe(false);
    await inA(() => storeA.complete(SCOPE, key, 'a', 500, { stale: true }, at(LEASE_MS + 1)));
    await inA(() => storeA.abandon(SCOPE, key, 'a'));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', lease(at(LEASE_MS + 2), 'c')))).toEqual({ decision: 'in_progress' });
    // The new holder renews its lease, so it keeps the key past the first lease's length.
    expect(await dbB.withContext(() => storeB.renew(SCOPE, key, lease(at(LEASE_MS + 5_000), 'b')))).toBe(true);
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', lease(at(2 * LEASE_MS + 1_000), 'c')))).toEqual({ decision: 'in_progress' });
    await dbB.withContext(() => storeB.complete(SCOPE, key, 'b', 201, { ran: 'b' }, at(2 * LEASE_MS + 2_000)));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', lease(at(3 * LEASE_MS), 'c')))).toEqual({ decision: 'replay', status: 201, body: { ran: 'b' } });
    // The takeover kept the key's first use: it is forgotten 24 hours after that, not after the retry.
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-other', lease(at(24 * HOUR), 'd')))).toEqual({ decision: 'new' });
  });

  it('takes over a running record left without a lease (begun before leases existed)', async () => {
    const key = fresh();
    await inA(() => storeA.begin(SCOPE, key, 'fp', lease(clock.now(), 'a')));
    await inA(() => dbA.query('update idempotent_requests set holder = null, lease_expires_at = null where scope = ? and key = ?', [SCOPE, key]));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', lease(clock.now(), 'b')))).toEqual({ decision: 'new' });
  });

  it('lets exactly one of 20 concurrent first requests with one key run, across two processes', async () => {
    const key = fresh();
    const now = clock.now();
    const decisions = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? dbA.withContext(() => storeA.begin(SCOPE, key, 'fp', lease(now))) : dbB.withContext(() => storeB.begin(SCOPE, key, 'fp', lease(now))),
      ),
    );
    expect(decisions.filter((d) => d.decision === 'new')).toHaveLength(1);
    expect(decisions.filter((d) => d.decision === 'in_progress')).toHaveLength(19);
  });
});

describe('runIdempotent', () => {
  const crypto = new NodeTokenCrypto();
  // The store in a database context of its own per call, as a request's would be.
  const store = {
    begin: (...a: Parameters<typeof storeA.begin>) => inA(() => storeA.begin(...a)),
    complete: (...a: Parameters<typeof storeA.complete>) => inA(() => storeA.complete(...a)),
    abandon: (...a: Parameters<typeof storeA.abandon>) => inA(() => storeA.abandon(...a)),
    renew: (...a: Parameters<typeof storeA.renew>) => inA(() => storeA.renew(...a)),
    purgeExpired: (before: Date) => inA(() => storeA.purgeExpired(before)),
  };
  const run = makeRunIdempotent({ store, crypto, clock });
  const keepBelow500 = (a: IdempotentAnswer) => a.status < 500;
  const request = (key: string | null, body: unknown = { priceId: 'p1' }) => ({
    scope: SCOPE,
    key,
    method: 'POST',
    path: '/api/proxy/billing/subscribe',
    body: body as never,
  });

  it('runs without a key under a fresh one, every time', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await run(
        request(null),
        async (key) => {
          keys.push(key);
          return { status: 201, body: { i } };
        },
        keepBelow500,
      );
      expect(r).toMatchObject({ kind: 'ran', answer: { status: 201, body: { i } } });
    }
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('replays the same request, refuses another body and a bad key, compares bodies canonically', async () => {
    const key = fresh();
    let runs = 0;
    const work = async (k: string) => {
      runs++;
      return { status: 201, body: { key: k } };
    };
    expect(await run(request(key, { a: 1, b: [1, { c: 2 }] }), work, keepBelow500)).toEqual({ kind: 'ran', answer: { status: 201, body: { key } }, key });
    // Key order does not matter, values do.
    expect(await run(request(key, { b: [1, { c: 2 }], a: 1 }), work, keepBelow500)).toEqual({ kind: 'replayed', answer: { status: 201, body: { key } } });
    expect(await run(request(key, { a: 2, b: [1, { c: 2 }] }), work, keepBelow500)).toEqual({ kind: 'refused', error: 'idempotency_key_reused' });
    expect(runs).toBe(1);
    for (const bad of ['', 'has space', 'x'.repeat(256), 'naïve']) {
      expect(await run(request(bad), work, keepBelow500)).toEqual({ kind: 'refused', error: 'invalid_idempotency_key' });
    }
  });

  it('does not keep an answer it was told not to keep (a 5xx), nor a fault: the retry runs again', async () => {
    const key = fresh();
    expect((await run(request(key), async () => ({ status: 502, body: { code: 'processor_unavailable' } }), keepBelow500)).kind).toBe('ran');
    await expect(
      run(
        request(key),
        async () => {
          throw new Error('database down');
        },
        keepBelow500,
      ),
    ).rejects.toThrow('database down');
    expect(await run(request(key), async () => ({ status: 201, body: { ok: true } }), keepBelow500)).toEqual({
      kind: 'ran',
      answer: { status: 201, body: { ok: true } },
      key,
    });
    expect(await run(request(key), async () => ({ status: 500, body: {} }), keepBelow500)).toEqual({
      kind: 'replayed',
      answer: { status: 201, body: { ok: true } },
    });
  });
  it('keeps the key of a request that runs longer than the lease (heartbeats), and lets a retry take over a stalled one', async () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // Work that runs for twice the lease, in the clock's time, giving the heartbeat time to beat.
    const slowWork = (runs: string[], name: string) => async () => {
      runs.push(name);
      for (let i = 0; i < 4; i++) {
        clock.advance(LEASE_MS / 2);
        await sleep(80);
      }
      return { status: 201, body: { ran: name } };
    };
    const quick = (runs: string[], name: string) => async () => {
      runs.push(name);
      return { status: 201, body: { ran: name } };
    };

    // Renewed every 20 ms: a retry in the middle of the run is refused, the first run's answer kept.
    const beating = makeRunIdempotent({ store, crypto, clock, heartbeatMs: 20 });
    const key = fresh();
    const runs: string[] = [];
    const first = beating(request(key), slowWork(runs, 'first'), keepBelow500);
    await sleep(250); // past the first lease's length in the clock's time
    expect(await beating(request(key), quick(runs, 'retry'), keepBelow500)).toEqual({ kind: 'refused', error: 'idempotency_key_in_progress' });
    expect(await first).toMatchObject({ kind: 'ran', answer: { body: { ran: 'first' } } });
    expect(await beating(request(key), quick(runs, 'retry'), keepBelow500)).toEqual({ kind: 'replayed', answer: { status: 201, body: { ran: 'first' } } });
    expect(runs).toEqual(['first']);

    // A holder that renews nothing (stalled, or its process gone): the retry runs once the lease ran
    // out, and its answer is the one kept; the stalled run's late answer is not stored.
    const silent = makeRunIdempotent({ store, crypto, clock, heartbeatMs: 60 * 60 * 1000 });
    const other = fresh();
    const stalledRuns: string[] = [];
    const stalled = silent(request(other), slowWork(stalledRuns, 'stalled'), keepBelow500);
    await sleep(250);
    expect(await silent(request(other), quick(stalledRuns, 'retry'), keepBelow500)).toMatchObject({ kind: 'ran', answer: { body: { ran: 'retry' } } });
    expect(await stalled).toMatchObject({ kind: 'ran', answer: { body: { ran: 'stalled' } } });
    expect(await silent(request(other), quick(stalledRuns, 'again'), keepBelow500)).toEqual({
      kind: 'replayed',
      answer: { status: 201, body: { ran: 'retry' } },
    });
    expect(stalledRuns).toEqual(['stalled', 'retry']);
  });
});
