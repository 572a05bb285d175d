import { Migration } from '@mikro-orm/migrations';

/**
 * The operator's invoice list (console Billing page, `tollgate invoice list`): a project's invoices
 * of every user newest first, read from this index without sorting the project's invoices. (One
 * user's invoices keep billing_invoices_user_idx.)
 */
export class Migration20261204000000InvoiceListing extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index billing_invoices_project_idx on billing_invoices(project_id, created_at desc, seq desc);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists billing_invoices_project_idx;');
  }
}
