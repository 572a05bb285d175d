import Stripe from 'stripe';
import {
  type PackCheckout,
  type PackCheckoutInput,
  type MeteredPriceInput,
  type UsageReport,
  processorFailed,
  processorOk,
  type ChangePreview,
  type CheckoutInput,
  type CreateSubscriptionInput,
  type PaymentProcessor,
  type ProcessorAccount,
  type ProcessorFailure,
  type ProcessorMetadata,
  type ProcessorRefund,
  type ProcessorResult,
  type ProcessorSnapshot,
  type RefundReason,
  type RequestFailure,
} from '../../../application/billing/payment-processor';
import type { Plan, Price } from '../../../domain/billing/catalog';
import { STRIPE_API_URL_DEFAULT, stripeHostOptions } from './api-url';
import { StripeCatalog } from './stripe-catalog';
import { StripeCustomers } from './stripe-customers';
import { failureOf, requestFailure } from './stripe-errors';
import { StripeRefunds } from './stripe-refunds';
import { StripeSubscriptionChanges } from './stripe-subscription-changes';
import { StripeSubscriptionReads } from './stripe-subscriptions';
import { StripeUsage } from './stripe-usage';
import { tracedStripeHttpClient } from './stripe-trace';

export { stepKey } from './stripe-keys';

export interface StripeProcessorOptions {
  /** The connection's secret (`sk_...`) or restricted (`rk_...`) key. */
  secretKey: string;
  /** STRIPE_API_URL: an origin such as `http://127.0.0.1:12111`; default https://api.stripe.com. */
  apiUrl?: string;
  /** Per request (default 20 s; stripe-node's own default is 80 s). */
  timeoutMs?: number;
  /** stripe-node's retries of connection errors, 409, 429 and 5xx, with the same idempotency key (default 2). */
  maxNetworkRetries?: number;
  /** Tollgate's clock: the time of a pause (Tollgate's mark). Prorations are at Stripe's time. */
  now?: () => Date;
}

/** The API version stripe-node 18.5 pins; Tollgate reads basil shapes only. */
export const STRIPE_API_VERSION = '2025-08-27.basil' as const;

/**
 * One Stripe account (a project's billing connection) behind the `PaymentProcessor` port. The calls
 * live beside it by what they touch: the catalog (stripe-catalog.ts), customers and checkout
 * (stripe-customers.ts), subscriptions as read (stripe-subscriptions.ts) and as changed
 * (stripe-subscription-changes.ts), refunds (stripe-refunds.ts), and usage overage on Billing Meters
 * (stripe-usage.ts). Every write sends an `Idempotency-Key` (stripe-keys.ts); when
 * Stripe answers a replay (`Idempotent-Replayed`), the subscription is read again so the snapshot is
 * current.
 *
 * Failures are values: nothing thrown by stripe-node (or by reading its answers) leaves a method.
 */
export class StripeProcessor implements PaymentProcessor {
  readonly kind = 'stripe' as const;
  private readonly stripe: Stripe;
  private readonly livemode: boolean;
  private readonly catalog: StripeCatalog;
  private readonly customers: StripeCustomers;
  private readonly reads: StripeSubscriptionReads;
  private readonly changes: StripeSubscriptionChanges;
  private readonly refunds: StripeRefunds;
  private readonly usage: StripeUsage;

  constructor(options: StripeProcessorOptions) {
    this.stripe = new Stripe(options.secretKey, {
      apiVersion: STRIPE_API_VERSION,
      ...stripeHostOptions(options.apiUrl ?? STRIPE_API_URL_DEFAULT),
      timeout: options.timeoutMs ?? 20_000,
      maxNetworkRetries: options.maxNetworkRetries ?? 2,
      telemetry: false,
      appInfo: { name: 'Tollgate' },
      httpClient: tracedStripeHttpClient(),
    });
    this.livemode = /^(sk|rk)_live_/.test(options.secretKey);
    this.catalog = new StripeCatalog(this.stripe);
    this.customers = new StripeCustomers(this.stripe);
    this.reads = new StripeSubscriptionReads(this.stripe);
    this.changes = new StripeSubscriptionChanges(this.stripe, this.reads, options.now ?? (() => new Date()));
    this.refunds = new StripeRefunds(this.stripe);
    this.usage = new StripeUsage(this.stripe, Date.now, options.now ?? (() => new Date()));
  }

  verifyCredentials(): Promise<ProcessorResult<ProcessorAccount>> {
    return this.attempt(async () => {
      const account = await this.stripe.accounts.retrieve();
      return { accountId: typeof account.id === 'string' ? account.id : null, livemode: this.livemode };
    });
  }

