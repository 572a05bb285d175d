import { Migration } from '@mikro-orm/migrations';

/**
 * Organizations as customers (docs/billing.md, "Organizations"): a customer, a subscription and an
 * invoice belong to a billing subject, a user (user_id) or an organization (organization_id),
 * exactly one of the two. `subject_id` is whichever is set (a stored generated column), so the
 * one-live-subscription rule and the per-subject lookups keep one index each. organization_id has
 * no foreign key: an organization's invoices and subscriptions are financial records that outlive
 * it (deleting an organization cancels its subscription at period end, docs/billing.md).
 * - billing_plans.audience: whom a plan is sold to (users, organizations, both); existing plans
 *   stay personal plans.
 * - billing_events.organization_id: the organization an event concerns.
 * - billing_locks: keyed by the subject's id.
 */
export class Migration20261210000000OrganizationBilling extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table billing_plans add column audience text not null default 'users' check (audience in ('users', 'organizations', 'both'));`);
    // The customers' primary key holds user_id, which must become nullable: a unique index on the subject replaces it.
    this.addSql('alter table billing_customers drop constraint billing_customers_pkey;');
    for (const table of ['billing_customers', 'billing_subscriptions', 'billing_invoices']) {
      this.addSql(`
        alter table ${table}
          alter column user_id drop not null,
          add column organization_id uuid null,
          add column subject_id uuid generated always as (coalesce(user_id, organization_id)) stored,
          add constraint ${table}_subject_check check ((user_id is null) <> (organization_id is null));`);
    }
    this.addSql('create unique index billing_customers_subject_idx on billing_customers(project_id, subject_id, processor);');
    this.addSql('drop index billing_subscriptions_live_idx;');
    this.addSql(
      `create unique index billing_subscriptions_live_idx on billing_subscriptions(project_id, subject_id) where status in ('trialing', 'active', ` +
        `'past_due', 'paused');`,
    );
    this.addSql('drop index billing_subscriptions_user_idx;');
    this.addSql('create index billing_subscriptions_subject_idx on billing_subscriptions(project_id, subject_id, created_at desc);');
    this.addSql('drop index billing_invoices_user_idx;');
    this.addSql('create index billing_invoices_subject_idx on billing_invoices(project_id, subject_id, created_at desc, seq desc);');
    this.addSql('alter table billing_events add column organization_id uuid null;');
    this.addSql('alter table billing_locks rename column user_id to subject_id;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table billing_locks rename column subject_id to user_id;');
    this.addSql('alter table billing_events drop column organization_id;');
    this.addSql('drop index billing_invoices_subject_idx;');
    this.addSql('create index billing_invoices_user_idx on billing_invoices(project_id, user_id, created_at desc, seq desc);');
    this.addSql('drop index billing_subscriptions_subject_idx;');
    this.addSql('create index billing_subscriptions_user_idx on billing_subscriptions(project_id, user_id, created_at desc);');
    this.addSql('drop index billing_subscriptions_live_idx;');
    this.addSql(
      `create unique index billing_subscriptions_live_idx on billing_subscriptions(project_id, user_id) where status in ('trialing', 'active', ` +
        `'past_due', 'paused');`,
    );
    this.addSql('drop index billing_customers_subject_idx;');
    for (const table of ['billing_customers', 'billing_subscriptions', 'billing_invoices']) {
      this.addSql(`delete from ${table} where user_id is null;`);
      this.addSql(
        `alter table ${table} drop constraint ${table}_subject_check, drop column subject_id, drop column organization_id, alter column user_id set not null;`,
      );
    }
    this.addSql('alter table billing_customers add primary key (project_id, user_id, processor);');
    this.addSql('alter table billing_plans drop column audience;');
  }
}
