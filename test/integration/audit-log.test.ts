import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntry } from '../../application/audit/audit-log';
import { fakeLogger } from '../../application/testing/fakes';
import type { AuditAction, AuditEntry } from '../../domain/audit';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresAuditLog } from '../../infrastructure/persistence/postgres-audit-log';
import { PostgresKnownDeviceStore } from '../../infrastructure/persistence/postgres-known-device.store';
import { createTestDatabase, type TestDatabase } from '../support/database';

let database: TestDatabase;
let db: Database;
const logger = fakeLogger();

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url, poolMax: 4 });
  await db.migrate();
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const origin = { ip: '203.0.113.7', userAgent: 'curl/8.5.0', requestId: 'req-9' };
const entry = (projectId: string, action: AuditAction, at: Date, userId: string | null = null): AuditEntry =>
  auditEntry(at, projectId, action, {
    actor: { kind: 'user', id: userId },
    origin,
    details: { provider: 'email' },
    reason: action.endsWith('.failed') ? 'some_reason' : null,
  });
const count = async (projectId: string) =>
  Number((await db.withContext(() => db.query<{ n: string }>('select count(*) as n from audit_log where project_id = ?', [projectId])))[0]!.n);

describe('the PostgreSQL audit log', () => {
  it('buffers entries and writes them after the interval, or at once when a batch is full', async () => {
    const projectId = randomUUID();
    const log = new PostgresAuditLog(db, logger, { flushIntervalMs: 60_000, batchSize: 5 });
    const at = new Date('2030-01-01T00:00:00.000Z');
    for (let i = 0; i < 4; i++) log.record(entry(projectId, 'user.sign_in', at));
    expect(await count(projectId)).toBe(0);
    log.record(entry(projectId, 'user.sign_in', at));
    await log.flush(); // waits for the write the full batch started
    expect(await count(projectId)).toBe(5);
    log.record(entry(projectId, 'user.sign_in', at));
    await log.close();
    expect(await count(projectId)).toBe(6);
  });

  it('writes on its own connection: an entry recorded inside a transaction that rolls back is kept', async () => {
    const projectId = randomUUID();
    const log = new PostgresAuditLog(db, logger, { flushIntervalMs: 10, batchSize: 1 });
    await db
      .withContext(() =>
        db.transaction(async () => {
          log.record(entry(projectId, 'user.sign_in.failed', new Date()));
          await new Promise((r) => setTimeout(r, 50));
          throw new Error('rolled back');
        }),
      )
      .catch(() => undefined);
    await log.close();
    expect(await count(projectId)).toBe(1);
  });

  it('reads newest first, filters by user, dotted action prefix, outcome and time, and pages after an entry', async () => {
    const projectId = randomUUID();
    const other = randomUUID();
    const user = randomUUID();
    const log = new PostgresAuditLog(db, logger);
    const t0 = Date.parse('2030-01-01T00:00:00.000Z');
    const actions: AuditAction[] = ['user.sign_up', 'user.sign_in', 'user.sign_in.failed', 'user.identity.linked', 'user.sign_in', 'mfa.challenge.issued'];
    actions.forEach((a, i) => {
      log.record(entry(projectId, a, new Date(t0 + i * 1000), i % 2 === 0 ? user : null));
    });
    log.record(entry(other, 'user.sign_in', new Date(t0)));
    // Two entries of one instant keep their order of recording.
    log.record(entry(projectId, 'token.refresh', new Date(t0 + 10_000)));
    log.record(entry(projectId, 'token.refresh.failed', new Date(t0 + 10_000)));
    await log.close();

    const list = (q: Partial<Parameters<PostgresAuditLog['list']>[0]> = {}) => db.withContext(() => log.list({ projectId, limit: 100, ...q }));
    expect((await list()).map((e) => e.action)).toEqual([
      'token.refresh.failed',
      'token.refresh',
      'mfa.challenge.issued',
      'user.sign_in',
      'user.identity.linked',
      'user.sign_in.failed',
      'user.sign_in',
      'user.sign_up',
    ]);
    // A prefix ends at a dot: user.sign_in is not user.sign_inx, and the underscore is no wildcard.
    expect((await list({ action: 'user.sign_in' })).map((e) => e.action)).toEqual(['user.sign_in', 'user.sign_in.failed', 'user.sign_in']);
    expect((await list({ action: 'user.sign' })).map((e) => e.action)).toEqual([]);
    expect((await list({ action: 'user' })).length).toBe(5);
    expect((await list({ action: 'token.refresh' })).length).toBe(2);
    expect((await list({ userId: user })).map((e) => e.action)).toEqual(['user.sign_in', 'user.sign_in.failed', 'user.sign_up']);
    expect((await list({ since: new Date(t0 + 1000), until: new Date(t0 + 3000) })).map((e) => e.action)).toEqual(['user.sign_in.failed', 'user.sign_in']);
    const [first, second] = await list({ limit: 2 });
    const rest = await list({ after: { at: second!.at, id: second!.id } });
    expect(rest.map((e) => e.action)).toEqual([
      'mfa.challenge.issued',
      'user.sign_in',
      'user.identity.linked',
      'user.sign_in.failed',
      'user.sign_in',
      'user.sign_up',
    ]);
    expect(first).toMatchObject({
      ip: '203.0.113.7',
      userAgent: 'curl/8.5.0',
      requestId: 'req-9',
      outcome: 'failure',
      reason: 'some_reason',
      details: { provider: 'email' },
      target: null,
    });
    expect((await list({ outcome: 'failure' })).map((e) => e.action)).toEqual(['token.refresh.failed', 'user.sign_in.failed']);
  });

  it('prunes entries older than a time, a batch at a time', async () => {
    const projectId = randomUUID();
    const log = new PostgresAuditLog(db, logger);
    // Older than anything the other tests write.
    for (let i = 0; i < 7; i++) log.record(entry(projectId, 'user.sign_in', new Date(Date.parse('1990-01-01T00:00:00.000Z') + i)));
    log.record(entry(projectId, 'user.sign_in', new Date('2000-01-01T00:00:00.000Z')));
    await log.close();
    const pruned = (batch: number) => db.withContext(() => log.pruneBefore(new Date('1995-01-01T00:00:00.000Z'), batch));
    expect(await pruned(5)).toBe(5);
    expect(await pruned(5)).toBe(2);
    expect(await count(projectId)).toBe(1);
  });

  it('an entry PostgreSQL refuses is dropped (and logged) without holding back its batch; NUL characters are removed', async () => {
    const projectId = randomUUID();
    const quiet = fakeLogger();
    const log = new PostgresAuditLog(db, quiet, { flushIntervalMs: 60_000 });
    log.record(entry(projectId, 'user.sign_in', new Date()));
    log.record({ ...entry(projectId, 'user.sign_up', new Date()), actor: { kind: 'robot' as never, id: null } });
    log.record({ ...entry(projectId, 'user.sign_in.failed', new Date()), userAgent: 'a\u0000b', details: { note: 'c\u0000d' } });
    await log.close();
    const rows = await db.withContext(() => log.list({ projectId, limit: 10 }));
    expect(rows.map((r) => r.action).sort()).toEqual(['user.sign_in', 'user.sign_in.failed']);
    expect(rows.find((r) => r.action === 'user.sign_in.failed')).toMatchObject({ userAgent: 'ab', details: { note: 'cd' } });
    expect(quiet.lines).toEqual([expect.objectContaining({ level: 'error', obj: expect.objectContaining({ actions: ['user.sign_up'] }) })]);
  });

  it('keeps entries while the database refuses them, retries, and says how many were lost when closed still failing', async () => {
    const projectId = randomUUID();
    const broken = await Database.open({ url: database.url.replace(/\/[^/]+$/, '/tollgate_test_missing_db'), poolMax: 1 });
    const quiet = fakeLogger();
    const failing = new PostgresAuditLog(broken, quiet, { flushIntervalMs: 10 });
    failing.record(entry(projectId, 'user.sign_in', new Date()));
    await failing.flush();
    expect(quiet.lines.some((l) => l.level === 'error' && l.msg?.includes('retrying'))).toBe(true);
    await failing.close();
    expect(quiet.lines.at(-1)).toMatchObject({ level: 'error', obj: { lost: 1 } });
    await broken.close();
  });
});

