import { type ProcessorFailure, type ProcessorResult, processorFailed } from '../../../application/billing/payment-processor';
import type { SandboxCheckoutView, SandboxControl } from '../../../application/billing/processors';
import { isUuid } from '../../persistence/rows';
import { SandboxEngine, type SandboxDependencies } from './sandbox-engine';
import { testPaymentMethodFor } from './test-cards';

/**
 * The sandbox's controls across projects: each project's clock (like a Stripe test clock), the
 * due work a scheduled job runs (renewals charged to the card on file, trial ends, scheduled
 * cancellations, grace-period ends), the checkout page's session and payment, and promotion codes.
 */
export class SandboxControlService implements SandboxControl {
  private readonly engine: SandboxEngine;

  constructor(deps: SandboxDependencies) {
    this.engine = new SandboxEngine(deps);
  }

  now(projectId: string): Promise<Date> {
    return this.engine.context.now(projectId);
  }

  /** Moves the clock only; the caller runs `runDue` to apply what fell due. */
  advanceClock(projectId: string, seconds: number): Promise<Date> {
    if (!isUuid(projectId)) throw new RangeError(`Not a project id: ${projectId}`);
    return this.engine.clock.advanceClock(projectId, seconds);
  }

  runDue(projectId?: string): Promise<Array<{ projectId: string; subscriptionId: string }>> {
    return this.engine.clock.runDue(projectId);
  }

  getCheckout(checkoutId: string): Promise<SandboxCheckoutView | null> {
    return this.engine.checkout.getCheckout(checkoutId);
  }

  /** `card`: a test payment method (`pm_card_visa`) or a test card number (4242 4242 4242 4242). */
  completeCheckout(
    checkoutId: string,
    card: string,
  ): Promise<ProcessorResult<{ projectId: string; subscriptionId: string | null; successUrl: string }, ProcessorFailure>> {
    const paymentMethodId = testPaymentMethodFor(card);
    if (paymentMethodId === null) {
      return Promise.resolve(processorFailed({ kind: 'invalid_payment_method', message: 'Your card number is incorrect.' }));
    }
    return this.engine.checkout.completeCheckout(checkoutId, paymentMethodId);
  }

  createPromotionCode(projectId: string, code: string, percentOff: number): Promise<void> {
    return this.engine.promotionCodes.createPromotionCode(projectId, code, percentOff);
  }
}
