import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../apps/server/http/logger';
import { InvalidationBus } from '../../infrastructure/cache/invalidation-bus';
import { RevokedSessionSet } from '../../infrastructure/cache/revoked-sessions';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresRefreshTokenStore } from '../../infrastructure/persistence/postgres-refresh-token.store';
import { PostgresSessionStore } from '../../infrastructure/persistence/postgres-session.store';
import { TestClock } from '../support/clock';
import { createTestDatabase, type TestDatabase } from '../support/database';

/**
 * The sessions table (what the migration makes of the refresh tokens issued before it) and the
 * revoked-session set every process keeps, against a real PostgreSQL and its NOTIFY.
 */
let database: TestDatabase;
let db: Database;
let clock: TestClock;
let projectId: string;
const logger = createLogger('silent', false);
const DAY = 24 * 3600_000;

const run = <T>(fn: () => Promise<T>) => db.withContext(fn);

async function insertUser(): Promise<string> {
  const id = randomUUID();
  const now = clock.now();
  await run(() => db.query(`insert into users (id, project_id, provider, created_at, updated_at) values (?, ?, 'email', ?, ?)`, [id, projectId, now, now]));
  return id;
}

/** A session as a sign-in starts one (the refresh-token store's insert). */
async function startSession(userId: string, origin = { ip: '203.0.113.7', userAgent: 'Firefox/140' }): Promise<string> {
  const sessionId = randomUUID();
  const now = clock.now();
  await run(() =>
    new PostgresRefreshTokenStore(db).insert(
      {
        id: randomUUID(),
        projectId,
        userId,
        familyId: sessionId,
        parentId: null,
        provider: 'email',
        authCodeId: null,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 30 * DAY),
        idleExpiresAt: new Date(now.getTime() + 14 * DAY),
      },
      `hash-${randomUUID()}`,
      origin,
    ),
  );
  return sessionId;
}

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url });
  clock = new TestClock(new Date('2030-01-01T00:00:00Z'));
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('the Sessions migration', () => {
  it('makes a session of every refresh-token family issued before it: revoked when its tokens are, last used at its latest refresh', async () => {
    await (await db.migrator()).up({ to: 'Migration20261125000000Webhooks' });
    projectId = randomUUID();
    const t0 = new Date('2029-12-01T00:00:00Z');
    await run(() =>
      db.query(`insert into projects (id, name, signing_secret_enc, settings, created_at, updated_at) values (?, 'P', 'x', '{}'::jsonb, ?, ?)`, [
        projectId,
        t0,
        t0,
      ]),
    );
    const user = await run(async () => {
      const id = randomUUID();
      await db.query(`insert into users (id, project_id, provider, created_at, updated_at) values (?, ?, 'github', ?, ?)`, [id, projectId, t0, t0]);
      return id;
    });
    const [live, ended] = [randomUUID(), randomUUID()];
    const token = (family: string, created: Date, over: { rotated?: Date; revoked?: Date; lastUsed?: Date } = {}) =>
      run(() =>
        db.query(
          `insert into refresh_tokens (id, project_id, user_id, family_id, token_hash, provider, created_at, expires_at, idle_expires_at,
             last_used_at, rotated_at, revoked_at)
           values (?, ?, ?, ?, ?, 'github', ?, ?, ?, ?, ?, ?)`,
          [
            randomUUID(),
            projectId,
            user,
            family,
            `h-${randomUUID()}`,
            created,
            new Date(t0.getTime() + 30 * DAY),
            new Date(created.getTime() + 14 * DAY),
            over.lastUsed ?? null,
            over.rotated ?? null,
            over.revoked ?? null,
          ],
        ),
      );
    const t1 = new Date(t0.getTime() + DAY);
    await token(live, t0, { rotated: t1, lastUsed: t1 });
    await token(live, t1);
    await token(ended, t0, { revoked: t1 });

    expect((await db.migrate())[0]).toBe('Migration20261126000000Sessions');
    const rows = await run(() =>
      db.query<{ id: string; created_at: Date | string; last_used_at: Date | string; revoked_at: Date | string | null; ip: string | null; provider: string }>(
        'select id, created_at, last_used_at, revoked_at, ip, provider from sessions order by created_at, revoked_at nulls first',
      ),
    );
    const at = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());
    expect(rows.map((r) => ({ ...r, created_at: at(r.created_at), last_used_at: at(r.last_used_at), revoked_at: at(r.revoked_at) }))).toEqual([
      { id: live, created_at: at(t0), last_used_at: at(t1), revoked_at: null, ip: null, provider: 'github' },
      { id: ended, created_at: at(t0), last_used_at: at(t0), revoked_at: at(t1), ip: null, provider: 'github' },
    ]);
  });

  it('runs after the Audit and Console migrations on a database that has them (they were released before it)', async () => {
    const other = await createTestDatabase();
    const released = await Database.open({ url: other.url });
    try {
      await (await released.migrator()).up({ to: 'Migration20261125000000Webhooks' });
      await (await released.migrator()).up({ migrations: ['Migration20261127000000Audit', 'Migration20261129000000Console'] });
      const applied = await released.migrate();
      expect(applied[0]).toBe('Migration20261126000000Sessions');
      expect(applied).not.toContain('Migration20261127000000Audit');
      expect(applied).not.toContain('Migration20261129000000Console');
      const columns = await released.withContext(() =>
        released.query<{ table_name: string; column_name: string }>(
          `select table_name, column_name from information_schema.columns
            where table_name in ('authorization_codes', 'mfa_challenges') and column_name in ('ip', 'user_agent') order by 1, 2`,
        ),
      );
      expect(columns.map((c) => `${c.table_name}.${c.column_name}`)).toEqual([
        'authorization_codes.ip',
        'authorization_codes.user_agent',
        'mfa_challenges.ip',
        'mfa_challenges.user_agent',
      ]);
    } finally {
      await released.close();
      await other.drop();
    }
  });
});

