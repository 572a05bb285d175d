import type { BillingCustomer, CustomerStore } from '../../application/billing/billing.store';
import type { ProcessorKind } from '../../application/billing/payment-processor';
import type { BillingSubject } from '../../domain/billing/subject';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

/**
 * The subject columns of billing_customers, billing_subscriptions and billing_invoices: exactly one
 * of user_id and organization_id is set (a check constraint), and subject_id, generated, is that one.
 * Rows are looked up by subject_id alone (user and organization ids are UUIDs, so they never meet),
 * which is what the tables' subject indexes cover.
 */
export const subjectColumns = 'user_id, organization_id';

/** The subject of a row that selected `subjectColumns`. */
export function subjectOf(row: object): BillingSubject {
  const { user_id: userId, organization_id: organizationId } = row as { user_id?: unknown; organization_id?: unknown };
  if (userId !== null && userId !== undefined) return { kind: 'user', id: read.text(userId) };
  return { kind: 'organization', id: read.text(organizationId) };
}

/** The values of `subjectColumns` for a subject: [user_id, organization_id]. */
export const subjectValues = (s: BillingSubject): [userId: string | null, organizationId: string | null] => (s.kind === 'user' ? [s.id, null] : [null, s.id]);

const toCustomerFields = rowMapper<Omit<BillingCustomer, 'subject'>>({
  projectId: read.text,
  processor: read.as<ProcessorKind>(),
  customerId: read.text,
  trialUsed: read.bool,
  createdAt: read.date,
});

const columns = `${toCustomerFields.columns}, ${subjectColumns}`;
const toCustomer = (row: object): BillingCustomer => ({ ...toCustomerFields(row), subject: subjectOf(row) });

/** One processor customer per (project, subject, processor): a user's, or an organization's. */
export class PostgresCustomerStore implements CustomerStore {
  constructor(private readonly db: Database) {}

  async find(projectId: string, subject: BillingSubject, processor: ProcessorKind): Promise<BillingCustomer | null> {
    if (!isUuid(projectId) || !isUuid(subject.id)) return null;
    const rows = await this.db.query(`select ${columns} from billing_customers where project_id = ? and subject_id = ? and processor = ?`, [
      projectId,
      subject.id,
      processor,
    ]);
    return rows.length > 0 ? toCustomer(rows[0]!) : null;
  }

  async findByProcessorId(processor: ProcessorKind, customerId: string): Promise<BillingCustomer | null> {
    const rows = await this.db.query(`select ${columns} from billing_customers where processor = ? and customer_id = ?`, [processor, customerId]);
    return rows.length > 0 ? toCustomer(rows[0]!) : null;
  }

  /**
   * First writer wins: the insert does nothing when the subject already has a customer, and the row
   * read back (a second statement, so it sees a concurrent writer's committed row) is the one kept.
   */
  async insert(c: BillingCustomer): Promise<BillingCustomer> {
    await this.db.query(
      `insert into billing_customers (project_id, user_id, organization_id, processor, customer_id, trial_used, created_at)
       values (?, ?, ?, ?, ?, ?, ?)
       on conflict do nothing`,
      [c.projectId, ...subjectValues(c.subject), c.processor, c.customerId, c.trialUsed, c.createdAt],
    );
    const stored = await this.find(c.projectId, c.subject, c.processor);
    if (stored === null) {
      // Nothing for this subject, yet the insert was refused: the processor's customer id belongs to another subject.
      throw new Error(`Billing customer ${c.processor}/${c.customerId} is already recorded for another subject`);
    }
    return stored;
  }

  async forget(projectId: string, processor: ProcessorKind): Promise<number> {
    if (!isUuid(projectId)) return 0;
    const rows = await this.db.query('delete from billing_customers where project_id = ? and processor = ? returning subject_id', [projectId, processor]);
    return rows.length;
  }

  async markTrialUsed(projectId: string, subject: BillingSubject, processor: ProcessorKind): Promise<void> {
    if (!isUuid(projectId) || !isUuid(subject.id)) return;
    await this.db.query('update billing_customers set trial_used = true where project_id = ? and subject_id = ? and processor = ?', [
      projectId,
      subject.id,
      processor,
    ]);
  }
}
