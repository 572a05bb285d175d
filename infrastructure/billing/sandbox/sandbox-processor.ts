import type {
  PackCheckout,
  PackCheckoutInput,
  ChangePreview,
  CheckoutInput,
  CreateSubscriptionInput,
  PaymentProcessor,
  ProcessorAccount,
  ProcessorFailure,
  ProcessorMetadata,
  ProcessorRefund,
  ProcessorResult,
  ProcessorSnapshot,
  RefundReason,
} from '../../../application/billing/payment-processor';
import { type MeteredPriceInput, type UsageReport, processorOk } from '../../../application/billing/payment-processor';
import type { Plan, Price } from '../../../domain/billing/catalog';
import { SandboxEngine, type SandboxDependencies } from './sandbox-engine';

/**
 * The built-in sandbox payment processor for one project: a small Stripe that never moves money,
 * so a fresh Tollgate sells subscriptions without a Stripe account. It answers the port as the
 * Stripe adapter answers it against Stripe (the same contract suite runs against both:
 * test/integration/payment-processor.suite.ts), with Stripe's test payment methods
 * (`pm_card_visa` succeeds, `pm_card_chargeDeclined` is declined when attached,
 * `pm_card_chargeCustomerFail` attaches and then every charge fails). Its time is the project's
 * sandbox clock (`SandboxControl.advanceClock`), and renewals, trial ends and scheduled
 * cancellations happen when `SandboxControl.runDue` runs.
 *
 * Calls run in the caller's request or job context (`Database.withContext`), as the stores do.
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly kind = 'sandbox' as const;
  private readonly engine: SandboxEngine;
  private readonly projectId: string;

  constructor(deps: SandboxDependencies & { projectId: string }) {
    this.engine = new SandboxEngine(deps);
    this.projectId = deps.projectId;
  }

  async verifyCredentials(): Promise<ProcessorResult<ProcessorAccount>> {
    return processorOk({ accountId: null, livemode: false });
  }

  upsertProduct(plan: Plan, productId: string | null, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    return this.engine.catalog.upsertProduct(this.projectId, plan, productId, metadata);
  }

  createPrice(price: Price, productId: string, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    return this.engine.catalog.createPrice(this.projectId, price, productId, metadata);
  }

  archivePrice(priceId: string): Promise<ProcessorResult<void>> {
    return this.engine.catalog.archivePrice(this.projectId, priceId);
  }

  createCustomer(input: { email: string | null; name: string | null; metadata: ProcessorMetadata; idempotencyKey: string }): Promise<ProcessorResult<string>> {
    return this.engine.customers.createCustomer(this.projectId, input);
  }

  createSetupIntent(customerId: string, idempotencyKey: string): Promise<ProcessorResult<{ id: string; clientSecret: string }>> {
    return this.engine.customers.createSetupIntent(this.projectId, customerId, idempotencyKey);
  }

  findPromotionCode(code: string): Promise<ProcessorResult<string | null>> {
    return this.engine.promotionCodes.findPromotionCode(this.projectId, code);
  }

  createCheckout(input: CheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>> {
    return this.engine.checkout.createCheckout(this.projectId, input);
  }

  createSubscription(input: CreateSubscriptionInput): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    const params = {
      customerId: input.customerId,
      priceId: input.priceId,
      paymentMethodId: input.paymentMethodId,
      trialDays: input.trialDays,
      quantity: input.quantity ?? 1,
      metadata: { ...input.metadata },
    };
    return this.engine.context.idempotent(this.projectId, input.idempotencyKey, 'subscriptions.create', params, async (now) => {
      const created = await this.engine.subscriptions.subscribe(
        this.projectId,
        { ...params, percentOff: null, checkoutId: null, keepCardOnDecline: true },
        now,
      );
      if (!created.ok) return created;
      return processorOk((await this.engine.subscriptions.snapshot(this.projectId, created.value))!);
    });
  }

  previewChange(subscriptionId: string, priceId: string): Promise<ProcessorResult<ChangePreview>> {
    return this.engine.subscriptionChanges.previewChange(this.projectId, subscriptionId, priceId);
  }

  changeSubscription(subscriptionId: string, priceId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.engine.subscriptionChanges.changeSubscription(this.projectId, subscriptionId, priceId, idempotencyKey);
  }

  previewQuantity(subscriptionId: string, quantity: number): Promise<ProcessorResult<ChangePreview>> {
    return this.engine.subscriptionChanges.previewQuantity(this.projectId, subscriptionId, quantity);
  }

  updateQuantity(
    subscriptionId: string,
    quantity: number,
    options: { prorate: boolean; idempotencyKey: string },
  ): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.engine.subscriptionChanges.updateQuantity(this.projectId, subscriptionId, quantity, options);
  }

  cancelSubscription(subscriptionId: string, options: { atPeriodEnd: boolean; idempotencyKey: string }): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.engine.subscriptionChanges.cancelSubscription(this.projectId, subscriptionId, options.atPeriodEnd, options.idempotencyKey);
  }

  pauseSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.engine.subscriptionChanges.pauseSubscription(this.projectId, subscriptionId, idempotencyKey);
  }

  resumeSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.engine.subscriptionChanges.resumeSubscription(this.projectId, subscriptionId, idempotencyKey);
  }

  endTrial(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.engine.subscriptionChanges.endTrial(this.projectId, subscriptionId, idempotencyKey);
  }

  refundInvoice(invoiceId: string, input: { amount: number; reason: RefundReason; idempotencyKey: string }): Promise<ProcessorResult<ProcessorRefund>> {
    return this.engine.refunds.refundInvoice(this.projectId, invoiceId, input);
  }

  async getSubscription(subscriptionId: string): Promise<ProcessorResult<ProcessorSnapshot | null>> {
    return processorOk(await this.engine.subscriptions.snapshot(this.projectId, subscriptionId));
  }

  listSubscriptionIds(customerId: string): Promise<ProcessorResult<string[]>> {
    return this.engine.subscriptions.listSubscriptionIds(this.projectId, customerId);
  }

  checkoutSubscriptionId(checkoutId: string): Promise<ProcessorResult<string | null>> {
    return this.engine.checkout.checkoutSubscriptionId(this.projectId, checkoutId);
  }

  ensureMeteredPrice(input: MeteredPriceInput): Promise<ProcessorResult<string>> {
    return this.engine.catalog.ensureMeteredPrice(this.projectId, input);
  }

  reportUsage(input: UsageReport): Promise<ProcessorResult<void>> {
    return this.engine.subscriptions.reportUsage(this.projectId, input);
  }

  createPackCheckout(input: PackCheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>> {
    return this.engine.checkout.createPackCheckout(this.projectId, input);
  }

  getPackCheckout(checkoutId: string): Promise<ProcessorResult<PackCheckout | null>> {
    return this.engine.checkout.getPackCheckout(this.projectId, checkoutId);
  }
}