describe('known devices', () => {
  it('tells the first device, a known one and a new one apart in one statement', async () => {
    const devices = new PostgresKnownDeviceStore(db);
    const projectId = randomUUID();
    const userId = randomUUID();
    await db.withContext(async () => {
      await db.query(
        'insert into projects (id, name, active, signing_secret_enc, settings, provider_credentials, created_at, updated_at) ' +
          "values (?, 'p', true, 'x', '{}', '{}', now(), now())",
        [projectId],
      );
      await db.query(
        `insert into users (id, project_id, provider, email_verified, disabled, created_at, updated_at) values (?, ?, 'email', false, false, now(), now())`,
        [userId, projectId],
      );
      const at = new Date('2030-01-01T00:00:00.000Z');
      expect(await devices.remember(projectId, userId, 'fp-a', at)).toBe('first');
      expect(await devices.remember(projectId, userId, 'fp-a', new Date(at.getTime() + 1000))).toBe('known');
      expect(await devices.remember(projectId, userId, 'fp-b', at)).toBe('new');
      expect(await devices.remember(projectId, userId, 'fp-b', at)).toBe('known');
      const rows = await db.query<{ fingerprint: string; last_seen_at: string | Date }>(
        'select fingerprint, last_seen_at from known_devices where user_id = ? order by fingerprint',
        [userId],
      );
      expect(rows.map((r) => [r.fingerprint, new Date(r.last_seen_at).toISOString()])).toEqual([
        ['fp-a', '2030-01-01T00:00:01.000Z'],
        ['fp-b', '2030-01-01T00:00:00.000Z'],
      ]);
    });
  });
});
