import type { ProcessorEventLog } from '../../application/billing/billing.store';
import type { ProcessorKind } from '../../application/billing/payment-processor';
import type { Database } from './database';

/** Inbound processor events, one row per (processor, event id): the first claim inserts it, duplicates find it. */
export class PostgresProcessorEventLog implements ProcessorEventLog {
  constructor(private readonly db: Database) {}

  async claim(event: { processor: ProcessorKind; eventId: string; projectId: string; type: string; receivedAt: Date }): Promise<boolean> {
    const rows = await this.db.query(
      `insert into billing_processor_events (processor, event_id, project_id, type, received_at) values (?, ?, ?, ?, ?)
       on conflict (processor, event_id) do nothing
       returning event_id`,
      [event.processor, event.eventId, event.projectId, event.type, event.receivedAt],
    );
    return rows.length > 0;
  }

  async unclaim(processor: ProcessorKind, eventId: string): Promise<void> {
    await this.db.query('delete from billing_processor_events where processor = ? and event_id = ?', [processor, eventId]);
  }
}
