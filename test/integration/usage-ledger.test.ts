import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrackedGroup, UsageEventRecord } from '../../application/usage/usage.store';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresMeterStore, PostgresUsageLedger } from '../../infrastructure/persistence/postgres-usage.store';
import { createTestDatabase, type TestDatabase } from '../support/database';

/**
 * The usage ledger's one-statement write of a common batch (recordQuiet) on a migrated database:
 * it writes the events and counters only when every event is new and every counter stays within
 * its included amount without crossing a usage threshold; otherwise it writes nothing at all and
 * says so, and the transactional path takes the batch. Also: removing a meter removes its events
 * and counters (they hold no foreign key).
 */

let database: TestDatabase;
let db: Database;
let ledger: PostgresUsageLedger;
let meters: PostgresMeterStore;
let project: string;
let meterId: string;

const T0 = new Date('2026-12-01T10:00:00.000Z');
const WINDOW = { start: new Date('2026-12-01T00:00:00.000Z'), end: new Date('2027-01-01T00:00:00.000Z') };

const inContext = <T>(fn: () => Promise<T>): Promise<T> => db.withContext(fn);
const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => inContext(() => db.query<T>(text, params));

async function insertUser(): Promise<string> {
  const id = randomUUID();
  await sql(`insert into users (id, project_id, provider, created_at, updated_at) values (?, ?, 'email', ?, ?)`, [id, project, T0, T0]);
  return id;
}

const event = (subjectId: string, value: number, eventId = randomUUID()): UsageEventRecord => ({
  eventId,
  subject: { kind: 'user', id: subjectId },
  meterId,
  value,
  occurredAt: T0,
  windowStart: WINDOW.start,
  allocation: null,
  released: 0,
});

/** One group per subject, summing its events, with the included amount given. */
const groups = (events: readonly UsageEventRecord[], included: number): Array<TrackedGroup & { included: number }> => {
  const by = new Map<string, TrackedGroup & { included: number }>();
  for (const e of events) {
    const g = by.get(e.subject.id) ?? { subject: e.subject, meterId, window: WINDOW, amount: 0, max: false, included };
    g.amount += e.value;
    by.set(e.subject.id, g);
  }
  return [...by.values()];
};

const record = (events: readonly UsageEventRecord[], included: number) => inContext(() => ledger.recordQuiet(project, events, groups(events, included), T0));
const used = async (subjectId: string) =>
  Number((await sql<{ used: string }>('select used from usage_counters where subject_id = ? and meter_id = ?', [subjectId, meterId]))[0]?.used ?? 0);
const eventCount = async (subjectId: string) =>
  Number((await sql<{ n: string }>('select count(*) as n from usage_events where subject_id = ? and meter_id = ?', [subjectId, meterId]))[0]!.n);

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url, poolMax: 4 });
  await db.migrate();
  project = randomUUID();
  await sql(`insert into projects (id, name, active, signing_secret_enc, settings, created_at, updated_at) values (?, 'Usage', true, 'x', '{}'::jsonb, ?, ?)`, [
    project,
    T0,
    T0,
  ]);
  ledger = new PostgresUsageLedger(db);
  meters = new PostgresMeterStore(db);
  meterId = randomUUID();
  await inContext(() => meters.insert({ id: meterId, projectId: project, key: 'calls', name: 'Calls', unit: 'calls', aggregation: 'sum', createdAt: T0 }));
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('recordQuiet', () => {
  it('records new events within the included amount in one statement', async () => {
    const [a, b] = [await insertUser(), await insertUser()];
    expect(await record([event(a, 10), event(a, 20), event(b, 5)], 100)).toBe(true);
    expect([await used(a), await used(b), await eventCount(a), await eventCount(b)]).toEqual([30, 5, 2, 1]);
    // The counter exists now: the next quiet batch raises it.
    expect(await record([event(a, 49)], 100)).toBe(true);
    expect(await used(a)).toBe(79);
  });

  it('writes nothing when a counter would reach a usage threshold, pass the included amount, or has nothing included', async () => {
    const a = await insertUser();
    expect(await record([event(a, 79)], 100)).toBe(true);
    // 80% of 100: the threshold must be announced, which only the transactional path does.
    expect(await record([event(a, 1), event(a, 0)], 100)).toBe(false);
    expect([await used(a), await eventCount(a)]).toEqual([79, 1]);
    // Once 80% was announced (the window's mask), usage up to the included amount stays quiet; 100% does not.
    await sql('update usage_counters set notified = 1 where subject_id = ?', [a]);
    expect(await record([event(a, 20)], 100)).toBe(true);
    expect(await record([event(a, 1)], 100)).toBe(false);
    expect(await used(a)).toBe(99);
    const b = await insertUser();
    expect(await record([event(b, 101)], 100)).toBe(false);
    expect(await record([event(b, 1)], 0)).toBe(false);
    expect([await used(b), await eventCount(b)]).toEqual([0, 0]);
  });

  it('writes nothing of a batch holding an id already recorded, nor of one that is quiet for one subject and not for another', async () => {
    const [a, b] = [await insertUser(), await insertUser()];
    const first = event(a, 1);
    expect(await record([first], 100)).toBe(true);
    expect(await record([event(a, 1), first], 100)).toBe(false);
    expect([await used(a), await eventCount(a)]).toEqual([1, 1]);
    expect(await record([event(a, 1), event(b, 100)], 100)).toBe(false);
    expect([await used(a), await used(b), await eventCount(a), await eventCount(b)]).toEqual([1, 0, 1, 0]);
  });

  it('leaves a caller’s transaction to the transactional path', async () => {
    const a = await insertUser();
    expect(await inContext(() => db.transaction(() => ledger.recordQuiet(project, [event(a, 1)], groups([event(a, 1)], 100), T0)))).toBe(false);
    expect(await eventCount(a)).toBe(0);
  });
});

