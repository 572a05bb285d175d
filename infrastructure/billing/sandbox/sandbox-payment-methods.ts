import { type ProcessorFailure, type ProcessorResult, processorFailed, processorOk } from '../../../application/billing/payment-processor';
import type { PaymentOutcome } from '../../../domain/billing/subscription';
import type { SandboxContext } from './sandbox-context';
import { declined } from './sandbox-errors';
import type { CustomerData, PaymentMethodData, SandboxObject } from './sandbox-objects';
import { type Decline, GENERIC_DECLINE, TEST_PAYMENT_METHODS, isTestPaymentMethod } from './test-cards';

export interface CardCharge {
  payment: PaymentOutcome;
  decline: Decline | null;
}

/** Cards: Stripe's test payment methods cloned onto a customer, and what charging one gives. */
export class SandboxPaymentMethods {
  constructor(private readonly ctx: SandboxContext) {}

  /**
   * The card for a customer: a test payment method (`pm_card_visa`) is cloned into a new
   * `pm_sbx_...` (to attach; not yet stored), a `pm_sbx_...` of this customer is used as it is.
   * A card declined on attach answers `card_declined`.
   */
  async resolveCard(
    projectId: string,
    customerId: string,
    paymentMethodId: string,
    now: Date,
  ): Promise<ProcessorResult<{ id: string; data: PaymentMethodData; attach: boolean }, ProcessorFailure>> {
    if (isTestPaymentMethod(paymentMethodId)) {
      const card = TEST_PAYMENT_METHODS[paymentMethodId]!;
      if (card.declineOnAttach) return declined(card.declineOnAttach);
      const data: PaymentMethodData = {
        source: paymentMethodId,
        brand: card.brand,
        last4: card.number.slice(-4),
        expMonth: 12,
        expYear: now.getUTCFullYear() + 1,
        declineOnCharge: card.declineOnCharge ?? null,
      };
      return processorOk({ id: this.ctx.newId('payment_method'), data, attach: true });
    }
    const stored = await this.ctx.objects.get<PaymentMethodData>(projectId, 'payment_method', paymentMethodId);
    if (!stored) return processorFailed({ kind: 'invalid_payment_method', message: `No such PaymentMethod: '${paymentMethodId}'` });
    if (stored.parentId !== customerId) {
      return processorFailed({
        kind: 'invalid_payment_method',
        message: 'The payment method you provided has already been attached to a customer.',
      });
    }
    return processorOk({ id: stored.id, data: stored.data, attach: false });
  }

  /** Stores a cloned card on the customer and makes it the customer's default. */
  async attachCard(
    projectId: string,
    customer: SandboxObject<CustomerData>,
    card: { id: string; data: PaymentMethodData; attach: boolean },
    now: Date,
  ): Promise<SandboxObject<CustomerData>> {
    if (card.attach) {
      await this.ctx.objects.insert({
        id: card.id,
        projectId,
        kind: 'payment_method',
        parentId: customer.id,
        data: card.data,
        dueAt: null,
        createdAt: now,
        updatedAt: now,
      });
    }
    const updated = { ...customer, data: { ...customer.data, defaultPaymentMethodId: card.id }, updatedAt: now };
    await this.ctx.objects.update(updated);
    return updated;
  }

  async cardOf(projectId: string, paymentMethodId: string | null): Promise<SandboxObject<PaymentMethodData> | null> {
    return paymentMethodId === null ? null : this.ctx.objects.get<PaymentMethodData>(projectId, 'payment_method', paymentMethodId);
  }
}

/** What charging this card gives: test cards decide; no card is a decline. */
export function chargeCard(card: PaymentMethodData | null): CardCharge {
  if (card === null) return { payment: 'failed', decline: GENERIC_DECLINE };
  return card.declineOnCharge ? { payment: 'failed', decline: card.declineOnCharge } : { payment: 'paid', decline: null };
}
