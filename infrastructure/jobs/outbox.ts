import type {
  DeliveryAttempt,
  EnqueueOptions,
  MessageStatus,
  Outbox,
  OutboxLog,
  OutboxMessageSummary,
  OutboxRetryNow,
  Topic,
  TopicHandler,
} from '../../application/ports/outbox';
import type { ScheduledJob } from '../../application/ports/scheduled-job';
import { OutboxAttempts } from './outbox-attempts';
import { OutboxBatch } from './outbox-batch';
import { enqueueMessage } from './outbox-enqueue';
import { OutboxHandOver } from './outbox-handover';
import { OutboxDeliveryLog } from './outbox-log';
import { OutboxMaintenance } from './outbox-maintenance';
import type { PgBossOutboxDeps } from './outbox-model';
import { OutboxTopics } from './outbox-topics';
import { OutboxWorkers } from './outbox-workers';

export { OUTBOX_PURGE_JOB_NAME, OUTBOX_SWEEP_JOB_NAME } from './outbox-maintenance';
export { jobIdFor, pgBossQueueName, type PgBossOutboxDeps } from './outbox-model';

/**
 * The transactional outbox on pg-boss, as a typed job layer. Its parts, each in a file of its own:
 *
 * - `enqueue` (outbox-enqueue.ts) validates the payload against its topic's schema, writes the
 *   message (payload encrypted: it carries codes and links) in the caller's transaction and, after
 *   commit, hands it to its topic's pg-boss queue. Each queue has its own workers.
 * - The hand-over (outbox-handover.ts): each scheduled attempt of a message is one pg-boss job
 *   (`generation` 0, 1, ...), whose id is derived from the message id: handing one over twice never
 *   makes two jobs, and pg-boss gives a job to one worker. A failed attempt schedules the next one
 *   per the retry policy as a new job (`startAfter`), after recording it on the message row
 *   (`next_attempt_at`): both are durable, so the schedule survives restarts, and the sweep
 *   re-sends a job whose hand-off was lost.
 * - The workers (outbox-workers.ts) fetch batches, which outbox-batch.ts runs; every attempt is
 *   kept in `outbox_attempts` (number, status, start, end, error) by outbox-attempts.ts, and the
 *   message row keeps status, attempt count and last error; the payload is erased on delivery.
 * - Maintenance (outbox-maintenance.ts): the sweep and the purge, as scheduled jobs.
 * - The read-only delivery log (outbox-log.ts).
 * - Times come from the injected clock. pg-boss's own delays use the database clock, so they are
 *   passed as seconds from now, never as times.
 *
 * Delivery is at least once (a worker that stalls past the timeout may finish after another
 * attempt started), so handlers are idempotent, keyed by the message id.
 */
export class PgBossOutbox implements Outbox, OutboxRetryNow, OutboxLog {
  private readonly topics: OutboxTopics;
  private readonly handOver: OutboxHandOver;
  private readonly workers: OutboxWorkers;
  private readonly maintenance: OutboxMaintenance;
  private readonly log: OutboxDeliveryLog;

  constructor(private readonly deps: PgBossOutboxDeps) {
    this.topics = new OutboxTopics(deps.boss, deps.topics, deps.queues);
    // A job handed over due now wakes this process's workers (unless a listener will).
    this.handOver = new OutboxHandOver(deps, this.topics, (queue) => this.workers.dueNow(queue));
    const attempts = new OutboxAttempts(deps, this.topics, this.handOver);
    this.workers = new OutboxWorkers(deps, this.topics, new OutboxBatch(deps, attempts, this.handOver));
    this.maintenance = new OutboxMaintenance(deps, this.handOver);
    this.log = new OutboxDeliveryLog(deps.db);
  }

  /** Registers the handler of a topic in this process (its worker delivers that topic). */
  register(handler: TopicHandler): void {
    this.topics.register(handler);
  }

  enqueue<P>(topic: Topic<P>, payload: NoInfer<P>, options: EnqueueOptions = {}): Promise<string> {
    return enqueueMessage(this.deps, this.topics, this.handOver, topic, payload, options);
  }

  /**
   * Starts the workers of every queue that has a topic handled in this process, the listener that
   * wakes them when a job is handed over, and the check for attempts abandoned by a dead worker.
   */
  startWorkers(): Promise<void> {
    return this.workers.start();
  }

  /**
   * Stops the worker loops (waiting up to 5 s for the batches they are running: a batch still
   * running then is settled by expiry and runs again), the wake-up listener and the
   * abandoned-attempt check (before the job queue stops).
   */
  stopWorkers(): Promise<void> {
    return this.workers.stop();
  }

  /** Has pg-boss fail now the jobs of attempts running past their expiry (their worker died or stalled); answers whether it did. */
  expireAbandoned(): Promise<boolean> {
    return this.workers.expireAbandoned();
  }

  /** Deletes the delivery log's messages settled more than `retentionDays` ago; answers how many. */
  purge(retentionDays: number): Promise<number> {
    return this.maintenance.purge(retentionDays);
  }

  /** The retention of the delivery log as a scheduled job: once an hour, across all processes. */
  purgeJob(retentionDays: number): ScheduledJob {
    return this.maintenance.purgeJob(retentionDays);
  }

  /** The sweep as a scheduled job: every minute, once across all worker processes. */
  sweepJob(): ScheduledJob {
    return this.maintenance.sweepJob();
  }

  /** Hands over again what was lost or stuck, and revives what its queue revives; answers how many it dispatched. */
  sweep(): Promise<number> {
    return this.maintenance.sweep();
  }

  /** Starts now the jobs whose attempt is due by the injected clock but waits on the database's; answers how many. */
  startDueAttempts(now?: Date): Promise<number> {
    return this.maintenance.startDueAttempts(now);
  }

  runNow(topic: Topic<unknown>, dedupeKey: string): Promise<Date | null> {
    return this.handOver.runNow(topic, dedupeKey);
  }

  listMessages(filter: { topic: Topic<unknown>; subject?: string; status?: MessageStatus; before?: Date; limit?: number }): Promise<OutboxMessageSummary[]> {
    return this.log.listMessages(filter);
  }

  listAttempts(messageId: string): Promise<DeliveryAttempt[]> {
    return this.log.listAttempts(messageId);
  }
}
