import { Migration } from '@mikro-orm/migrations';

/**
 * Project webhooks:
 * - webhook_endpoints: a project's endpoints: URL, selected event types (empty = all), description,
 *   enabled flag and Tollgate's reason for disabling it (410, 5 days of failures), the signing
 *   secret encrypted (SecretBox) with its readable prefix, the secret before the last roll while it
 *   still signs, and the failing streak (first failure since the last success).
 * - webhook_deliveries: one event (or test) to one endpoint: its payload as sent, status (pending,
 *   succeeded, failed), attempts made, last status code, next attempt; `seq` orders deliveries
 *   recorded at the same time (one event's fan-out, one transaction's events). Written with the event, in
 *   the transaction of the state change; deleted with its endpoint.
 * - webhook_attempts: every attempt: start, duration, status code, the first 1 KB of the answer or
 *   the network error. (message_id, message_attempt) is the outbox attempt that made it: the same
 *   one is never recorded, so never sent, twice.
 */
export class Migration20261125000000Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table webhook_endpoints (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        url text not null,
        event_types text[] not null default '{}',
        description text not null default '',
        enabled boolean not null default true,
        disabled_reason text null,
        secret_enc text not null,
        secret_prefix text not null,
        previous_secret_enc text null,
        previous_secret_until timestamptz null,
        failing_since timestamptz null,
        last_success_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index webhook_endpoints_project_idx on webhook_endpoints(project_id, created_at);`);
    this.addSql(`
      create table webhook_deliveries (
        id uuid primary key,
        seq bigint generated always as identity,
        project_id uuid not null references projects(id) on delete cascade,
        endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
        event_id uuid null,
        event_type text not null,
        payload jsonb not null,
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        attempt_count integer not null default 0,
        last_status_code integer null,
        created_at timestamptz not null,
        completed_at timestamptz null,
        next_attempt_at timestamptz null
      );`);
    this.addSql(`create index webhook_deliveries_endpoint_idx on webhook_deliveries(endpoint_id, created_at desc, seq desc);`);
    this.addSql(`create index webhook_deliveries_failed_idx on webhook_deliveries(endpoint_id, created_at) where status = 'failed';`);
    this.addSql(`create index webhook_deliveries_pending_idx on webhook_deliveries(created_at) where status = 'pending';`);
    this.addSql(`
      create table webhook_attempts (
        delivery_id uuid not null references webhook_deliveries(id) on delete cascade,
        attempt integer not null,
        message_id uuid null,
        message_attempt integer null,
        started_at timestamptz not null,
        duration_ms integer null,
        status_code integer null,
        response_excerpt text null,
        error text null,
        primary key (delivery_id, attempt)
      );`);
    this.addSql(`create unique index webhook_attempts_message_idx on webhook_attempts(message_id, message_attempt) where message_id is not null;`);
  }
}
