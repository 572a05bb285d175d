import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds recorded on the invoice they refund: how much of its payment Tollgate refunded and when
 * (a duplicate subscription's first charge is refunded at once). Existing invoices refunded nothing.
 */
export class Migration20261205000000BillingRefunds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table billing_invoices add column amount_refunded bigint not null default 0, add column refunded_at timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table billing_invoices drop column if exists amount_refunded, drop column if exists refunded_at;');
  }
}
