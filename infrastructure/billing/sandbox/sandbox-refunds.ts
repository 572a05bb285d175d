import { type ProcessorResult, processorFailed, processorOk } from '../../../application/billing/payment-processor';
import { toWholeSeconds } from '../../../domain/billing/periods';
import type { SandboxContext } from './sandbox-context';
import { invalidRequest, noSuch } from './sandbox-errors';
import type { InvoiceData, RefundData } from './sandbox-objects';

/** Refunds of a paid invoice's payment. */
export class SandboxRefunds {
  constructor(private readonly ctx: SandboxContext) {}

  /**
   * Refunds `amount` of a paid invoice's payment, as Stripe's `POST /v1/refunds`: at most what is
   * left unrefunded; the invoice keeps its status and records the amount refunded.
   */
  refundInvoice(
    projectId: string,
    invoiceId: string,
    input: { amount: number; reason: string; idempotencyKey: string },
  ): Promise<ProcessorResult<{ id: string; invoiceId: string; amount: number; currency: string; createdAt: Date }>> {
    const params = { invoiceId, amount: input.amount, reason: input.reason };
    return this.ctx.idempotent(projectId, input.idempotencyKey, 'refunds.create', params, async (now) => {
      const invoice = await this.ctx.objects.get<InvoiceData>(projectId, 'invoice', invoiceId, { lock: true });
      if (!invoice) return noSuch('invoice', invoiceId);
      const refunded = invoice.data.amountRefunded ?? 0;
      const left = invoice.data.status === 'paid' ? invoice.data.amountPaid - refunded : 0;
      if (left <= 0) {
        return processorFailed(
          invalidRequest(refunded > 0 ? `Invoice ${invoiceId} has already been refunded.` : `Invoice ${invoiceId} has no payment to refund.`),
        );
      }
      if (!Number.isSafeInteger(input.amount) || input.amount <= 0 || input.amount > left) {
        return processorFailed(invalidRequest(`Refund amount (${input.amount}) is greater than unrefunded amount on charge (${left}).`));
      }
      await this.ctx.objects.update({ ...invoice, data: { ...invoice.data, amountRefunded: refunded + input.amount }, updatedAt: now });
      const id = this.ctx.newId('refund');
      const data: RefundData = { invoiceId, amount: input.amount, currency: invoice.data.currency, reason: input.reason, status: 'succeeded' };
      await this.ctx.objects.insert({ id, projectId, kind: 'refund', parentId: invoiceId, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk({ id, invoiceId, amount: input.amount, currency: invoice.data.currency, createdAt: toWholeSeconds(now) });
    });
  }
}
