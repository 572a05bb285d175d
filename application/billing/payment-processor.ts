import type { Plan, Price } from '../../domain/billing/catalog';
import type { InvoiceLineKind, InvoiceReason, InvoiceStatus, PaymentMethodSummary } from '../../domain/billing/invoice';
import type { Currency } from '../../domain/billing/money';
import type { BillingInterval } from '../../domain/billing/periods';
import type { SubscriptionStatus } from '../../domain/billing/subscription';

/**
 * The payment processor a project's billing runs on: Stripe (infrastructure/billing/stripe) or the
 * built-in sandbox (infrastructure/billing/sandbox). Use cases speak only this port; no Stripe type
 * crosses it. Every id here is the processor's own (`cus_...`, `sub_...`, `price_...` on Stripe);
 * Tollgate's ids travel as metadata so a webhook can be traced back to the project and user.
 *
 * Writes take an idempotency key derived from Tollgate's own ids, so a retried request (or a
 * retried Tollgate request) never creates a second customer, subscription or charge.
 *
 * Every method answers a failure instead of throwing for what the processor refuses or cannot do (a
 * declined card, an unknown promotion code, an outage); a thrown error is a bug. Only the calls that
 * attach or charge a card answer a `CardFailure`; every other one a `RequestFailure`.
 */
export type ProcessorKind = 'stripe' | 'sandbox';

/**
 * What any call can fail with: the processor refused it as invalid (its message says why), refused
 * the credentials (revoked or wrong key), or did not answer (or answered 5xx / 429 after retries).
 */
export type RequestFailure =
  | { kind: 'invalid_request'; message: string }
  | { kind: 'authentication'; message: string }
  | { kind: 'unavailable'; message: string };

/** What only a call that attaches or charges a card can fail with, beyond a request's failures. */
export type CardFailure =
  /** The card was declined (attaching it, or charging it). `declineCode` as Stripe's (`insufficient_funds`, ...). */
  | { kind: 'card_declined'; message: string; declineCode: string | null }
  /** The payment method does not exist or cannot be used by this customer. */
  | { kind: 'invalid_payment_method'; message: string };

export type ProcessorFailure = RequestFailure | CardFailure;

/**
 * A call's value, or its failure: a `RequestFailure` unless the call attaches or charges a card
 * (`ProcessorResult<T, ProcessorFailure>`: subscribing, changing the price, resuming), so a use case
 * that charges nothing cannot answer a decline.
 */
export type ProcessorResult<T, F extends ProcessorFailure = RequestFailure> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly failure: F };

export const processorOk = <T>(value: T): { readonly ok: true; readonly value: T } => ({ ok: true, value });
export const processorFailed = <F extends ProcessorFailure>(failure: F): { readonly ok: false; readonly failure: F } => ({ ok: false, failure });

/** What Tollgate stores with each processor object, and finds in webhooks. */
export interface ProcessorMetadata {
  projectId: string;
  /** The paying user (a personal subscription)... */
  userId?: string;
  /** ...or the paying organization (a team's): one of the two on a customer, checkout or subscription. */
  organizationId?: string;
  /** Tollgate's id of the subscription (known before the processor creates it). */
  subscriptionId?: string;
  /** Tollgate's id of the price. */
  priceId?: string;
  /** Tollgate's id of a credit pack a one-off checkout sells (docs/usage.md). */
  packId?: string;
}

export interface ProcessorSubscription {
  /** The processor's subscription id. */
  id: string;
  customerId: string;
  /** The processor's price id of its (single) item. */
  priceId: string;
  /** The item's quantity: the seats of a per-seat price, 1 for a flat one. */
  quantity: number;
  status: SubscriptionStatus;
  cancelAtPeriodEnd: boolean;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  billingCycleAnchor: Date;
  canceledAt: Date | null;
  endedAt: Date | null;
  trialStart: Date | null;
  trialEnd: Date | null;
  pausedAt: Date | null;
  /** First failed payment of the current delinquency, when the processor tells; null otherwise. */
  pastDueAt: Date | null;
  paymentMethod: PaymentMethodSummary | null;
  metadata: Partial<ProcessorMetadata>;
  createdAt: Date;
}

