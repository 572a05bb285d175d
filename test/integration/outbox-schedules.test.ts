import { randomBytes } from 'node:crypto';
import PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleTopic } from '../../application/ports/outbox';
import type { ScheduledJob } from '../../application/ports/scheduled-job';
import { AesGcmSecretBox } from '../../infrastructure/crypto/secret-box';
import { NodeTokenCrypto } from '../../infrastructure/crypto/node-token-crypto';
import { PgBossOutbox } from '../../infrastructure/jobs/outbox';
import { PgBossScheduler, scheduleQueueName } from '../../infrastructure/jobs/scheduler';
import { Database } from '../../infrastructure/persistence/database';
import { TestClock } from '../support/clock';
import { createTestDatabase, cutDatabase, type TestDatabase } from '../support/database';
import { T, TEST_QUEUES, TEST_TOPICS, type TestMessage } from './fixtures/outbox-topics';

/**
 * Scheduled jobs on pg-boss queues, evaluated by each worker process (each its own pg-boss and
 * connection pool) on one database: a tick runs once in all of them together.
 */

const box = new AesGcmSecretBox(randomBytes(32));
const crypto = new NodeTokenCrypto();
const clock = new TestClock(Date.now());
const warnings: Array<{ obj: object; msg?: string }> = [];
const logger = { info() {}, warn: (obj: object, msg?: string) => void warnings.push({ obj, msg }), error() {}, debug() {} };

let database: TestDatabase;
const opened: Array<{ db: Database; boss: PgBoss }> = [];

async function startProcess(jobs: ScheduledJob[], options: { withOutbox?: (outbox: PgBossOutbox) => void } = {}) {
  // Connections the outage test ends are expected: not printed.
  const db = await Database.open({ url: database.url, poolMax: 3, onWarning: () => undefined });
  const boss = new PgBoss({
    connectionString: database.url,
    schema: 'pgboss',
    max: 3,
    supervise: true,
    // As Tollgate runs it: pg-boss's own cron off.
    schedule: false,
  });
  boss.on('error', () => undefined);
  opened.push({ db, boss });
  await boss.start();
  // Evaluate the schedules twice a second so the test need not wait 10 s.
  const scheduler = new PgBossScheduler({ boss, db, clock, logger, pollingIntervalSeconds: 0.5, evaluateEveryMs: 500 });
  let outbox: PgBossOutbox | undefined;
  if (options.withOutbox) {
    outbox = new PgBossOutbox({ db, boss, box, crypto, clock, logger, topics: TEST_TOPICS, queues: TEST_QUEUES });
    options.withOutbox(outbox);
    scheduler.add(outbox.sweepJob());
    await outbox.startWorkers();
  }
  for (const job of jobs) scheduler.add(job);
  await scheduler.start();
  return { db, boss, scheduler, outbox };
}

async function waitFor<R>(check: () => Promise<R | undefined | false>, timeoutMs: number, what: string): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Cron ticks are calendar minutes: start a check early in one, so that it ends in the same minute. */
async function earlyInAMinute(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second > 35) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

const query = async <R>(sql: string, params: unknown[] = []) => {
  const { db } = opened[0]!;
  return db.withContext(() => db.query<R>(sql, params));
};

beforeAll(async () => {
  database = await createTestDatabase();
  const db = await Database.open({ url: database.url });
  await db.migrate();
  await db.close();
});

afterAll(async () => {
  for (const { boss, db } of opened) {
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => undefined);
    await db.close();
  }
  await database?.drop();
});

