import { Migration } from '@mikro-orm/migrations';

/**
 * Per-seat prices (docs/billing.md, "Seats"):
 * - billing_prices.seats: a per-seat price's terms `{unitAmount, included, minimum, maximum}` (null: flat);
 * - billing_plans.seat_policy: how an organization's seats move on the plan (`{mode, countInvitations, removal}`);
 * - billing_subscriptions.quantity: the seats a per-seat subscription is billed for (null: a flat price);
 *   `seats_paid` and `seats_paid_period_start`: the most seats paid for within that period (a seat freed
 *   and taken again in the same period is not charged again); `seat_changes`: a counter each quantity
 *   change moves, which names its idempotency keys (a retried change is the same change at the processor).
 */
export class Migration20261211000000Seats extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table billing_prices add column seats jsonb null;');
    this.addSql(
      `alter table billing_plans add column seat_policy jsonb not null default '{"mode":"automatic","countInvitations":false,"removal":"period_end"}'::jsonb;`,
    );
    this.addSql(`
      alter table billing_subscriptions
        add column quantity integer null check (quantity is null or quantity >= 1),
        add column seats_paid integer null,
        add column seats_paid_period_start timestamptz null,
        add column seat_changes integer not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(
      'alter table billing_subscriptions drop column quantity, drop column seats_paid, drop column seats_paid_period_start, drop column seat_changes;',
    );
    this.addSql('alter table billing_plans drop column seat_policy;');
    this.addSql('alter table billing_prices drop column seats;');
  }
}