export interface ProcessorInvoiceLine {
  kind: InvoiceLineKind;
  description: string;
  /** The processor's price id. */
  priceId: string | null;
  /** The seats a per-seat line is for (its amount is for all of them); null or absent for a flat price's line. */
  quantity?: number | null;
  /** Signed minor units. */
  amount: number;
  periodStart: Date;
  periodEnd: Date;
}

export interface ProcessorInvoice {
  id: string;
  subscriptionId: string | null;
  customerId: string;
  status: InvoiceStatus;
  reason: InvoiceReason | 'manual';
  currency: Currency;
  subtotal: number;
  amountDue: number;
  amountPaid: number;
  /** Failed and successful charge attempts so far. */
  attemptCount: number;
  lines: ProcessorInvoiceLine[];
  periodStart: Date;
  periodEnd: Date;
  /** A page where the customer can see (and pay) it, when the processor has one. */
  hostedUrl: string | null;
  createdAt: Date;
  paidAt: Date | null;
}

/** A subscription as the processor reports it now, with its recent invoices (oldest first). */
export interface ProcessorSnapshot {
  subscription: ProcessorSubscription;
  invoices: ProcessorInvoice[];
}

export interface ChangePreview {
  /** Charged now (after credit); 0 for a downgrade or during a trial. */
  amountDue: number;
  currency: Currency;
  /** Sum of the proration lines; negative when the change credits more than it charges. */
  subtotal: number;
  lines: ProcessorInvoiceLine[];
  /** The billing period after the change. */
  periodStart: Date;
  periodEnd: Date;
}

export interface CheckoutInput {
  customerId: string;
  /** The processor's price id. */
  priceId: string;
  successUrl: string;
  cancelUrl: string;
  /** Seats of a per-seat price; absent: 1. */
  quantity?: number;
  /** The processor's promotion code id (see `findPromotionCode`). */
  promotionCodeId: string | null;
  trialDays: number | null;
  metadata: ProcessorMetadata;
  /** The customer's email, shown on the checkout page. */
  email: string | null;
  idempotencyKey: string;
}

export interface CreateSubscriptionInput {
  customerId: string;
  priceId: string;
  /** Seats of a per-seat price; absent: 1. */
  quantity?: number;
  /** Attached to the customer and made the default for renewals. */
  paymentMethodId: string;
  trialDays: number | null;
  metadata: ProcessorMetadata;
  idempotencyKey: string;
}

/**
 * What an inbound processor event asks Tollgate to do. Tollgate never trusts the event's copy of an
 * object: it re-reads the object from the processor and compares it with its own record, so
 * duplicates and events delivered out of order cannot move the record backwards.
 */
export type ProcessorEventSubject =
  /** Re-read this subscription (created, updated, deleted, paused, an invoice of it paid or failed). */
  | { kind: 'subscription'; subscriptionId: string }
  /** A checkout finished: re-read its subscription (null while the processor has none yet). */
  | { kind: 'checkout_completed'; checkoutId: string; subscriptionId: string | null; customerId: string | null }
  /** Something about a customer's payment (a payment intent, a card updated): re-read their subscriptions. */
  | { kind: 'customer'; customerId: string }
  /** Nothing Tollgate tracks. */
  | { kind: 'ignored' };

export interface ProcessorEvent {
  /** The processor's event id: applied once. */
  id: string;
  /** The processor's event type, for logs (`customer.subscription.updated`). */
  type: string;
  createdAt: Date;
  /** The project named by the event's metadata, when it carries one. */
  projectId: string | null;
  subject: ProcessorEventSubject;
}

/** Why Tollgate refunds: a charge the user must not pay (Stripe's refund reasons). */
export type RefundReason = 'duplicate' | 'requested_by_customer';