describe('the session store', () => {
  it('lists live sessions newest first; ends one only for its user; ends all but one', async () => {
    const [ada, bob] = [await insertUser(), await insertUser()];
    const store = new PostgresSessionStore(db);
    const first = await startSession(ada);
    clock.advance(1000);
    const second = await startSession(ada, { ip: '198.51.100.2', userAgent: 'Safari/18' });
    clock.advance(1000);
    const third = await startSession(ada);
    const theirs = await startSession(bob);
    const list = await run(() => store.listLive(projectId, ada, clock.now(), 100));
    expect(list.map((s) => s.id)).toEqual([third, second, first]);
    expect(list[1]).toMatchObject({ ip: '198.51.100.2', userAgent: 'Safari/18', provider: 'email', revokedAt: null });

    expect(await run(() => store.revoke(projectId, ada, theirs, clock.now()))).toBe(false);
    expect(await run(() => store.revoke(projectId, ada, first, clock.now()))).toBe(true);
    expect(await run(() => store.revoke(projectId, ada, first, clock.now()))).toBe(true); // already ended: still theirs
    expect(await run(() => store.revokeAllBut(projectId, ada, third, clock.now()))).toBe(1);
    expect((await run(() => store.listLive(projectId, ada, clock.now(), 100))).map((s) => s.id)).toEqual([third]);
    // Every refresh token of the ended sessions is revoked with them.
    const tokens = await run(() =>
      db.query<{ family_id: string; revoked: boolean }>('select family_id, revoked_at is not null as revoked from refresh_tokens where user_id = ?', [ada]),
    );
    expect(Object.fromEntries(tokens.map((r) => [r.family_id, r.revoked]))).toEqual({ [first]: true, [second]: true, [third]: false });
    expect((await run(() => store.listLive(projectId, bob, clock.now(), 100))).map((s) => s.id)).toEqual([theirs]);
    // An expired session is not listed.
    expect(await run(() => store.listLive(projectId, bob, new Date(clock.now().getTime() + 15 * DAY), 100))).toEqual([]);
  });
});

