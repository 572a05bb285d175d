import type PgBoss from 'pg-boss';
import type { SecretBox, TokenCrypto } from '../../application/ports/crypto';
import type { Logger } from '../../application/ports/logger';
import type { Outbox } from '../../application/ports/outbox';
import type { Database } from '../persistence/database';

export const OUTBOX_QUEUE = 'tollgate-outbox';

export type OutboxHandler = (payload: Record<string, unknown>, messageId: string) => Promise<void>;

export interface OutboxDeliveryOptions {
  /** Attempts after the first before the queue gives up (the sweep revives the message later). */
  retryLimit: number;
  /** First retry delay; later ones back off exponentially. */
  retryDelaySeconds: number;
  /**
   * How long one delivery may run. A handler still running after this is failed and retried; a
   * job whose worker died is failed by the queue's maintenance after this and delivered elsewhere.
   */
  jobTimeoutSeconds?: number;
}

export const DEFAULT_OUTBOX_JOB_TIMEOUT_SECONDS = 60;

/**
 * Transactional outbox. `enqueue` writes the message (payload encrypted, since mail carries codes
 * and links) in the caller's transaction; after commit it is handed to pg-boss, which delivers it
 * with retries. The queue job carries the message id as its own id, so handing a message over
 * twice never makes two jobs. A periodic sweep re-dispatches anything whose hand-off was lost
 * (process died between commit and send) and revives messages whose retries ran out long ago.
 * Handlers must be idempotent (a worker that stalls past the job timeout may still finish after
 * another delivered): a message is marked delivered once, and its payload is erased then.
 */
export class PgBossOutbox implements Outbox {
  private readonly handlers = new Map<string, OutboxHandler>();
  private queueReady: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly boss: PgBoss,
    private readonly box: SecretBox,
    private readonly crypto: TokenCrypto,
    private readonly logger: Logger,
    private readonly options: OutboxDeliveryOptions,
  ) {}

  register(topic: string, handler: OutboxHandler): void {
    this.handlers.set(topic, handler);
  }

  async enqueue(topic: string, payload: Record<string, unknown>): Promise<string> {
    const id = this.crypto.uuid();
    await this.db.query('insert into outbox_messages (id, topic, payload_enc) values (?, ?, ?)', [
      id,
      topic,
      this.box.encrypt(JSON.stringify(payload)),
    ]);
    await this.db.onCommit(() => this.dispatch(id));
    return id;
  }

  /** The queue must exist before a job is sent to it: pg-boss silently drops jobs for unknown queues. */
  private ensureQueue(): Promise<void> {
    this.queueReady ??= this.boss.createQueue(OUTBOX_QUEUE).catch((e: unknown) => {
      this.queueReady = undefined;
      throw e;
    });
    return this.queueReady;
  }

  private async dispatch(id: string): Promise<void> {
    try {
      await this.ensureQueue();
      const sent = await this.boss.send(OUTBOX_QUEUE, { id }, {
        id,
        retryLimit: this.options.retryLimit,
        retryDelay: this.options.retryDelaySeconds,
        retryBackoff: true,
        expireInSeconds: this.options.jobTimeoutSeconds ?? DEFAULT_OUTBOX_JOB_TIMEOUT_SECONDS,
      });
      if (!sent) {
        // A job for this message exists already: leave a live one alone, revive a failed one.
        const job = await this.boss.getJobById(OUTBOX_QUEUE, id);
        if (!job) throw new Error('the job queue accepted no job for the message');
        if (job.state === 'failed') await this.boss.retry(OUTBOX_QUEUE, id);
      }
      await this.db.withContext(() => this.db.query('update outbox_messages set dispatched_at = now() where id = ?', [id]));
    } catch (e) {
      // The sweep picks the message up again.
      this.logger.warn({ err: e, outboxId: id }, 'outbox dispatch failed');
    }
  }

  /** Starts the queue worker in this process. */
  async startWorker(): Promise<void> {
    await this.ensureQueue();
    await this.boss.work<{ id: string }>(OUTBOX_QUEUE, { batchSize: 5, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      // Each job of the batch succeeds or fails on its own: one failing message does not hold
      // back, or use up the retries of, the others fetched with it.
      const results = await Promise.allSettled(jobs.map((job) => this.db.withContext(() => this.deliver(job.data.id))));
      const done: string[] = [];
      for (const [i, result] of results.entries()) {
        const job = jobs[i]!;
        if (result.status === 'fulfilled') done.push(job.id);
        else {
          const err = result.reason instanceof Error ? result.reason.message : String(result.reason);
          this.logger.warn({ outboxId: job.data.id, error: err }, 'outbox delivery failed');
          await this.boss.fail(OUTBOX_QUEUE, job.id, { message: err });
        }
      }
      if (done.length) await this.boss.complete(OUTBOX_QUEUE, done);
    });
  }

  private async deliver(id: string): Promise<void> {
    const rows = await this.db.query<{ topic: string; payload_enc: string | null; delivered_at: Date | null }>(
      'select topic, payload_enc, delivered_at from outbox_messages where id = ?',
      [id],
    );
    const row = rows[0];
    if (!row || row.delivered_at || !row.payload_enc) return;
    const handler = this.handlers.get(row.topic);
    if (!handler) throw new Error(`no outbox handler for topic ${row.topic}`);
    try {
      await handler(JSON.parse(this.box.decrypt(row.payload_enc)) as Record<string, unknown>, id);
    } catch (e) {
      await this.db.query('update outbox_messages set attempts = attempts + 1, last_error = ? where id = ?', [
        e instanceof Error ? e.message.slice(0, 500) : 'error',
        id,
      ]);
      throw e;
    }
    await this.db.query(
      'update outbox_messages set delivered_at = now(), payload_enc = null, attempts = attempts + 1, last_error = null where id = ? and delivered_at is null',
      [id],
    );
  }

  /**
   * Re-dispatches messages that were never handed to the queue, and those handed over more than
   * 15 minutes ago and still undelivered (a job still queued or retrying is left as it is; one
   * whose retries ran out is retried again).
   */
  async sweep(): Promise<number> {
    const rows = await this.db.withContext(() =>
      this.db.query<{ id: string }>(
        `select id from outbox_messages
          where delivered_at is null
            and ((dispatched_at is null and created_at < now() - interval '5 seconds')
              or dispatched_at < now() - interval '15 minutes')
          order by created_at limit 100`,
      ),
    );
    for (const r of rows) await this.dispatch(r.id);
    return rows.length;
  }
}