export interface ProcessorRefund {
  /** The processor's refund id (`re_...`). */
  id: string;
  /** The processor's invoice id. */
  invoiceId: string;
  /** Minor units refunded by this refund. */
  amount: number;
  currency: Currency;
  createdAt: Date;
}

export interface ProcessorAccount {
  /** Processor account id, when it has one (`acct_...`). */
  accountId: string | null;
  livemode: boolean;
}

export interface PaymentProcessor {
  readonly kind: ProcessorKind;

  /** Checks the credentials with a harmless call (Stripe: retrieve the account). */
  verifyCredentials(): Promise<ProcessorResult<ProcessorAccount>>;

  /** Creates the plan's product, or updates it when `productId` is set; answers the product id. */
  upsertProduct(plan: Plan, productId: string | null, metadata: ProcessorMetadata): Promise<ProcessorResult<string>>;
  /** Creates a price (prices are immutable: a new amount is a new price); answers its id. */
  createPrice(price: Price, productId: string, metadata: ProcessorMetadata): Promise<ProcessorResult<string>>;
  /** Archives a price: existing subscriptions keep it, new ones cannot use it. */
  archivePrice(priceId: string): Promise<ProcessorResult<void>>;

  createCustomer(input: { email: string | null; name: string | null; metadata: ProcessorMetadata; idempotencyKey: string }): Promise<ProcessorResult<string>>;
  /** A client secret to collect a card with the processor's UI (Stripe Elements). */
  createSetupIntent(customerId: string, idempotencyKey: string): Promise<ProcessorResult<{ id: string; clientSecret: string }>>;
  /** The active promotion code's id, or null when the processor knows no such code. */
  findPromotionCode(code: string): Promise<ProcessorResult<string | null>>;
  createCheckout(input: CheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>>;

  /**
   * Attaches the card, makes it the customer's default and the subscription's, creates the
   * subscription and charges its first invoice. A declined card (when attached or charged) answers
   * `card_declined` and leaves no subscription behind. With a trial nothing is charged.
   */
  createSubscription(input: CreateSubscriptionInput): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>>;
  /** The prorated invoice a change to `priceId` would charge now. */
  previewChange(subscriptionId: string, priceId: string): Promise<ProcessorResult<ChangePreview>>;
  /**
   * Moves the subscription to `priceId`, invoicing and charging the proration now. A declined
   * charge answers `card_declined` and changes nothing.
   */
  changeSubscription(subscriptionId: string, priceId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>>;
  /** The invoice a change of the item's quantity would bill now (prorated: a charge for added seats, a credit for removed ones). */
  previewQuantity(subscriptionId: string, quantity: number): Promise<ProcessorResult<ChangePreview>>;
  /**
   * Sets the item's quantity (the seats of a per-seat price). `prorate: true` invoices and charges
   * the proration now (Stripe: `proration_behavior=always_invoice`; a decline answers
   * `card_declined` and changes nothing); `prorate: false` changes it without an invoice (Stripe:
   * `proration_behavior=none`): the next renewal bills the new quantity. The same key answers the
   * same change.
   */
  updateQuantity(
    subscriptionId: string,
    quantity: number,
    options: { prorate: boolean; idempotencyKey: string },
  ): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>>;
  /** At period end (pending cancellation) or now (canceled, no proration credit). */
  cancelSubscription(subscriptionId: string, options: { atPeriodEnd: boolean; idempotencyKey: string }): Promise<ProcessorResult<ProcessorSnapshot>>;
  /** Stops service and renewals (Stripe: pause_collection void + Tollgate's paused mark). */
  pauseSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>>;
  /**
   * From paused or from a pending cancellation (the end is dropped). Resumed within the period it
   * was paused in, the billing cycle continues; once a period began while paused, a new period
   * starts now and is charged at once (Stripe: `billing_cycle_anchor=now`), and a declined charge
   * answers `card_declined` and leaves it paused.
   */
  resumeSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>>;
  /**
   * Ends a trial now (Stripe: `trial_end=now`): the cycle restarts now and the first period is
   * invoiced and charged at once; a declined charge leaves it past due, as a trial ending does.
   */
  endTrial(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>>;
  /**
   * Refunds a paid invoice's payment, in full or `amount` of it (Stripe: `POST /v1/refunds` with the
   * invoice's payment intent). The same key answers the same refund; an invoice with nothing left
   * to refund answers `invalid_request`.
   */
  refundInvoice(invoiceId: string, input: { amount: number; reason: RefundReason; idempotencyKey: string }): Promise<ProcessorResult<ProcessorRefund>>;
  /** The subscription as the processor has it now, or null when it does not know it. */
  getSubscription(subscriptionId: string): Promise<ProcessorResult<ProcessorSnapshot | null>>;
  /** The customer's subscriptions' ids, newest first. */
  listSubscriptionIds(customerId: string): Promise<ProcessorResult<string[]>>;
  /** A completed checkout's subscription id, or null when it has none (yet). */
  checkoutSubscriptionId(checkoutId: string): Promise<ProcessorResult<string | null>>;

  /**
   * The metered price that bills usage past a plan's included amount (docs/usage.md):
   * `unitAmount` for each started package of `packageSize` units reported in a period, invoiced at
   * the period's end (Stripe: a Billing Meter for the meter key and a Price with
   * `recurring.usage_type=metered` on it, `transform_quantity` dividing by the package size and
   * rounding up). The same terms answer the same price: it is found again, not created twice.
   */
  ensureMeteredPrice(input: MeteredPriceInput): Promise<ProcessorResult<string>>;
  /**
   * Reports `quantity` units of usage past the included amount for a subscription, billed on its
   * next renewal invoice at the metered price: the subscription gets the metered price's item if it
   * has none (no proration), then the usage is recorded (Stripe: a meter event). The same
   * `identifier` is recorded once.
   */
  reportUsage(input: UsageReport): Promise<ProcessorResult<void>>;

  /**
   * A hosted checkout for a one-off payment (a credit pack, docs/usage.md): `amount` of `currency`
   * for one item named `name` (Stripe: a Checkout Session in `payment` mode with inline
   * `price_data`), the customer's card charged once when it is paid. The same key answers the same
   * session.
   */
  createPackCheckout(input: PackCheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>>;
  /** A one-off checkout as it is now (complete and paid, open, expired) with its metadata; null when the processor does not know it. */
  getPackCheckout(checkoutId: string): Promise<ProcessorResult<PackCheckout | null>>;
}

export interface PackCheckoutInput {
  customerId: string;
  name: string;
  amount: number;
  currency: Currency;
  successUrl: string;
  cancelUrl: string;
  metadata: ProcessorMetadata;
  email: string | null;
  idempotencyKey: string;
}

export interface PackCheckout {
  id: string;
  status: 'open' | 'complete' | 'expired';
  /** The payment succeeded (Stripe: `payment_status: paid`). */
  paid: boolean;
  customerId: string | null;
  metadata: Partial<ProcessorMetadata>;
}

export interface MeteredPriceInput {
  meterKey: string;
  /** What the invoice line calls the usage ("AI tokens"). */
  meterName: string;
  unitAmount: number;
  packageSize: number;
  currency: Currency;
  interval: BillingInterval;
  metadata: ProcessorMetadata;
}

export interface UsageReport {
  subscriptionId: string;
  customerId: string;
  /** From ensureMeteredPrice. */
  meteredPriceId: string;
  meterKey: string;
  /** Units (not packages): the processor divides by the package size at invoicing. */
  quantity: number;
  identifier: string;
  /**
   * When the usage happened (within its window). The processor bills it in the period that holds
   * this time while that period can still take usage (Stripe: until its invoice is finalized),
   * else on the subscription's next invoice; a subscription that ended bills it only on a final
   * invoice not yet final.
   */
  timestamp: Date;
}
