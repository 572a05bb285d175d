import type { BillingSubscription, SeatLedger, SubscriptionStore } from '../../application/billing/billing.store';
import type { ProcessorKind } from '../../application/billing/payment-processor';
import type { PriceSnapshot } from '../../domain/billing/catalog';
import type { PaymentMethodSummary } from '../../domain/billing/invoice';
import type { BillingInterval } from '../../domain/billing/periods';
import type { BillingSubject } from '../../domain/billing/subject';
import { LIVE_STATUSES, type Subscription, type SubscriptionStatus } from '../../domain/billing/subscription';
import type { Database } from './database';
import { newestFirstPage, type PageCondition } from './newest-first-page';
import { subjectColumns, subjectOf, subjectValues } from './postgres-billing-customer.store';
import { type Read, isUuid, read, rowMapper } from './rows';
import { writeUnlessTaken } from './unique-violation';

/** The partial unique index that allows one live subscription per (project, subject). */
const LIVE_INDEX = 'billing_subscriptions_live_idx';

/** The statuses the live index covers, as SQL (constants, never user input). */
const LIVE_SQL = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

/** The subscription's price snapshot, kept in its own columns so a catalog change never rewrites it. */
const toPriceSnapshot = rowMapper<Omit<PriceSnapshot, 'quantity'>>({
  id: ['price_id', read.text],
  planId: ['plan_id', read.text],
  amount: read.number,
  currency: read.text,
  interval: read.as<BillingInterval>(),
});

const toSubscriptionFields = rowMapper<Omit<Subscription, 'price'>>({
  id: read.text,
  status: read.as<SubscriptionStatus>(),
  currentPeriodStart: read.date,
  currentPeriodEnd: read.date,
  billingCycleAnchor: read.date,
  cancelAtPeriodEnd: read.bool,
  canceledAt: read.dateOrNull,
  endedAt: read.dateOrNull,
  trialStart: read.dateOrNull,
  trialEnd: read.dateOrNull,
  pausedAt: read.dateOrNull,
  pastDueAt: read.dateOrNull,
  createdAt: read.date,
});

/** The domain subscription's columns of billing_subscriptions (unqualified), and its reader. */
export const subscriptionColumns = `${toSubscriptionFields.columns}, ${toPriceSnapshot.columns}, quantity`;
/** A per-seat subscription's snapshot holds its quantity (the column is null for a flat price). */
const priceOf = (row: object): PriceSnapshot => {
  const quantity = (row as { quantity?: unknown }).quantity;
  const price = toPriceSnapshot(row);
  return typeof quantity === 'number' ? { ...price, quantity } : price;
};
export const toSubscription = (row: object): Subscription => ({ ...toSubscriptionFields(row), price: priceOf(row) });

/** The card summary, whitelisted both ways (never more than brand, last 4 and expiry). */
const summaryOf = (m: PaymentMethodSummary): PaymentMethodSummary => ({
  id: m.id,
  brand: m.brand,
  last4: m.last4,
  expMonth: m.expMonth,
  expYear: m.expYear,
});
const paymentMethod: Read<PaymentMethodSummary | null> = (v) => {
  if (v === null || typeof v !== 'object') return null;
  const m = v as Record<string, unknown>;
  return { id: String(m.id), brand: String(m.brand), last4: String(m.last4), expMonth: Number(m.expMonth), expYear: Number(m.expYear) };
};

const toRecordFields = rowMapper<Omit<BillingSubscription, keyof Subscription | 'subject'>>({
  projectId: read.text,
  processor: read.as<ProcessorKind>(),
  processorSubscriptionId: read.text,
  customerId: read.text,
  paymentMethod: ['payment_method', paymentMethod],
  updatedAt: read.date,
});

const columns = `${subscriptionColumns}, ${toRecordFields.columns}, ${subjectColumns}`;
const toBillingSubscription = (row: object): BillingSubscription => ({ ...toSubscription(row), ...toRecordFields(row), subject: subjectOf(row) });

export class PostgresSubscriptionStore implements SubscriptionStore {
  constructor(private readonly db: Database) {}

  async findLive(projectId: string, subject: BillingSubject): Promise<BillingSubscription | null> {
    if (!isUuid(projectId) || !isUuid(subject.id)) return null;
    const rows = await this.db.query(`select ${columns} from billing_subscriptions where project_id = ? and subject_id = ? and status in (${LIVE_SQL})`, [
      projectId,
      subject.id,
    ]);
    return rows.length > 0 ? toBillingSubscription(rows[0]!) : null;
  }

  async findById(projectId: string, id: string): Promise<BillingSubscription | null> {
    if (!isUuid(projectId) || !isUuid(id)) return null;
    const rows = await this.db.query(`select ${columns} from billing_subscriptions where id = ? and project_id = ?`, [id, projectId]);
    return rows.length > 0 ? toBillingSubscription(rows[0]!) : null;
  }

  findByProcessorId(processor: ProcessorKind, processorSubscriptionId: string): Promise<BillingSubscription | null> {
    return this.byProcessorId(processor, processorSubscriptionId, '');
  }

  findByProcessorIdForUpdate(processor: ProcessorKind, processorSubscriptionId: string): Promise<BillingSubscription | null> {
    return this.byProcessorId(processor, processorSubscriptionId, ' for update');
  }

