import { Migration } from '@mikro-orm/migrations';

/**
 * Credit packs (docs/usage.md, "Credit packs"): credits of a meter sold for a one-off amount
 * through the processor's checkout; a paid checkout grants them (usage_credit_grants, source
 * `purchase`, its external id the checkout's, so a completion seen twice grants once).
 */
export class Migration20261213000000CreditPacks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table usage_credit_packs (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        meter_key text not null,
        name text not null,
        units bigint not null check (units > 0),
        amount integer not null check (amount > 0),
        currency text not null,
        expires_in_days integer null check (expires_in_days is null or expires_in_days > 0),
        active boolean not null default true,
        created_at timestamptz not null
      );`);
    this.addSql('create index usage_credit_packs_project_idx on usage_credit_packs (project_id, created_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table usage_credit_packs;');
  }
}
