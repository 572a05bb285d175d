import type Stripe from 'stripe';
import type { ProcessorRefund, RefundReason } from '../../../application/billing/payment-processor';
import { RefusedBeforeStripe, requireId } from './stripe-errors';
import { stepKey } from './stripe-keys';
import { idOf, toDate } from './stripe-mapping';

/**
 * Refunds at Stripe (`POST /v1/refunds`): a paid invoice's payment, in full or in part. Throws what
 * Stripe refused; `StripeProcessor` turns it into the port's failure.
 */
export class StripeRefunds {
  constructor(private readonly stripe: Stripe) {}

  /** basil: an invoice's payments are InvoicePayments; the paid one names its PaymentIntent. */
  async refundInvoice(invoiceId: string, input: { amount: number; reason: RefundReason; idempotencyKey: string }): Promise<ProcessorRefund> {
    const payments = await this.stripe.invoicePayments.list({ invoice: requireId(invoiceId, 'invoice'), status: 'paid', limit: 10 });
    const paymentIntent = payments.data.map((p) => idOf(p.payment.payment_intent as string | { id: string } | undefined)).find((id) => id !== null);
    if (!paymentIntent) throw new RefusedBeforeStripe({ kind: 'invalid_request', message: `Invoice ${invoiceId} has no payment to refund` });
    const refund = await this.stripe.refunds.create(
      { payment_intent: paymentIntent, amount: input.amount, reason: input.reason, metadata: { tollgate_invoice_id: invoiceId } },
      { idempotencyKey: stepKey(input.idempotencyKey, 'refund') },
    );
    return { id: refund.id, invoiceId, amount: refund.amount, currency: refund.currency, createdAt: toDate(refund.created) };
  }
}