  private async byProcessorId(processor: ProcessorKind, processorSubscriptionId: string, lock: '' | ' for update'): Promise<BillingSubscription | null> {
    const rows = await this.db.query(`select ${columns} from billing_subscriptions where processor = ? and processor_subscription_id = ?${lock}`, [
      processor,
      processorSubscriptionId,
    ]);
    return rows.length > 0 ? toBillingSubscription(rows[0]!) : null;
  }

  /**
   * Insert, or update the row with this id (in the same project; who it belongs to and when it was
   * created never change). A second live subscription for the subject (a user or an organization)
   * is refused by the partial unique index, also between concurrent writers: 'live_conflict'.
   */
  async save(s: BillingSubscription): Promise<'saved' | 'live_conflict'> {
    const saved = await writeUnlessTaken(this.db, LIVE_INDEX, async () => {
      const rows = await this.db.query(
        `insert into billing_subscriptions (id, project_id, user_id, organization_id, processor, processor_subscription_id, customer_id, plan_id, price_id,
           amount, quantity, currency, interval, status, cancel_at_period_end, current_period_start, current_period_end, billing_cycle_anchor,
           canceled_at, ended_at, trial_start, trial_end, paused_at, past_due_at, payment_method, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?)
         on conflict (id) do update set
           processor = excluded.processor, processor_subscription_id = excluded.processor_subscription_id,
           customer_id = excluded.customer_id, plan_id = excluded.plan_id, price_id = excluded.price_id, amount = excluded.amount,
           quantity = excluded.quantity, currency = excluded.currency, interval = excluded.interval, status = excluded.status,
           cancel_at_period_end = excluded.cancel_at_period_end, current_period_start = excluded.current_period_start,
           current_period_end = excluded.current_period_end, billing_cycle_anchor = excluded.billing_cycle_anchor,
           canceled_at = excluded.canceled_at, ended_at = excluded.ended_at, trial_start = excluded.trial_start,
           trial_end = excluded.trial_end, paused_at = excluded.paused_at, past_due_at = excluded.past_due_at,
           payment_method = excluded.payment_method, updated_at = excluded.updated_at
         where billing_subscriptions.project_id = excluded.project_id and billing_subscriptions.user_id is not distinct from excluded.user_id
           and billing_subscriptions.organization_id is not distinct from excluded.organization_id
         returning id`,
        [
          s.id,
          s.projectId,
          ...subjectValues(s.subject),
          s.processor,
          s.processorSubscriptionId,
          s.customerId,
          s.price.planId,
          s.price.id,
          s.price.amount,
          s.price.quantity ?? null,
          s.price.currency,
          s.price.interval,
          s.status,
          s.cancelAtPeriodEnd,
          s.currentPeriodStart,
          s.currentPeriodEnd,
          s.billingCycleAnchor,
          s.canceledAt,
          s.endedAt,
          s.trialStart,
          s.trialEnd,
          s.pausedAt,
          s.pastDueAt,
          s.paymentMethod === null ? null : JSON.stringify(summaryOf(s.paymentMethod)),
          s.createdAt,
          s.updatedAt,
        ],
      );
      if (rows.length === 0) throw new Error(`Subscription ${s.id} is recorded for another project or subject`);
    });
    return saved ? 'saved' : 'live_conflict';
  }

  async seatLedger(projectId: string, id: string): Promise<SeatLedger> {
    if (!isUuid(projectId) || !isUuid(id)) return { paid: null, periodStart: null, changes: 0 };
    const rows = await this.db.query<{ seats_paid: number | null; seats_paid_period_start: Date | null; seat_changes: number }>(
      'select seats_paid, seats_paid_period_start, seat_changes from billing_subscriptions where id = ? and project_id = ?',
      [id, projectId],
    );
    const row = rows[0];
    return row
      ? { paid: row.seats_paid, periodStart: read.dateOrNull(row.seats_paid_period_start), changes: row.seat_changes }
      : { paid: null, periodStart: null, changes: 0 };
  }

  async saveSeatLedger(projectId: string, id: string, ledger: SeatLedger): Promise<void> {
    await this.db.query('update billing_subscriptions set seats_paid = ?, seats_paid_period_start = ?, seat_changes = ? where id = ? and project_id = ?', [
      ledger.paid,
      ledger.periodStart,
      ledger.changes,
      id,
      projectId,
    ]);
  }

  /**
   * Newest first (read in order from billing_subscriptions_subject_idx with a subject); `after` (a
   * subscription id): the page after it, by its place in this order (an unknown id: an empty page).
   * `status`: see `statusCondition`.
   */
  async list(projectId: string, filter: { subject?: BillingSubject; status?: string; limit: number; after?: string }): Promise<BillingSubscription[]> {
    if (filter.subject !== undefined && !isUuid(filter.subject.id)) return [];
    const rows = await newestFirstPage(this.db, {
      table: 'billing_subscriptions',
      columns,
      tieBreaker: 'id',
      projectId,
      conditions: [
        ...(filter.subject === undefined ? [] : [['subject_id = ?', filter.subject.id] as const]),
        ...(filter.status === undefined ? [] : [statusCondition(filter.status)]),
      ],
      limit: filter.limit,
      after: filter.after,
    });
    return rows.map(toBillingSubscription);
  }
}

/**
 * `status` is a status, or `pending_cancellation`: a cancellation scheduled at period end on an
 * active, trialing or past-due subscription (the state `subscriptionState` shows). Any other status
 * filters by the stored status as is.
 */
function statusCondition(status: string): PageCondition {
  return status === 'pending_cancellation' ? [`cancel_at_period_end and status in ('active', 'trialing', 'past_due')`] : ['status = ?', status];
}
