import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRunIdempotent, type IdempotentAnswer } from '../../application/idempotency/run-idempotent';
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

describe('PostgresIdempotentRequestStore', () => {
  it('claims a key once; the same fingerprint then waits for the answer, another is a mismatch', async () => {
    const key = fresh();
    const now = clock.now();
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-1', now))).toEqual({ decision: 'new' });
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-1', now))).toEqual({ decision: 'in_progress' });
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-2', now))).toEqual({ decision: 'mismatch' });
    await inA(() => storeA.complete(SCOPE, key, 201, { id: 'sub_1', nested: { amount: 1000 }, list: [1, 2] }, now));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-1', now))).toEqual({
      decision: 'replay',
      status: 201,
      body: { id: 'sub_1', nested: { amount: 1000 }, list: [1, 2] },
    });
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-2', now))).toEqual({ decision: 'mismatch' });
    // Keys belong to a scope: another user's identical key is its own.
    expect(await inA(() => storeA.begin('project-1:user-2', key, 'fp-2', now))).toEqual({ decision: 'new' });
  });

  it('keeps a JSON null body and an error body as they were answered', async () => {
    const key = fresh();
    await inA(() => storeA.begin(SCOPE, key, 'fp', clock.now()));
    await inA(() => storeA.complete(SCOPE, key, 402, { error: 'Your card was declined', code: 'card_declined' }, clock.now()));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', clock.now()))).toEqual({
      decision: 'replay',
      status: 402,
      body: { error: 'Your card was declined', code: 'card_declined' },
    });
    const other = fresh();
    await inA(() => storeA.begin(SCOPE, other, 'fp', clock.now()));
    await inA(() => storeA.complete(SCOPE, other, 200, null, clock.now()));
    expect(await inA(() => storeA.begin(SCOPE, other, 'fp', clock.now()))).toEqual({ decision: 'replay', status: 200, body: null });
  });

  it('forgets a key 24 hours after it was first used: it runs again, with any body', async () => {
    const key = fresh();
    const start = clock.now();
    await inA(() => storeA.begin(SCOPE, key, 'fp-1', start));
    await inA(() => storeA.complete(SCOPE, key, 200, { ok: 1 }, start));
    const almost = new Date(start.getTime() + 24 * HOUR - 1000);
    expect((await inA(() => storeA.begin(SCOPE, key, 'fp-2', almost))).decision).toBe('mismatch');
    const later = new Date(start.getTime() + 24 * HOUR);
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-2', later))).toEqual({ decision: 'new' });
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp-2', later))).toEqual({ decision: 'in_progress' });
    // The purge drops records older than 24 hours, and only those.
    const old = fresh();
    await inA(() => storeA.begin(SCOPE, old, 'fp', start));
    expect(await inA(() => storeA.purgeExpired(new Date(start.getTime() + 1)))).toBeGreaterThanOrEqual(1);
    expect(await inA(() => storeA.begin(SCOPE, old, 'other', later))).toEqual({ decision: 'new' });
    expect((await inA(() => storeA.begin(SCOPE, key, 'other', later))).decision).toBe('mismatch');
  });

  it('releases an abandoned key (the request failed): the retry runs', async () => {
    const key = fresh();
    await inA(() => storeA.begin(SCOPE, key, 'fp', clock.now()));
    await inA(() => storeA.abandon(SCOPE, key));
    expect(await inA(() => storeA.begin(SCOPE, key, 'fp', clock.now()))).toEqual({ decision: 'new' });
    // A completed record is not abandoned by a late call.
    await inA(() => storeA.complete(SCOPE, key, 200, { done: true }, clock.now()));
    await inA(() => storeA.abandon(SCOPE, key));
    expect((await inA(() => storeA.begin(SCOPE, key, 'fp', clock.now()))).decision).toBe('replay');
  });

  it('lets exactly one of 20 concurrent first requests with one key run, across two processes', async () => {
    const key = fresh();
    const now = clock.now();
    const decisions = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? dbA.withContext(() => storeA.begin(SCOPE, key, 'fp', now)) : dbB.withContext(() => storeB.begin(SCOPE, key, 'fp', now)),
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
    purgeExpired: (before: Date) => inA(() => storeA.purgeExpired(before)),
  };
  const run = makeRunIdempotent({ store, crypto, clock });
  const keepBelow500 = (a: IdempotentAnswer) => a.status < 500;
  const request = (key: string | null, body: unknown = { priceId: 'p1' }) => ({ scope: SCOPE, key, method: 'POST', path: '/api/proxy/billing/subscribe', body: body as never });

  it('runs without a key under a fresh one, every time', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await run(request(null), async (key) => (keys.push(key), { status: 201, body: { i } }), keepBelow500);
      expect(r).toMatchObject({ kind: 'ran', answer: { status: 201, body: { i } } });
    }
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('replays the same request, refuses another body and a bad key, compares bodies canonically', async () => {
    const key = fresh();
    let runs = 0;
    const work = async (k: string) => (runs++, { status: 201, body: { key: k } });
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
    await expect(run(request(key), async () => { throw new Error('database down'); }, keepBelow500)).rejects.toThrow('database down');
    expect(await run(request(key), async () => ({ status: 201, body: { ok: true } }), keepBelow500)).toEqual({ kind: 'ran', answer: { status: 201, body: { ok: true } }, key });
    expect(await run(request(key), async () => ({ status: 500, body: {} }), keepBelow500)).toEqual({ kind: 'replayed', answer: { status: 201, body: { ok: true } } });
  });
});