describe('consumeQuiet', () => {
  const starts = { day: WINDOW.start, month: WINDOW.start };
  const consume = (subjectId: string, value: number, termsVersion: string, included = 100, eventId = randomUUID()) =>
    inContext(() =>
      ledger.consumeQuiet({
        projectId: project,
        subject: { kind: 'user', id: subjectId },
        meterId,
        window: WINDOW,
        included,
        termsVersion,
        record: { ...event(subjectId, value, eventId), allocation: { amount: value, fromIncluded: value, fromCredits: [], overage: 0 } },
        createdAt: T0,
      }),
    );
  const versionOf = async (subjectId: string) =>
    (await inContext(() => ledger.consumption(project, { kind: 'user', id: subjectId }, 'calls', starts, T0))).termsVersion;

  it('raises the counter and records the event in one statement while the terms are as read and the counter stays quiet', async () => {
    const a = await insertUser();
    const version = await versionOf(a);
    expect(version).toMatch(/^[0-9a-f]{32}$/);
    expect(await consume(a, 30, version)).toEqual({ used: 30, overage: 0, credits: 0 });
    expect(await consume(a, 49, version)).toEqual({ used: 79, overage: 0, credits: 0 });
    expect([await used(a), await eventCount(a)]).toEqual([79, 2]);
    // The credits of the meter come with the answer.
    await sql(
      `insert into usage_credit_grants (id, project_id, subject_kind, subject_id, meter_id, amount, remaining, reason, source, created_at)
       values (?, ?, 'user', ?, ?, 50, 40, 'test', 'operator', ?)`,
      [randomUUID(), project, a, meterId, T0],
    );
    expect(await consume(a, 0, version)).toEqual({ used: 79, overage: 0, credits: 40 });
  });

  it('writes nothing when the counter would reach a threshold or pass the included amount', async () => {
    const a = await insertUser();
    const version = await versionOf(a);
    expect(await consume(a, 79, version)).not.toBeNull();
    expect(await consume(a, 1, version)).toBeNull();
    await sql('update usage_counters set notified = 1 where subject_id = ?', [a]);
    expect(await consume(a, 21, version)).toBeNull();
    expect(await consume(a, 20, version)).toEqual({ used: 99, overage: 0, credits: 0 });
    expect([await used(a), await eventCount(a)]).toEqual([99, 2]);
  });

  it('writes nothing when the terms changed since they were read, the subject is not the project’s, or the id is recorded', async () => {
    const a = await insertUser();
    const version = await versionOf(a);
    expect(await consume(a, 1, 'f'.repeat(32))).toBeNull();
    const stranger = randomUUID();
    expect(await consume(stranger, 1, await versionOf(stranger))).toBeNull();
    const id = randomUUID();
    expect(await consume(a, 1, version, 100, id)).not.toBeNull();
    expect(await consume(a, 1, version, 100, id)).toBeNull();
    expect([await used(a), await eventCount(a)]).toEqual([1, 1]);
  });
});

describe('a meter removed', () => {
  it('takes its events and counters with it', async () => {
    const a = await insertUser();
    expect(await record([event(a, 3)], 100)).toBe(true);
    await sql('delete from usage_meters where id = ?', [meterId]);
    expect([await used(a), await eventCount(a)]).toEqual([0, 0]);
    expect(Number((await sql<{ n: string }>('select count(*) as n from usage_events where meter_id = ?', [meterId]))[0]!.n)).toBe(0);
  });
});
