import { Migration } from '@mikro-orm/migrations';

/**
 * Usage-based billing (docs/usage.md):
 * - usage_meters: a project's meters (key, name, unit, aggregation);
 * - billing_plans.usage_limits: a plan's metered features (`[{meter, included, reset, overage, price}]`);
 * - usage_events: every reported or consumed event, once per (project, event id): a retry is a
 *   duplicate, never a second count; a consumption keeps where its units came from (`allocation`)
 *   and what was given back (`released`);
 * - usage_counters: a subject's usage of a meter in one window (`used`, the `overage` past the
 *   included amount and the credits, how much of it was reported to the processor, the thresholds
 *   reported, and a `version` each change moves: a consumption writes only over the version it read);
 * - usage_credit_grants: credits with what is left of them and their expiry.
 */
export class Migration20261212000000Usage extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table usage_meters (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        key text not null,
        name text not null,
        unit text not null default '',
        aggregation text not null check (aggregation in ('sum', 'count', 'max')),
        created_at timestamptz not null,
        unique (project_id, key)
      );`);
    this.addSql(`alter table billing_plans add column usage_limits jsonb not null default '[]'::jsonb;`);
    this.addSql(`
      create table usage_events (
        project_id uuid not null references projects(id) on delete cascade,
        event_id text not null,
        subject_kind text not null check (subject_kind in ('user', 'organization')),
        subject_id uuid not null,
        meter_id uuid not null references usage_meters(id) on delete cascade,
        value bigint not null check (value >= 0),
        occurred_at timestamptz not null,
        window_start timestamptz not null,
        allocation jsonb null,
        released bigint not null default 0,
        created_at timestamptz not null,
        primary key (project_id, event_id)
      );`);
    this.addSql('create index usage_events_subject_idx on usage_events (project_id, subject_id, meter_id, occurred_at);');
    this.addSql(`
      create table usage_counters (
        project_id uuid not null references projects(id) on delete cascade,
        subject_kind text not null check (subject_kind in ('user', 'organization')),
        subject_id uuid not null,
        meter_id uuid not null references usage_meters(id) on delete cascade,
        window_start timestamptz not null,
        window_end timestamptz not null,
        used bigint not null default 0 check (used >= 0),
        overage bigint not null default 0 check (overage >= 0),
        overage_reported bigint not null default 0,
        notified smallint not null default 0,
        version bigint not null default 0,
        primary key (project_id, subject_id, meter_id, window_start)
      );`);
    this.addSql('create index usage_counters_top_idx on usage_counters (project_id, meter_id, window_start, used desc);');
    this.addSql(`
      create table usage_credit_grants (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        external_id text null,
        subject_kind text not null check (subject_kind in ('user', 'organization')),
        subject_id uuid not null,
        meter_id uuid not null references usage_meters(id) on delete cascade,
        amount bigint not null check (amount > 0),
        remaining bigint not null check (remaining >= 0 and remaining <= amount),
        expires_at timestamptz null,
        reason text not null default '',
        source text not null check (source in ('operator', 'api', 'purchase')),
        created_at timestamptz not null,
        expired_at timestamptz null,
        unique (project_id, external_id)
      );`);
    this.addSql('create index usage_credit_grants_subject_idx on usage_credit_grants (project_id, subject_id, meter_id);');
    this.addSql('create index usage_credit_grants_expiry_idx on usage_credit_grants (expires_at) where expired_at is null and expires_at is not null;');
  }

  override async down(): Promise<void> {
    this.addSql('drop table usage_credit_grants;');
    this.addSql('drop table usage_counters;');
    this.addSql('drop table usage_events;');
    this.addSql('alter table billing_plans drop column usage_limits;');
    this.addSql('drop table usage_meters;');
  }
}
