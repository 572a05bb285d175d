import type { BillingInvoice, InvoiceStore } from '../../application/billing/billing.store';
import type { ProcessorInvoiceLine, ProcessorKind } from '../../application/billing/payment-processor';
import type { InvoiceLineKind, InvoiceReason, InvoiceStatus } from '../../domain/billing/invoice';
import type { BillingSubject } from '../../domain/billing/subject';
import type { Database } from './database';
import { newestFirstPage } from './newest-first-page';
import { subjectColumns, subjectOf, subjectValues } from './postgres-billing-customer.store';
import { type Read, isUuid, read, rowMapper } from './rows';

/** A line as stored in the jsonb array: the same fields, dates as ISO strings. */
const lineOf = (l: ProcessorInvoiceLine): ProcessorInvoiceLine => ({
  kind: l.kind,
  description: l.description,
  priceId: l.priceId,
  quantity: l.quantity,
  amount: l.amount,
  periodStart: l.periodStart,
  periodEnd: l.periodEnd,
});

const lines: Read<ProcessorInvoiceLine[]> = (v) =>
  (Array.isArray(v) ? (v as Array<Record<string, unknown>>) : []).map((l) => ({
    kind: l.kind as InvoiceLineKind,
    description: String(l.description ?? ''),
    priceId: read.textOrNull(l.priceId),
    quantity: typeof l.quantity === 'number' ? l.quantity : null,
    amount: read.number(l.amount),
    periodStart: read.date(l.periodStart),
    periodEnd: read.date(l.periodEnd),
  }));

const toInvoiceFields = rowMapper<Omit<BillingInvoice, 'subject'>>({
  id: read.text,
  projectId: read.text,
  subscriptionId: read.textOrNull,
  processor: read.as<ProcessorKind>(),
  processorInvoiceId: read.text,
  status: read.as<InvoiceStatus>(),
  reason: read.as<InvoiceReason | 'manual'>(),
  currency: read.text,
  subtotal: read.number,
  amountDue: read.number,
  amountPaid: read.number,
  attemptCount: read.number,
  lines,
  periodStart: read.date,
  periodEnd: read.date,
  hostedUrl: read.textOrNull,
  createdAt: read.date,
  paidAt: read.dateOrNull,
  amountRefunded: read.number,
  refundedAt: read.dateOrNull,
  updatedAt: read.date,
});

const columns = `${toInvoiceFields.columns}, ${subjectColumns}`;
const toInvoice = (row: object): BillingInvoice => ({ ...toInvoiceFields(row), subject: subjectOf(row) });

export class PostgresInvoiceStore implements InvoiceStore {
  constructor(private readonly db: Database) {}

  async findByProcessorIds(processor: ProcessorKind, processorInvoiceIds: readonly string[]): Promise<BillingInvoice[]> {
    if (processorInvoiceIds.length === 0) return [];
    const list = processorInvoiceIds.map(() => '?').join(', ');
    const rows = await this.db.query(`select ${columns} from billing_invoices where processor = ? and processor_invoice_id in (${list})`, [
      processor,
      ...processorInvoiceIds,
    ]);
    return rows.map(toInvoice);
  }

  /**
   * Insert, or update the invoice the processor knows by this id. The existing row keeps its id,
   * project, subject and creation time, and its link to a subscription unless a new one is given;
   * the rest follows the processor, except the refunds Tollgate recorded, which only grow. An invoice of
   * another project is never touched (that is a bug: it throws).
   */
  async save(i: BillingInvoice): Promise<void> {
    const rows = await this.db.query(
      `insert into billing_invoices (id, project_id, user_id, organization_id, subscription_id, processor, processor_invoice_id, status, reason,
         currency, subtotal, amount_due, amount_paid, attempt_count, lines, period_start, period_end, hosted_url, created_at, paid_at,
         amount_refunded, refunded_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (processor, processor_invoice_id) do update set
         subscription_id = coalesce(excluded.subscription_id, billing_invoices.subscription_id), status = excluded.status,
         reason = excluded.reason, currency = excluded.currency,
         subtotal = excluded.subtotal, amount_due = excluded.amount_due, amount_paid = excluded.amount_paid,
         attempt_count = excluded.attempt_count, lines = excluded.lines, period_start = excluded.period_start,
         period_end = excluded.period_end, hosted_url = excluded.hosted_url, paid_at = excluded.paid_at,
         amount_refunded = greatest(billing_invoices.amount_refunded, excluded.amount_refunded),
         refunded_at = coalesce(billing_invoices.refunded_at, excluded.refunded_at), updated_at = excluded.updated_at
       where billing_invoices.project_id = excluded.project_id
       returning id`,
      [
        i.id,
        i.projectId,
        ...subjectValues(i.subject),
        i.subscriptionId,
        i.processor,
        i.processorInvoiceId,
        i.status,
        i.reason,
        i.currency,
        i.subtotal,
        i.amountDue,
        i.amountPaid,
        i.attemptCount,
        JSON.stringify(i.lines.map(lineOf)),
        i.periodStart,
        i.periodEnd,
        i.hostedUrl,
        i.createdAt,
        i.paidAt,
        i.amountRefunded,
        i.refundedAt,
        i.updatedAt,
      ],
    );
    if (rows.length === 0) throw new Error(`Invoice ${i.processor}/${i.processorInvoiceId} is recorded for another project`);
  }

  /** Read in order from billing_invoices_subject_idx. */
  async listForSubject(projectId: string, subject: BillingSubject, limit: number): Promise<BillingInvoice[]> {
    if (!isUuid(projectId) || !isUuid(subject.id)) return [];
    const rows = await this.db.query(
      `select ${columns} from billing_invoices where project_id = ? and subject_id = ?
        order by created_at desc, seq desc limit ?`,
      [projectId, subject.id, Math.max(0, Math.floor(limit))],
    );
    return rows.map(toInvoice);
  }

  /**
   * Newest first, as `listForSubject`; read in order from billing_invoices_project_idx (or the
   * subject index with a subject). `after` (an invoice id): the page after that invoice, by its
   * place in this order; an id of no invoice of the project gives an empty page.
   */
  async list(projectId: string, filter: { subject?: BillingSubject; status?: InvoiceStatus; limit: number; after?: string }): Promise<BillingInvoice[]> {
    if (filter.subject !== undefined && !isUuid(filter.subject.id)) return [];
    const rows = await newestFirstPage(this.db, {
      table: 'billing_invoices',
      columns,
      tieBreaker: 'seq',
      projectId,
      conditions: [
        ...(filter.subject === undefined ? [] : [['subject_id = ?', filter.subject.id] as const]),
        ...(filter.status === undefined ? [] : [['status = ?', filter.status] as const]),
      ],
      limit: filter.limit,
      after: filter.after,
    });
    return rows.map(toInvoice);
  }
}
