import type { ScheduledJob } from '../../application/ports/scheduled-job';
import type { OutboxHandOver } from './outbox-handover';
import { SWEEP_BATCH, type Due, type PgBossOutboxDeps } from './outbox-model';

type MaintenanceDeps = Pick<PgBossOutboxDeps, 'db' | 'clock'>;

/** A message not handed to pg-boss this long after it was due was lost between commit and hand-off. */
const HANDOFF_GRACE_MS = 5_000;
/** A handed-over message still pending this long after it was due is checked against its job. */
const STUCK_AFTER_MS = 15 * 60_000;

/** The sweep as a scheduled job: every minute, once across all worker processes. */
export const OUTBOX_SWEEP_JOB_NAME = 'outbox.sweep';
export const OUTBOX_PURGE_JOB_NAME = 'outbox.purge';

/**
 * The outbox's upkeep, run as scheduled jobs: the sweep, which hands over again what was lost or
 * stuck and revives what its queue revives, and the purge of the delivery log past its retention.
 */
export class OutboxMaintenance {
  constructor(
    private readonly deps: MaintenanceDeps,
    private readonly handOver: OutboxHandOver,
  ) {}

  /** The sweep, as the scheduled job the composition root registers. */
  sweepJob(): ScheduledJob {
    return {
      name: OUTBOX_SWEEP_JOB_NAME,
      cron: '* * * * *',
      run: async () => {
        await this.sweep();
      },
    };
  }

  /** The retention of the delivery log as a scheduled job: once an hour, across all processes. */
  purgeJob(retentionDays: number): ScheduledJob {
    return {
      name: OUTBOX_PURGE_JOB_NAME,
      cron: '23 * * * *',
      run: async () => {
        await this.purge(retentionDays);
      },
    };
  }

  /**
   * Deletes what the delivery log no longer needs: messages delivered, or failed for good with no
   * revival planned, more than `retentionDays` ago by the clock, with their attempts (cascade).
   * Answers how many messages went.
   */
  async purge(retentionDays: number): Promise<number> {
    const { db, clock } = this.deps;
    const before = new Date(clock.now().getTime() - retentionDays * 86_400_000);
    const gone = await db.withContext(() =>
      db.query<{ id: string }>(
        `delete from outbox_messages
          where (status = 'delivered' and delivered_at < ?)
             or (status = 'failed' and revive_at is null and created_at < ?)
          returning id`,
        [before, before],
      ),
    );
    return gone.length;
  }

  /**
   * Re-dispatches, by the injected clock:
   * - messages due more than 5 s ago whose hand-off to pg-boss was lost (the process died between
   *   commit and send, or between a failed attempt and the job of the next one);
   * - messages handed over and due more than 15 minutes ago, still pending: a job still queued or
   *   running is left alone (checked again 15 minutes later), a failed one is retried, a finished
   *   one is replaced by a new job;
   * - messages whose retries ran out, once their queue's revival time has passed;
   * - messages handed over whose next attempt is due by the clock while their job still waits for a
   *   later time on the database's clock (`startDueAttempts`).
   * Returns how many messages it dispatched.
   */
  async sweep(): Promise<number> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const due = await db.withContext(async () => {
      const lost = await db.query<Due>(
        `select id, topic, generation, next_attempt_at from outbox_messages
          where status = 'pending' and dispatched_at is null and next_attempt_at < ?
          order by next_attempt_at limit ${SWEEP_BATCH}`,
        [new Date(now.getTime() - HANDOFF_GRACE_MS)],
      );
      const stuckBefore = new Date(now.getTime() - STUCK_AFTER_MS);
      const stuck = await db.query<Due>(
        `select id, topic, generation, next_attempt_at from outbox_messages
          where status = 'pending' and dispatched_at < ? and next_attempt_at < ?
          order by next_attempt_at limit ${SWEEP_BATCH}`,
        [stuckBefore, stuckBefore],
      );
      // A revived message no longer holds its dedupe key (a newer pending one may hold it).
      const revived = await db.query<Due>(
        `update outbox_messages set status = 'pending', revive_at = null, dedupe_key = null, generation = generation + 1,
                next_attempt_at = ?, dispatched_at = null
          where id in (select id from outbox_messages where status = 'failed' and revive_at <= ?
                        order by revive_at limit ${SWEEP_BATCH} for update skip locked)
          returning id, topic, generation, next_attempt_at`,
        [now, now],
      );
      return [...lost, ...stuck, ...revived];
    });
    let dispatched = 0;
    for (const message of due) if (await this.handOver.dispatch(message)) dispatched++;
    await this.startDueAttempts(now);
    return dispatched;
  }

  /**
   * Starts now the job of every message handed over whose next attempt is due by the injected
   * clock but still waits for a later time on the database's clock, which pg-boss uses: a clock
   * moved by a test, or the two clocks disagreeing. Only a job not yet started is moved, in one
   * statement, so no attempt runs twice. Answers how many jobs it moved.
   */
  async startDueAttempts(now: Date = this.deps.clock.now()): Promise<number> {
    const { db } = this.deps;
    return db.withContext(async () => {
      const waiting = await db.query<{ id: string; topic: string; generation: number }>(
        `select id, topic, generation from outbox_messages
          where status = 'pending' and dispatched_at is not null and next_attempt_at <= ?
          order by next_attempt_at limit ${SWEEP_BATCH}`,
        [now],
      );
      let started = 0;
      for (const message of waiting) if (await this.handOver.startJobNow(message)) started++;
      return started;
    });
  }
}
