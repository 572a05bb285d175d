import type { BillingCustomer, CustomerStore } from '../../application/billing/billing.store';
import type { ProcessorKind } from '../../application/billing/payment-processor';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toCustomer = rowMapper<BillingCustomer>({
  projectId: read.text,
  userId: read.text,
  processor: read.as<ProcessorKind>(),
  customerId: read.text,
  trialUsed: read.bool,
  createdAt: read.date,
});

/** One processor customer per (project, user, processor). */
export class PostgresCustomerStore implements CustomerStore {
  constructor(private readonly db: Database) {}

  async find(projectId: string, userId: string, processor: ProcessorKind): Promise<BillingCustomer | null> {
    if (!isUuid(projectId) || !isUuid(userId)) return null;
    return toCustomer.first(
      await this.db.query(`select ${toCustomer.columns} from billing_customers where project_id = ? and user_id = ? and processor = ?`, [
        projectId,
        userId,
        processor,
      ]),
    );
  }

  async findByProcessorId(processor: ProcessorKind, customerId: string): Promise<BillingCustomer | null> {
    return toCustomer.first(
      await this.db.query(`select ${toCustomer.columns} from billing_customers where processor = ? and customer_id = ?`, [processor, customerId]),
    );
  }

  /**
   * First writer wins: the insert does nothing when the user already has a customer, and the row
   * read back (a second statement, so it sees a concurrent writer's committed row) is the one kept.
   */
  async insert(c: BillingCustomer): Promise<BillingCustomer> {
    await this.db.query(
      `insert into billing_customers (project_id, user_id, processor, customer_id, trial_used, created_at)
       values (?, ?, ?, ?, ?, ?)
       on conflict do nothing`,
      [c.projectId, c.userId, c.processor, c.customerId, c.trialUsed, c.createdAt],
    );
    const stored = await this.find(c.projectId, c.userId, c.processor);
    if (stored === null) {
      // Nothing for this user, yet the insert was refused: the processor's customer id belongs to another user.
      throw new Error(`Billing customer ${c.processor}/${c.customerId} is already recorded for another user`);
    }
    return stored;
  }

  async forget(projectId: string, processor: ProcessorKind): Promise<number> {
    if (!isUuid(projectId)) return 0;
    const rows = await this.db.query('delete from billing_customers where project_id = ? and processor = ? returning user_id', [projectId, processor]);
    return rows.length;
  }

  async markTrialUsed(projectId: string, userId: string, processor: ProcessorKind): Promise<void> {
    if (!isUuid(projectId) || !isUuid(userId)) return;
    await this.db.query('update billing_customers set trial_used = true where project_id = ? and user_id = ? and processor = ?', [
      projectId,
      userId,
      processor,
    ]);
  }
}
