import type { DeliveryAttempt, MessageStatus, OutboxLog, OutboxMessageSummary, Topic } from '../../application/ports/outbox';
import type { Database } from '../persistence/database';
import { toDate, toDateOrNull } from './outbox-model';

/** The delivery log, read only: a topic's messages (newest first) and each message's attempts. */
export class OutboxDeliveryLog implements OutboxLog {
  constructor(private readonly db: Database) {}

  async listMessages(filter: {
    topic: Topic<unknown>;
    subject?: string;
    status?: MessageStatus;
    before?: Date;
    limit?: number;
  }): Promise<OutboxMessageSummary[]> {
    const where = ['topic = ?'];
    const params: unknown[] = [filter.topic.name];
    const and = (condition: string, value: unknown) => {
      where.push(condition);
      params.push(value);
    };
    if (filter.subject !== undefined) and('subject = ?', filter.subject);
    if (filter.status !== undefined) and('status = ?', filter.status);
    if (filter.before !== undefined) and('created_at < ?', filter.before);
    const limit = Math.min(Math.max(Math.trunc(filter.limit ?? 50), 1), 500);
    const rows = await this.db.query<{
      id: string;
      topic: string;
      subject: string | null;
      status: MessageStatus;
      attempts: number;
      last_error: string | null;
      created_at: Date | string;
      next_attempt_at: Date | string | null;
      delivered_at: Date | string | null;
    }>(
      `select id, topic, subject, status, attempts, last_error, created_at, next_attempt_at, delivered_at
         from outbox_messages where ${where.join(' and ')} order by created_at desc, id desc limit ${limit}`,
      params,
    );
    return rows.map((r) => ({
      id: r.id,
      topic: r.topic,
      subject: r.subject,
      status: r.status,
      attempts: r.attempts,
      lastError: r.last_error,
      createdAt: toDate(r.created_at),
      nextAttemptAt: toDateOrNull(r.next_attempt_at),
      deliveredAt: toDateOrNull(r.delivered_at),
    }));
  }

  async listAttempts(messageId: string): Promise<DeliveryAttempt[]> {
    const rows = await this.db.query<{
      message_id: string;
      attempt: number;
      status: DeliveryAttempt['status'];
      started_at: Date | string;
      finished_at: Date | string | null;
      error: string | null;
    }>('select message_id, attempt, status, started_at, finished_at, error from outbox_attempts where message_id = ? order by attempt', [messageId]);
    return rows.map((r) => ({
      messageId: r.message_id,
      attempt: r.attempt,
      status: r.status,
      startedAt: toDate(r.started_at),
      finishedAt: toDateOrNull(r.finished_at),
      error: r.error,
    }));
  }
}
