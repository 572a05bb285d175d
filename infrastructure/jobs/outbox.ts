import type PgBoss from 'pg-boss';
import type { SecretBox, TokenCrypto } from '../../application/ports/crypto';
import type { Logger } from '../../application/ports/logger';
import type { Outbox } from '../../application/ports/outbox';
import type { Database } from '../persistence/database';

export const OUTBOX_QUEUE = 'tollgate-outbox';

export type OutboxHandler = (payload: Record<string, unknown>, messageId: string) => Promise<void>;

/**
 * Transactional outbox. `enqueue` writes the message (payload encrypted, since mail carries codes
 * and links) in the caller's transaction; after commit it is handed to pg-boss, which delivers it
 * with retries. A periodic sweep re-dispatches anything whose hand-off was lost (process died
 * between commit and send). Handlers must be idempotent: a message is marked delivered once, and
 * its payload is erased then.
 */
export class PgBossOutbox implements Outbox {
  private readonly handlers = new Map<string, OutboxHandler>();

  constructor(
    private readonly db: Database,
    private readonly boss: PgBoss,
    private readonly box: SecretBox,
    private readonly crypto: TokenCrypto,
    private readonly logger: Logger,
    private readonly retry: { retryLimit: number; retryDelaySeconds: number },
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

  private async dispatch(id: string): Promise<void> {
    try {
      await this.boss.send(OUTBOX_QUEUE, { id }, {
        singletonKey: id,
        retryLimit: this.retry.retryLimit,
        retryDelay: this.retry.retryDelaySeconds,
        retryBackoff: true,
      });
      await this.db.withContext(() => this.db.query('update outbox_messages set dispatched_at = now() where id = ?', [id]));
    } catch (e) {
      // The sweep picks the message up again.
      this.logger.warn({ err: e, outboxId: id }, 'outbox dispatch failed');
    }
  }

  /** Starts the queue worker in this process. */
  async startWorker(): Promise<void> {
    await this.boss.createQueue(OUTBOX_QUEUE);
    await this.boss.work<{ id: string }>(OUTBOX_QUEUE, { batchSize: 5, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      for (const job of jobs) await this.db.withContext(() => this.deliver(job.data.id));
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
      'update outbox_messages set delivered_at = now(), payload_enc = null, attempts = attempts + 1, last_error = null where id = ?',
      [id],
    );
  }

  /** Re-dispatches messages that were never handed to the queue, or whose retries ran out long ago. */
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
