import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox as a typed job layer: a message keeps its status (pending, delivered, failed for
 * good), the time its next attempt is due, which scheduled attempt's job is current (generation),
 * an optional subject (what the delivery log filters on), dedupe key and retry policy of its own;
 * every attempt is kept in outbox_attempts. Times are written by the application's clock, so
 * created_at loses its default.
 *
 * Messages still pending move to the per-queue pg-boss queues: their hand-off is cleared, and the
 * first sweep hands them over again.
 */
export class Migration20261123000000OutboxJobs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table outbox_messages
        add column status text not null default 'pending',
        add column subject text null,
        add column dedupe_key text null,
        add column retry_policy jsonb null,
        add column generation integer not null default 0,
        add column next_attempt_at timestamptz null,
        add column revive_at timestamptz null;`);
    this.addSql(`alter table outbox_messages alter column created_at drop default;`);
    this.addSql(`update outbox_messages set status = 'delivered' where delivered_at is not null;`);
    this.addSql(`update outbox_messages set next_attempt_at = created_at, dispatched_at = null where delivered_at is null;`);
    this.addSql(`alter table outbox_messages add constraint outbox_messages_status_check check (status in ('pending', 'delivered', 'failed'));`);
    this.addSql(`drop index outbox_pending_idx;`);
    this.addSql(`create index outbox_messages_due_idx on outbox_messages(next_attempt_at) where status = 'pending';`);
    this.addSql(`create index outbox_messages_revive_idx on outbox_messages(revive_at) where status = 'failed' and revive_at is not null;`);
    this.addSql(`create unique index outbox_messages_dedupe_idx on outbox_messages(topic, dedupe_key) where status = 'pending' and dedupe_key is not null;`);
    this.addSql(`create index outbox_messages_topic_idx on outbox_messages(topic, created_at desc);`);
    this.addSql(`create index outbox_messages_subject_idx on outbox_messages(topic, subject, created_at desc) where subject is not null;`);
    this.addSql(`
      create table outbox_attempts (
        message_id uuid not null references outbox_messages(id) on delete cascade,
        attempt integer not null,
        status text not null check (status in ('running', 'succeeded', 'failed')),
        started_at timestamptz not null,
        finished_at timestamptz null,
        error text null,
        primary key (message_id, attempt)
      );`);
  }
}