describe('the revoked-session set', () => {
  /** A process: its own listener, its own set. */
  async function aProcess(options: { enabled?: boolean; start?: boolean } = {}) {
    const bus = new InvalidationBus(database.url, logger);
    const set = new RevokedSessionSet(bus, new PostgresSessionStore(db), clock, logger, { windowMs: 16 * 60_000, enabled: options.enabled ?? true });
    if (options.start ?? true) await bus.start();
    return {
      bus,
      set,
      stop: async () => {
        set.stop();
        await bus.stop();
      },
    };
  }
  const ask = (set: RevokedSessionSet, id: string) => run(async () => set.isRevoked(id));

  it('answers from memory once loaded, learns of sessions ended anywhere through NOTIFY, and asks the database while it cannot', async () => {
    const user = await insertUser();
    const [before, after, live] = [await startSession(user), await startSession(user), await startSession(user)];
    const store = new PostgresSessionStore(db);
    await run(() => store.revoke(projectId, user, before, clock.now()));

    const p = await aProcess({ start: false });
    try {
      // Not listening yet: every answer comes from the database.
      expect(p.set.current).toBe(false);
      expect(p.set.isRevoked(before)).toBeInstanceOf(Promise);
      expect(await ask(p.set, before)).toBe(true);
      expect(await ask(p.set, live)).toBe(false);

      await p.bus.start();
      await expect.poll(() => p.set.current).toBe(true); // loaded: the session ended before it started is in
      expect(p.set.isRevoked(before)).toBe(true);
      expect(p.set.isRevoked(live)).toBe(false);

      // Ended by another process (another pool): heard through NOTIFY.
      const other = await Database.open({ url: database.url });
      try {
        await other.withContext(() => new PostgresSessionStore(other).revoke(projectId, user, after, clock.now()));
      } finally {
        await other.close();
      }
      await p.bus.sync();
      expect(p.set.isRevoked(after)).toBe(true);
      expect(p.set.isRevoked(live)).toBe(false);

      // The listener is gone: nothing is answered from memory, the database is asked.
      await p.bus.stop();
      expect(p.set.current).toBe(false);
      expect(await ask(p.set, after)).toBe(true);
      expect(await ask(p.set, live)).toBe(false);
    } finally {
      await p.stop();
    }
  });

  it('forgets sessions ended longer ago than the longest access-token lifetime (their tokens have expired)', async () => {
    const user = await insertUser();
    const [old, recent] = [await startSession(user), await startSession(user)];
    const p = await aProcess();
    try {
      await expect.poll(() => p.set.current).toBe(true);
      const store = new PostgresSessionStore(db);
      await run(() => store.revoke(projectId, user, old, clock.now()));
      await p.bus.sync();
      expect(p.set.isRevoked(old)).toBe(true);
      const size = p.set.size;
      clock.advance(17 * 60_000);
      await run(() => store.revoke(projectId, user, recent, clock.now()));
      await p.bus.sync();
      expect(p.set.isRevoked(old)).toBe(false);
      expect(p.set.isRevoked(recent)).toBe(true);
      expect(p.set.size).toBeLessThan(size + 1);
    } finally {
      await p.stop();
    }
  });

  it('with caching off (CACHE_TTL_SECONDS=0) it always asks the database', async () => {
    const user = await insertUser();
    const ended = await startSession(user);
    await run(() => new PostgresSessionStore(db).revoke(projectId, user, ended, clock.now()));
    const p = await aProcess({ enabled: false });
    try {
      expect(p.set.current).toBe(false);
      expect(await ask(p.set, ended)).toBe(true);
    } finally {
      await p.stop();
    }
  });
});
