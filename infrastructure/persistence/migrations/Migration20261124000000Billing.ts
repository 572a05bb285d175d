import { Migration } from '@mikro-orm/migrations';

/**
 * Subscription billing (docs/billing.md).
 *
 * - billing_connections: a project's payment processor (stripe with encrypted keys, or sandbox).
 * - billing_plans / billing_prices: the catalog; `position` orders plans (the plan hierarchy,
 *   lowest first); `processor_*_id` are the connected processor's ids (Stripe Product / Price).
 * - billing_customers: one processor customer per (project, user, processor), created lazily.
 * - billing_subscriptions: Tollgate's record of each subscription, kept in step with the processor.
 *   At most one live subscription per (project, user), enforced here by a partial unique index.
 * - billing_invoices: per user, newest first; `attempt_count` tells a new failed attempt apart.
 * - billing_events: the project events (subscription.created, ...), written in the same
 *   transaction as the change that causes them; `dedupe_key` makes an event that two paths derive
 *   (an API answer and the processor's webhook) land once; `seq` is the order they were recorded in.
 * - billing_locks: a short lease per (project, user) held while a subscription changes at the
 *   processor, so concurrent requests cannot charge twice.
 * - billing_processor_events: inbound processor events applied, each id once.
 * - idempotent_requests: stored answers for `Idempotency-Key`, 24 hours.
 * - sandbox_objects / sandbox_clocks: the built-in sandbox processor's own state (customers, cards,
 *   subscriptions, invoices, checkout sessions) and each project's sandbox clock offset.
 */
export class Migration20261124000000Billing extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table billing_connections (
        project_id uuid primary key references projects(id) on delete cascade,
        processor text not null check (processor in ('stripe', 'sandbox')),
        secret_key_enc text null,
        webhook_secret_enc text null,
        publishable_key text null,
        key_last4 text null,
        livemode boolean not null default false,
        account_id text null,
        currency text not null default 'usd',
        connected_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`
      create table billing_plans (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        name text not null,
        description text not null default '',
        features jsonb not null default '[]',
        hidden boolean not null default false,
        recommended boolean not null default false,
        trials_enabled boolean not null default false,
        default_trial_days integer null,
        position integer not null,
        processor text null,
        processor_product_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index billing_plans_name_idx on billing_plans(project_id, lower(name));`);
    this.addSql(`create index billing_plans_position_idx on billing_plans(project_id, position);`);
    this.addSql(`
      create table billing_prices (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        plan_id uuid not null references billing_plans(id) on delete cascade,
        name text not null,
        amount bigint not null check (amount >= 0),
        currency text not null,
        interval text not null check (interval in ('month', 'year')),
        active boolean not null default true,
        processor text null,
        processor_price_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index billing_prices_plan_idx on billing_prices(project_id, plan_id);`);
    this.addSql(`
      create table billing_customers (
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        processor text not null,
        customer_id text not null,
        trial_used boolean not null default false,
        created_at timestamptz not null,
        primary key (project_id, user_id, processor)
      );`);
    this.addSql(`create unique index billing_customers_processor_idx on billing_customers(processor, customer_id);`);
    this.addSql(`
      create table billing_subscriptions (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        processor text not null,
        processor_subscription_id text not null,
        customer_id text not null,
        plan_id uuid not null references billing_plans(id),
        price_id uuid not null references billing_prices(id),
        amount bigint not null,
        currency text not null,
        interval text not null,
        status text not null check (status in ('incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'paused', 'canceled')),
        cancel_at_period_end boolean not null default false,
        current_period_start timestamptz not null,
        current_period_end timestamptz not null,
        billing_cycle_anchor timestamptz not null,
        canceled_at timestamptz null,
        ended_at timestamptz null,
        trial_start timestamptz null,
        trial_end timestamptz null,
        paused_at timestamptz null,
        past_due_at timestamptz null,
        payment_method jsonb null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index billing_subscriptions_processor_idx on billing_subscriptions(processor, processor_subscription_id);`);
    this.addSql(
      `create unique index billing_subscriptions_live_idx on billing_subscriptions(project_id, user_id) where status in ('trialing', 'active', ` +
        `'past_due', 'paused');`,
    );
    this.addSql(`create index billing_subscriptions_user_idx on billing_subscriptions(project_id, user_id, created_at desc);`);
    this.addSql(`
      create table billing_invoices (
        id uuid primary key,
        seq bigint generated always as identity,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        subscription_id uuid null references billing_subscriptions(id) on delete set null,
        processor text not null,
        processor_invoice_id text not null,
        status text not null check (status in ('open', 'paid', 'void', 'uncollectible')),
        reason text not null,
        currency text not null,
        subtotal bigint not null,
        amount_due bigint not null,
        amount_paid bigint not null,
        attempt_count integer not null default 0,
        lines jsonb not null default '[]',
        period_start timestamptz not null,
        period_end timestamptz not null,
        hosted_url text null,
        created_at timestamptz not null,
        paid_at timestamptz null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index billing_invoices_processor_idx on billing_invoices(processor, processor_invoice_id);`);
    this.addSql(`create index billing_invoices_user_idx on billing_invoices(project_id, user_id, created_at desc, seq desc);`);
    this.addSql(`
      create table billing_events (
        id uuid primary key,
        seq bigint generated always as identity,
        project_id uuid not null references projects(id) on delete cascade,
        type text not null,
        user_id uuid null,
        subscription_id uuid null,
        dedupe_key text null,
        payload jsonb not null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index billing_events_project_idx on billing_events(project_id, seq);`);
    this.addSql(`create unique index billing_events_dedupe_idx on billing_events(project_id, dedupe_key) where dedupe_key is not null;`);
    this.addSql(`
      create table billing_locks (
        project_id uuid not null,
        user_id uuid not null,
        holder uuid not null,
        expires_at timestamptz not null,
        primary key (project_id, user_id)
      );`);
    this.addSql(`
      create table billing_processor_events (
        processor text not null,
        event_id text not null,
        project_id uuid not null references projects(id) on delete cascade,
        type text not null,
        received_at timestamptz not null,
        primary key (processor, event_id)
      );`);
    this.addSql(`
      create table idempotent_requests (
        scope text not null,
        key text not null,
        fingerprint text not null,
        status integer null,
        body jsonb null,
        created_at timestamptz not null,
        completed_at timestamptz null,
        primary key (scope, key)
      );`);
    this.addSql(`create index idempotent_requests_created_idx on idempotent_requests(created_at);`);
    this.addSql(`
      create table sandbox_objects (
        id text primary key,
        project_id uuid not null references projects(id) on delete cascade,
        kind text not null,
        parent_id text null,
        data jsonb not null,
        due_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index sandbox_objects_kind_idx on sandbox_objects(project_id, kind, parent_id);`);
    this.addSql(`create index sandbox_objects_due_idx on sandbox_objects(due_at) where due_at is not null;`);
    this.addSql(`
      create table sandbox_clocks (
        project_id uuid primary key references projects(id) on delete cascade,
        offset_seconds bigint not null default 0
      );`);
  }

  override async down(): Promise<void> {
    for (const table of [
      'sandbox_clocks',
      'sandbox_objects',
      'idempotent_requests',
      'billing_processor_events',
      'billing_locks',
      'billing_events',
      'billing_invoices',
      'billing_subscriptions',
      'billing_customers',
      'billing_prices',
      'billing_plans',
      'billing_connections',
    ]) {
      this.addSql(`drop table if exists ${table};`);
    }
  }
}
