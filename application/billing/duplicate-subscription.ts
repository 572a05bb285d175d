import type { BillingSubject } from '../../domain/billing/subject';
import { type AuditEntry, SYSTEM_ACTOR } from '../../domain/audit';
import { auditEntry } from '../audit/audit-log';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { BillingInvoice } from './billing.store';
import type { BillingDeps } from './deps';
import { invoiceView, toJson } from './views';
import type { PaymentProcessor, ProcessorRefund, ProcessorResult, ProcessorSnapshot } from './payment-processor';
import { type RecordOutcome, buildEvent, makeRecordSnapshot } from './record-snapshot';

export type SettleDuplicateDeps = Pick<
  BillingDeps,
  'uow' | 'subscriptions' | 'invoices' | 'catalog' | 'customers' | 'events' | 'outbox' | 'clock' | 'crypto' | 'logger' | 'audit'
>;

/**
 * A subscription that would be the subject's second live one (two checkouts both completed, or a
 * subscribe retried without its key while the processor's webhook recorded the first): the subject
 * must never pay twice. Every paid invoice of it is refunded in full at the processor (Stripe:
 * `POST /v1/refunds` on the invoice's payment), then it is canceled now, then it is recorded
 * canceled with the refunds on its invoices (`amountRefunded`), one `invoice.refunded` event and
 * one `billing.refund` audit entry per refund, in one transaction. The duplicate causes no
 * subscription event (its creation and cancellation are no change to the subject's subscription);
 * its charge shows as `invoice.paid` followed by `invoice.refunded`.
 *
 * Runs under the subject's billing lease (the caller holds it). Every processor write has a key
 * derived from the processor's ids, so a retry (the webhook again, after a failure here) replays
 * the same refunds and cancellation instead of making new ones. A failure at the processor answers
 * the failure: the duplicate is still live there, and the next webhook retries the whole.
 */
export function makeSettleDuplicate(deps: SettleDuplicateDeps) {
  const recordSnapshot = makeRecordSnapshot(deps);
  return async function settleDuplicate(
    projectId: string,
    processor: PaymentProcessor,
    snapshot: ProcessorSnapshot,
    subject: BillingSubject,
  ): Promise<ProcessorResult<RecordOutcome>> {
    const processorSubscriptionId = snapshot.subscription.id;
    const refunds: ProcessorRefund[] = [];
    for (const invoice of snapshot.invoices) {
      if (invoice.status !== 'paid' || invoice.amountPaid <= 0) continue;
      const refunded = await processor.refundInvoice(invoice.id, {
        amount: invoice.amountPaid,
        reason: 'duplicate',
        idempotencyKey: `tollgate-duplicate-refund-${invoice.id}`,
      });
      if (!refunded.ok) {
        deps.logger.error(
          { projectId, subscription: processorSubscriptionId, invoice: invoice.id, failure: refunded.failure.kind },
          'billing: refunding a duplicate subscription failed',
        );
        return refunded;
      }
      refunds.push(refunded.value);
    }
    const canceled = await processor.cancelSubscription(processorSubscriptionId, {
      atPeriodEnd: false,
      idempotencyKey: `tollgate-duplicate-${processorSubscriptionId}`,
    });
    if (!canceled.ok) return canceled;

    const audits: AuditEntry[] = [];
    const outcome = await deps.uow.transaction(async (): Promise<RecordOutcome> => {
      const recorded = await recordSnapshot({ projectId, processor: processor.kind, snapshot: canceled.value, subject, duplicate: true });
      if (!recorded.ok) return recorded;
      const known = await deps.invoices.findByProcessorIds(
        processor.kind,
        refunds.map((r) => r.invoiceId),
      );
      const byProcessorId = new Map(known.map((i) => [i.processorInvoiceId, i]));
      const events = [...recorded.events];
      for (const refund of refunds) {
        const invoice = byProcessorId.get(refund.invoiceId);
        if (invoice === undefined) continue;
        const withRefund: BillingInvoice = {
          ...invoice,
          amountRefunded: Math.min(invoice.amountPaid, invoice.amountRefunded + refund.amount),
          refundedAt: refund.createdAt,
          updatedAt: deps.clock.now(),
        };
        await deps.invoices.save(withRefund);
        byProcessorId.set(refund.invoiceId, withRefund);
        const event = buildEvent(deps, {
          projectId,
          type: 'invoice.refunded',
          subject,
          subscriptionId: recorded.subscription.id,
          dedupeKey: `invoice.refunded:${refund.id}`,
          amount: refund.amount,
          currency: refund.currency,
          data: toJson(invoiceView(withRefund)),
        });
        if (!(await deps.events.publish(event))) continue;
        events.push(event);
        audits.push(
          auditEntry(deps.clock.now(), projectId, 'billing.refund', {
            actor: SYSTEM_ACTOR,
            target: { kind: 'subscription', id: recorded.subscription.id },
            ...(subject.kind === 'user' ? { user: subject.id } : {}),
            origin: SYSTEM_ORIGIN,
            details: {
              ...(subject.kind === 'organization' ? { organization_id: subject.id } : {}),
              invoice_id: withRefund.id,
              amount: refund.amount,
              currency: refund.currency,
              reason: 'duplicate',
              processor_refund_id: refund.id,
            },
          }),
        );
      }
      return { ...recorded, events };
    });
    // Once committed: an entry never names a refund whose record rolled back.
    for (const entry of audits) deps.audit.record(entry);
    deps.logger.warn(
      { projectId, subscription: processorSubscriptionId, refunds: refunds.map((r) => ({ id: r.id, amount: r.amount })) },
      'billing: a second live subscription of one subject was refunded and canceled at the processor',
    );
    return { ok: true, value: outcome };
  };
}