describe('PgBossScheduler', () => {
  it('runs a scheduled job once per tick with two worker processes on one database; a failed run is not retried', async () => {
    const runs: Array<{ process: string; firedAt: Date }> = [];
    let failingRuns = 0;
    const jobs = (process: string): ScheduledJob[] => [
      {
        name: 'test.tick',
        cron: '* * * * *',
        run: async ({ firedAt }) => {
          runs.push({ process, firedAt });
        },
      },
      {
        name: 'test.failing',
        cron: '* * * * *',
        run: async () => {
          failingRuns++;
          throw new Error('reconciliation endpoint unavailable');
        },
      },
    ];
    await earlyInAMinute();
    await Promise.all([startProcess(jobs('a')), startProcess(jobs('b'))]);

    await waitFor(async () => runs.length > 0 && failingRuns > 0, 15_000, 'the first run');
    // Both processes evaluate the schedules twice a second: give them several more chances.
    await new Promise((r) => setTimeout(r, 4_000));
    expect(runs).toHaveLength(1);
    expect(runs[0]!.firedAt).toEqual(clock.now());
    expect(failingRuns).toBe(1);

    const tickJobs = await query<{ state: string }>(`select state::text as state from pgboss.job where name = ?`, [scheduleQueueName('test.tick')]);
    expect(tickJobs).toEqual([{ state: 'completed' }]);
    const failed = await query<{ state: string; retry_count: number }>(`select state::text as state, retry_count from pgboss.job where name = ?`, [
      scheduleQueueName('test.failing'),
    ]);
    expect(failed).toEqual([{ state: 'failed', retry_count: 0 }]);
    expect(warnings).toContainEqual({ obj: { job: 'test.failing', error: 'reconciliation endpoint unavailable' }, msg: 'scheduled job failed' });
    // Nothing is left for pg-boss's cron to evaluate.
    expect(await query('select name from pgboss.schedule')).toEqual([]);
  }, 60_000);

  it("removes a schedule stored for pg-boss's cron by an earlier version, and sends the job itself", async () => {
    const { boss } = opened[0]!;
    const queue = scheduleQueueName('test.upgraded');
    await boss.createQueue(queue, { name: queue, policy: 'short' });
    await boss.schedule(queue, '* * * * *', {}, { tz: 'UTC' });
    expect(await query('select name from pgboss.schedule')).toEqual([{ name: queue }]);
    let runs = 0;
    await startProcess([{ name: 'test.upgraded', cron: '* * * * *', run: async () => void runs++ }]);
    expect(await query('select name from pgboss.schedule')).toEqual([]);
    await waitFor(async () => runs > 0, 15_000, 'a run');
    const [job] = await query<{ singleton_key: string; retry_limit: number }>('select singleton_key, retry_limit from pgboss.job where name = ?', [queue]);
    expect(job).toEqual({ singleton_key: 'tick', retry_limit: 0 });
  }, 30_000);

  it('refuses a cron expression it cannot evaluate when the job is declared', () => {
    const scheduler = new PgBossScheduler({ boss: opened[0]!.boss, db: opened[0]!.db, clock, logger });
    expect(() => scheduler.add({ name: 'bad.cron', cron: '@hourly', run: async () => undefined })).toThrow('must have 5 fields');
  });

  it('refuses a malformed or duplicate declaration', async () => {
    const scheduler = new PgBossScheduler({ boss: opened[0]!.boss, db: opened[0]!.db, clock, logger });
    const job = { name: 'ok.name', cron: '* * * * *', run: async () => undefined };
    scheduler.add(job);
    expect(() => scheduler.add(job)).toThrow('declared twice');
    expect(() => scheduler.add({ ...job, name: 'no spaces allowed' })).toThrow('invalid scheduled job name');
  });

  it('the outbox sweep, as a scheduled job, hands over a message whose hand-off was lost', async () => {
    // Recorded by a process whose queue was unreachable: committed, never handed over.
    const db = await Database.open({ url: database.url, poolMax: 2 });
    const unstarted = new PgBoss({ connectionString: database.url, schema: 'pgboss', supervise: false, schedule: false });
    const lost = new PgBossOutbox({ db, boss: unstarted, box, crypto, clock, logger, topics: TEST_TOPICS, queues: TEST_QUEUES });
    let id: string;
    try {
      id = await db.withContext(() => db.transaction(() => lost.enqueue(T.mail, { to: 'lost@example.com' })));
    } finally {
      await db.close();
    }
    // Old enough, by the clock, to count as lost.
    clock.advance(6_000);

    const received: Array<{ id: string; payload: TestMessage }> = [];
    await startProcess([], {
      withOutbox: (outbox) =>
        outbox.register(
          handleTopic(T.mail, async (payload, { messageId }) => {
            received.push({ id: messageId, payload });
          }),
        ),
    });
    // Nobody calls sweep(): the cron tick does.
    await waitFor(async () => received.length > 0, 20_000, 'the sweep to hand the message over');
    expect(received).toEqual([{ id, payload: { to: 'lost@example.com' } }]);
    const [row] = await query<{ status: string }>('select status from outbox_messages where id = ?', [id]);
    expect(row).toEqual({ status: 'delivered' });
  }, 60_000);

  it("goes on evaluating through a database outage: the next minute's job runs once the database is back", async () => {
    // The outage (2 s) must end inside this minute, before the job is due.
    if (new Date().getUTCSeconds() > 50) await new Promise((r) => setTimeout(r, (61 - new Date().getUTCSeconds()) * 1000));
    const due = (new Date().getUTCMinutes() + 1) % 60;
    const runs: Date[] = [];
    await startProcess([{ name: 'test.after-outage', cron: `${due} * * * *`, run: async () => void runs.push(new Date()) }]);
    // Every connection to the database ended, and none accepted for 2 s, while the schedules are evaluated twice a second.
    expect(await cutDatabase(database.url, 2_000)).toBeGreaterThan(0);
    expect(runs).toEqual([]);
    await waitFor(async () => runs.length > 0, 75_000, 'the run in the minute after the outage');
    expect(runs.map((at) => at.getUTCMinutes())).toEqual([due]);
  }, 100_000);
});
