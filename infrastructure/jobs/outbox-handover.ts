import type { Topic } from '../../application/ports/outbox';
import { EXPIRY_GRACE_SECONDS, JOB_RERUNS, jobIdFor, pgBossQueueName, toDate, type Due, type JobData, type PgBossOutboxDeps } from './outbox-model';
import type { OutboxTopics } from './outbox-topics';
import { OUTBOX_WAKE_CHANNEL } from './wakeups';

type HandOverDeps = Pick<PgBossOutboxDeps, 'db' | 'boss' | 'clock' | 'logger' | 'bossSchema'>;

/**
 * Hands messages over to pg-boss: each scheduled attempt of a message is one job, whose id is
 * derived from the message id and the attempt's generation, so handing one over twice never makes
 * two jobs. A job due now is announced on `tollgate_outbox` (every listening process's workers
 * fetch at once) and to this process's workers through `dueNow`.
 */
export class OutboxHandOver {
  constructor(
    private readonly deps: HandOverDeps,
    private readonly topics: OutboxTopics,
    /** A job of this queue is due now: this process's workers fetch unless a listener will wake them. */
    private readonly dueNow: (queue: string) => void,
  ) {}

  /**
   * Hands the message's current attempt to pg-boss, to start when it is due. Never throws: a
   * failed hand-off is logged and left to the sweep. Returns whether the message now has a job.
   */
  async dispatch(message: Due): Promise<boolean> {
    const { db, boss, clock, logger } = this.deps;
    try {
      const definition = this.topics.definition(message.topic);
      const queue = this.topics.queue(definition.topic.queue);
      const pgQueue = await this.topics.ensureQueue(queue.name);
      const jobId = jobIdFor(message.id, message.generation);
      const timeoutSeconds = this.topics.timeoutSeconds(definition);
      const data: JobData = { id: message.id, generation: message.generation };
      // Seconds from now on the database's clock, which pg-boss uses.
      const startAfter = Math.max(0, Math.ceil((toDate(message.next_attempt_at).getTime() - clock.now().getTime()) / 1000));
      const sent = await boss.send(pgQueue, data, {
        id: jobId,
        startAfter,
        retryLimit: JOB_RERUNS,
        retryDelay: 1,
        expireInSeconds: timeoutSeconds + EXPIRY_GRACE_SECONDS,
      });
      if (!sent) {
        // The job exists already: leave a live one alone, revive a failed one, replace a finished one.
        const job = await boss.getJobById(pgQueue, jobId);
        if (!job) throw new Error('the job queue accepted no job for the message');
        if (job.state === 'failed') await boss.retry(pgQueue, jobId);
        if (job.state === 'completed' || job.state === 'cancelled') {
          const [next] = await db.withContext(() =>
            db.query<Due>(
              `update outbox_messages set generation = generation + 1, dispatched_at = null
                where id = ? and generation = ? and status = 'pending' returning id, topic, generation, next_attempt_at`,
              [message.id, message.generation],
            ),
          );
          return next ? this.dispatch(next) : false;
        }
      }
      const handedOver = [clock.now(), message.id, message.generation];
      if (startAfter > 0) {
        await db.withContext(() => db.query(`update outbox_messages set dispatched_at = ? where id = ? and generation = ? and status = 'pending'`, handedOver));
        return true;
      }
      // Due now: the same statement tells the workers of every process listening (the job is in).
      await db.withContext(() =>
        db.query(
          `with handed as (update outbox_messages set dispatched_at = ? where id = ? and generation = ? and status = 'pending')
           select pg_notify(?, ?)`,
          [...handedOver, OUTBOX_WAKE_CHANNEL, queue.name],
          { prepare: 'outbox_handed_over_now' },
        ),
      );
      this.dueNow(queue.name);
      return true;
    } catch (e) {
      logger.warn({ err: e, outboxId: message.id }, 'outbox dispatch failed; the sweep hands the message over later');
      return false;
    }
  }

  /** Moves the job of a message's attempt, not yet started, to start now, and wakes the workers. */
  async startJobNow(message: { id: string; topic: string; generation: number }): Promise<boolean> {
    const definition = this.topics.find(message.topic);
    if (!definition) return false;
    const schema = this.deps.bossSchema ?? 'pgboss';
    const moved = await this.deps.db.query(
      `with moved as (
         update ${schema}.job set start_after = now()
          where name = ? and id = ? and state = 'created' and start_after > now() returning id
       )
       select id, pg_notify(?, ?) from moved`,
      [pgBossQueueName(definition.topic.queue), jobIdFor(message.id, message.generation), OUTBOX_WAKE_CHANNEL, definition.topic.queue],
    );
    if (moved.length) this.dueNow(definition.topic.queue);
    return moved.length > 0;
  }

  /**
   * Runs now the next attempt of the pending message of `topic` with this dedupe key, if it waits
   * for a later time; answers the time it was due, or null when no such message waits.
   */
  async runNow(topic: Topic<unknown>, dedupeKey: string): Promise<Date | null> {
    const { db, clock } = this.deps;
    const now = clock.now();
    return db.withContext(async () => {
      const [message] = await db.query<Due & { was_due: Date | string; dispatched: boolean }>(
        `update outbox_messages m set next_attempt_at = ?
           from (select id, next_attempt_at as was_due from outbox_messages
                  where topic = ? and dedupe_key = ? and status = 'pending' and next_attempt_at > ? for update) w
          where m.id = w.id
          returning m.id, m.topic, m.generation, m.next_attempt_at, w.was_due, m.dispatched_at is not null as dispatched`,
        [now, topic.name, dedupeKey, now],
      );
      if (!message) return null;
      // Its job waits for the old time (or its hand-off was lost: hand it over now).
      if (!message.dispatched || !(await this.startJobNow(message))) await this.dispatch(message);
      return toDate(message.was_due);
    });
  }
}