  upsertProduct(plan: Plan, productId: string | null, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    return this.attempt(() => this.catalog.upsertProduct(plan, productId, metadata));
  }

  createPrice(price: Price, productId: string, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    return this.attempt(() => this.catalog.createPrice(price, productId, metadata));
  }

  archivePrice(priceId: string): Promise<ProcessorResult<void>> {
    return this.attempt(() => this.catalog.archivePrice(priceId));
  }

  createCustomer(input: { email: string | null; name: string | null; metadata: ProcessorMetadata; idempotencyKey: string }): Promise<ProcessorResult<string>> {
    return this.attempt(() => this.customers.createCustomer(input));
  }

  createSetupIntent(customerId: string, idempotencyKey: string): Promise<ProcessorResult<{ id: string; clientSecret: string }>> {
    return this.attempt(() => this.customers.createSetupIntent(customerId, idempotencyKey));
  }

  findPromotionCode(code: string): Promise<ProcessorResult<string | null>> {
    return this.attempt(() => this.customers.findPromotionCode(code));
  }

  createCheckout(input: CheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>> {
    return this.attempt(() => this.customers.createCheckout(input));
  }

  createSubscription(input: CreateSubscriptionInput): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.attemptCharge(() => this.changes.createSubscription(input));
  }

  previewChange(subscriptionId: string, priceId: string): Promise<ProcessorResult<ChangePreview>> {
    return this.attempt(() => this.changes.previewChange(subscriptionId, priceId));
  }

  changeSubscription(subscriptionId: string, priceId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.attemptCharge(() => this.changes.changeSubscription(subscriptionId, priceId, idempotencyKey));
  }

  previewQuantity(subscriptionId: string, quantity: number): Promise<ProcessorResult<ChangePreview>> {
    return this.attempt(() => this.changes.previewQuantity(subscriptionId, quantity));
  }

  updateQuantity(
    subscriptionId: string,
    quantity: number,
    options: { prorate: boolean; idempotencyKey: string },
  ): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.attemptCharge(() => this.changes.updateQuantity(subscriptionId, quantity, options));
  }

  cancelSubscription(subscriptionId: string, options: { atPeriodEnd: boolean; idempotencyKey: string }): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(() => this.changes.cancelSubscription(subscriptionId, options));
  }

  pauseSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(() => this.changes.pauseSubscription(subscriptionId, idempotencyKey));
  }

  resumeSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.attemptCharge(() => this.changes.resumeSubscription(subscriptionId, idempotencyKey));
  }

  endTrial(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(() => this.changes.endTrial(subscriptionId, idempotencyKey));
  }

  refundInvoice(invoiceId: string, input: { amount: number; reason: RefundReason; idempotencyKey: string }): Promise<ProcessorResult<ProcessorRefund>> {
    return this.attempt(() => this.refunds.refundInvoice(invoiceId, input));
  }

  getSubscription(subscriptionId: string): Promise<ProcessorResult<ProcessorSnapshot | null>> {
    return this.attempt(() => this.reads.getSubscription(subscriptionId));
  }

  listSubscriptionIds(customerId: string): Promise<ProcessorResult<string[]>> {
    return this.attempt(() => this.reads.listSubscriptionIds(customerId));
  }

  checkoutSubscriptionId(checkoutId: string): Promise<ProcessorResult<string | null>> {
    return this.attempt(() => this.customers.checkoutSubscriptionId(checkoutId));
  }

  ensureMeteredPrice(input: MeteredPriceInput): Promise<ProcessorResult<string>> {
    return this.attempt(() => this.usage.ensureMeteredPrice(input));
  }

  reportUsage(input: UsageReport): Promise<ProcessorResult<void>> {
    return this.attempt(() => this.usage.reportUsage(input));
  }

  createPackCheckout(input: PackCheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>> {
    return this.attempt(() => this.customers.createPackCheckout(input));
  }

  getPackCheckout(checkoutId: string): Promise<ProcessorResult<PackCheckout | null>> {
    return this.attempt(() => this.customers.getPackCheckout(checkoutId));
  }

  /** Runs one port call that attaches or charges a card: its value, or the failure for whatever went wrong. */
  private async attemptCharge<T>(work: () => Promise<T>): Promise<ProcessorResult<T, ProcessorFailure>> {
    try {
      return processorOk(await work());
    } catch (error) {
      return processorFailed(failureOf(error));
    }
  }

  /** Runs one port call that charges no card: its value, or the failure for whatever went wrong. */
  private async attempt<T>(work: () => Promise<T>): Promise<ProcessorResult<T, RequestFailure>> {
    const done = await this.attemptCharge(work);
    return done.ok ? done : processorFailed(requestFailure(done.failure));
  }
}
