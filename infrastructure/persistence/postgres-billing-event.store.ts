import type { BillingEvent, BillingEventLog, EventPublisher } from '../../application/billing/billing.store';
import type { BillingEventType } from '../../domain/billing/events';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toEvent = rowMapper<BillingEvent>({
  id: read.text,
  projectId: read.text,
  type: read.as<BillingEventType>(),
  userId: read.textOrNull,
  organizationId: read.textOrNull,
  subscriptionId: read.textOrNull,
  dedupeKey: read.textOrNull,
  payload: read.as<Record<string, unknown>>(),
  createdAt: read.date,
});

/**
 * Project events in billing_events, written on the caller's connection (its transaction, when it
 * has one). An event whose dedupe key the project already holds is skipped by the partial unique
 * index, without an error that would abort the caller's transaction; events without a key never
 * conflict.
 */
export class PostgresEventPublisher implements EventPublisher {
  constructor(private readonly db: Database) {}

  async publish(e: BillingEvent): Promise<boolean> {
    const rows = await this.db.query(
      `insert into billing_events (id, project_id, type, user_id, organization_id, subscription_id, dedupe_key, payload, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)
       on conflict (project_id, dedupe_key) where dedupe_key is not null do nothing
       returning id`,
      [e.id, e.projectId, e.type, e.userId, e.organizationId, e.subscriptionId, e.dedupeKey, JSON.stringify(e.payload), e.createdAt],
    );
    return rows.length > 0;
  }
}

export class PostgresBillingEventLog implements BillingEventLog {
  constructor(private readonly db: Database) {}

  /** Newest first. */
  async list(projectId: string, filter: { type?: BillingEventType; limit: number }): Promise<BillingEvent[]> {
    if (!isUuid(projectId)) return [];
    const typed = filter.type !== undefined;
    const rows = await this.db.query(
      `select ${toEvent.columns} from billing_events where project_id = ?${typed ? ' and type = ?' : ''}
        order by seq desc limit ?`,
      [projectId, ...(typed ? [filter.type] : []), Math.max(0, Math.floor(filter.limit))],
    );
    return rows.map(toEvent);
  }
}
