import { createHash, randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import {
  processorFailed,
  processorOk,
  type ChangePreview,
  type CheckoutInput,
  type CreateSubscriptionInput,
  type PaymentProcessor,
  type ProcessorAccount,
  type ProcessorInvoice,
  type ProcessorMetadata,
  type ProcessorRefund,
  type ProcessorResult,
  type ProcessorSnapshot,
  type RefundReason,
} from '../../../application/billing/payment-processor';
import type { Plan, Price } from '../../../domain/billing/catalog';
import { STRIPE_API_URL_DEFAULT, stripeHostOptions } from './api-url';
import { attachFailure, failureOf, isResourceMissing, RefusedBeforeStripe, StripeShapeError } from './stripe-errors';
import {
  PAUSED_AT_KEY,
  PAUSED_PERIOD_END_KEY,
  idOf,
  invoiceLineOf,
  invoiceOf,
  isTollgatePaused,
  stripeMetadata,
  subscriptionOf,
  toDate,
  toUnix,
} from './stripe-mapping';

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
 * Expanded on every subscription Tollgate reads: the renewal card (the subscription's default, else
 * the customer's invoice default). `latest_invoice.payment_intent` is never expanded: basil removed it.
 */
const SUBSCRIPTION_EXPAND = ['default_payment_method', 'customer.invoice_settings.default_payment_method'];

/** Invoices in a snapshot: the subscription's most recent ones. */
const SNAPSHOT_INVOICES = 20;
/** Enough for any customer Tollgate creates; a guard against paging forever. */
const MAX_LISTED = 1000;
/** Stripe's limit on an Idempotency-Key. */
const MAX_KEY_LENGTH = 255;

/**
 * One Stripe account (a project's billing connection) behind the `PaymentProcessor` port.
 *
 * Idempotency: every write sends an `Idempotency-Key`. Calls that carry the caller's key (derived
 * from Tollgate's ids) send it with a suffix per step (`<key>:attach-payment-method`,
 * `<key>:create-subscription`, ...), so a retried Tollgate request replays each step instead of
 * repeating it, and stripe-node's own network retries reuse the same key. Catalog creations derive
 * theirs from the plan or price id and the content sent. Catalog updates (rename a product, archive
 * a price) set absolute values, so repeating them is harmless; they get a key of their own per call,
 * because a content-derived key would make Stripe replay a stale answer when a value is set back to
 * an earlier one within the key's 24 hours. When Stripe answers a replay (`Idempotent-Replayed`),
 * the subscription is read again so the snapshot is current.
 *
 * Failures are values: nothing thrown by stripe-node (or by reading its answers) leaves a method.
 */
export class StripeProcessor implements PaymentProcessor {
  readonly kind = 'stripe' as const;
  private readonly stripe: Stripe;
  private readonly now: () => Date;
  private readonly livemode: boolean;

  constructor(options: StripeProcessorOptions) {
    this.stripe = new Stripe(options.secretKey, {
      apiVersion: STRIPE_API_VERSION,
      ...stripeHostOptions(options.apiUrl ?? STRIPE_API_URL_DEFAULT),
      timeout: options.timeoutMs ?? 20_000,
      maxNetworkRetries: options.maxNetworkRetries ?? 2,
      telemetry: false,
      appInfo: { name: 'Tollgate' },
    });
    this.now = options.now ?? (() => new Date());
    this.livemode = /^(sk|rk)_live_/.test(options.secretKey);
  }

  verifyCredentials(): Promise<ProcessorResult<ProcessorAccount>> {
    return this.attempt(async () => {
      const account = await this.stripe.accounts.retrieve();
      return { accountId: typeof account.id === 'string' ? account.id : null, livemode: this.livemode };
    });
  }

  upsertProduct(plan: Plan, productId: string | null, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    return this.attempt(async () => {
      const md = { ...stripeMetadata(metadata), tollgate_plan_id: plan.id };
      if (productId !== null) {
        // An empty description unsets it (Stripe's convention for updates).
        const params: Stripe.ProductUpdateParams = { name: plan.name, description: plan.description, metadata: md };
        const product = await this.stripe.products.update(requireId(productId, 'product'), params, { idempotencyKey: callKey('product-update', productId) });
        return product.id;
      }
      // Stripe refuses an empty description on create ("cannot be unset").
      const params: Stripe.ProductCreateParams = { name: plan.name, metadata: md, ...(plan.description ? { description: plan.description } : {}) };
      const product = await this.stripe.products.create(params, { idempotencyKey: contentKey('product', plan.id, params) });
      return product.id;
    });
  }

  createPrice(price: Price, productId: string, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    return this.attempt(async () => {
      const params: Stripe.PriceCreateParams = {
        product: productId,
        unit_amount: price.amount,
        currency: price.currency,
        recurring: { interval: price.interval },
        nickname: price.name,
        metadata: stripeMetadata({ ...metadata, priceId: metadata.priceId ?? price.id }),
      };
      const created = await this.stripe.prices.create(params, { idempotencyKey: contentKey('price', price.id, params) });
      // A replay answers the price made earlier for the same content; it may have been archived since
      // (an amount changed and then changed back): the catalog wants it selling again.
      if (replayed(created)) {
        const current = await this.stripe.prices.retrieve(created.id);
        if (!current.active) await this.stripe.prices.update(created.id, { active: true }, { idempotencyKey: callKey('price-reactivate', created.id) });
      }
      return created.id;
    });
  }

  archivePrice(priceId: string): Promise<ProcessorResult<void>> {
    return this.attempt(async () => {
      await this.stripe.prices.update(requireId(priceId, 'price'), { active: false }, { idempotencyKey: callKey('price-archive', priceId) });
    });
  }

  createCustomer(input: {
    email: string | null;
    name: string | null;
    metadata: ProcessorMetadata;
    idempotencyKey: string;
  }): Promise<ProcessorResult<string>> {
    return this.attempt(async () => {
      const params: Stripe.CustomerCreateParams = { metadata: stripeMetadata(input.metadata) };
      if (input.email) params.email = input.email;
      if (input.name) params.name = input.name;
      const customer = await this.stripe.customers.create(params, { idempotencyKey: stepKey(input.idempotencyKey, 'create-customer') });
      return customer.id;
    });
  }

  createSetupIntent(customerId: string, idempotencyKey: string): Promise<ProcessorResult<{ id: string; clientSecret: string }>> {
    return this.attempt(async () => {
      const intent = await this.stripe.setupIntents.create(
        { customer: customerId, usage: 'off_session', payment_method_types: ['card'] },
        { idempotencyKey: stepKey(idempotencyKey, 'create-setup-intent') },
      );
      if (!intent.client_secret) throw new StripeShapeError(`setup intent ${intent.id} has no client_secret`);
      return { id: intent.id, clientSecret: intent.client_secret };
    });
  }

  findPromotionCode(code: string): Promise<ProcessorResult<string | null>> {
    return this.attempt(async () => {
      const wanted = code.trim();
      if (wanted === '') return null;
      const found = await this.stripe.promotionCodes.list({ code: wanted, active: true, limit: 1 });
      return found.data[0]?.id ?? null;
    });
  }

  createCheckout(input: CheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>> {
    return this.attempt(async () => {
      const metadata = stripeMetadata(input.metadata);
      const params: Stripe.Checkout.SessionCreateParams = {
        mode: 'subscription',
        customer: input.customerId,
        line_items: [{ price: input.priceId, quantity: 1 }],
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        subscription_data: { metadata, ...(input.trialDays ? { trial_period_days: input.trialDays } : {}) },
        metadata,
      };
      if (input.promotionCodeId) params.discounts = [{ promotion_code: input.promotionCodeId }];
      const session = await this.stripe.checkout.sessions.create(params, { idempotencyKey: stepKey(input.idempotencyKey, 'create-checkout') });
      if (!session.url) throw new StripeShapeError(`checkout session ${session.id} has no url`);
      return { id: session.id, url: session.url };
    });
  }

  createSubscription(input: CreateSubscriptionInput): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(async () => {
      const key = input.idempotencyKey;
      // A card that declines when attached (pm_card_chargeDeclined) fails here: nothing else happens.
      const card = await this.stripe.paymentMethods
        .attach(
          requireId(input.paymentMethodId, 'payment method', 'invalid_payment_method'),
          { customer: requireId(input.customerId, 'customer') },
          { idempotencyKey: stepKey(key, 'attach-payment-method') },
        )
        .catch((error: unknown) => {
          throw attachFailure(error);
        });
      await this.stripe.customers.update(
        requireId(input.customerId, 'customer'),
        { invoice_settings: { default_payment_method: card.id } },
        { idempotencyKey: stepKey(key, 'default-payment-method') },
      );
      // error_if_incomplete: a declined first charge answers 402 and Stripe creates nothing.
      const params: Stripe.SubscriptionCreateParams = {
        customer: input.customerId,
        items: [{ price: input.priceId }],
        default_payment_method: card.id,
        payment_behavior: 'error_if_incomplete',
        metadata: stripeMetadata(input.metadata),
        expand: SUBSCRIPTION_EXPAND,
      };
      if (input.trialDays) params.trial_period_days = input.trialDays;
      const created = await this.stripe.subscriptions.create(params, { idempotencyKey: stepKey(key, 'create-subscription') });
      return this.snapshotAfterWrite(created);
    });
  }

  previewChange(subscriptionId: string, priceId: string): Promise<ProcessorResult<ChangePreview>> {
    return this.attempt(async () => {
      const subscription = await this.stripe.subscriptions.retrieve(requireId(subscriptionId, 'subscription'));
      const item = firstItem(subscription);
      // No proration_date: Stripe prorates the preview at its own time, as it will prorate the
      // change (which sends none either). A date from Tollgate's clock previews another amount
      // than the change charges whenever the two clocks differ: a subscription on a Stripe test
      // clock, or Tollgate's clock behind Stripe's.
      const preview = await this.stripe.invoices.createPreview({
        subscription: subscription.id,
        subscription_details: {
          items: [{ id: item.id, price: priceId }],
          proration_behavior: 'always_invoice',
        },
      });
      const current = { start: toDate(item.current_period_start), end: toDate(item.current_period_end) };
      // With always_invoice the preview is the invoice the change makes now. Should Stripe answer the
      // next renewal instead (nothing is invoiced now, e.g. during a trial), only its prorations count.
      if (preview.billing_reason === 'subscription_update') {
        const lines = preview.lines.data.map(invoiceLineOf);
        const full = lines.find((l) => l.kind === 'subscription');
        return {
          amountDue: preview.amount_due,
          currency: preview.currency,
          subtotal: preview.subtotal,
          lines,
          periodStart: full?.periodStart ?? current.start,
          periodEnd: full?.periodEnd ?? current.end,
        };
      }
      const lines = preview.lines.data.map(invoiceLineOf).filter((l) => l.kind !== 'subscription');
      const subtotal = lines.reduce((sum, l) => sum + l.amount, 0);
      const credit = Math.max(0, -(preview.starting_balance ?? 0));
      return {
        amountDue: Math.max(0, subtotal - credit),
        currency: preview.currency,
        subtotal,
        lines,
        periodStart: current.start,
        periodEnd: current.end,
      };
    });
  }

  changeSubscription(subscriptionId: string, priceId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(async () => {
      const subscription = await this.retrieve(subscriptionId);
      const item = firstItem(subscription);
      if (item.price.id === priceId) return this.snapshotOf(subscription);
      // always_invoice: the proration is invoiced and charged now; error_if_incomplete: a declined
      // charge answers 402 and the subscription stays on its price.
      const updated = await this.stripe.subscriptions.update(
        subscription.id,
        {
          items: [{ id: item.id, price: priceId }],
          proration_behavior: 'always_invoice',
          payment_behavior: 'error_if_incomplete',
          expand: SUBSCRIPTION_EXPAND,
        },
        { idempotencyKey: stepKey(idempotencyKey, 'change-price') },
      );
      return this.snapshotAfterWrite(updated);
    });
  }

  cancelSubscription(
    subscriptionId: string,
    options: { atPeriodEnd: boolean; idempotencyKey: string },
  ): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(async () => {
      const subscription = await this.retrieve(subscriptionId);
      if (hasEnded(subscription)) return this.snapshotOf(subscription);
      if (options.atPeriodEnd) {
        if (subscription.cancel_at_period_end) return this.snapshotOf(subscription);
        const updated = await this.stripe.subscriptions.update(
          subscription.id,
          { cancel_at_period_end: true, expand: SUBSCRIPTION_EXPAND },
          { idempotencyKey: stepKey(options.idempotencyKey, 'cancel-at-period-end') },
        );
        return this.snapshotAfterWrite(updated);
      }
      // Now, without crediting unused time (Stripe's default: prorate false).
      const canceled = await this.stripe.subscriptions.cancel(
        subscription.id,
        { expand: SUBSCRIPTION_EXPAND },
        { idempotencyKey: stepKey(options.idempotencyKey, 'cancel-now') },
      );
      return this.snapshotAfterWrite(canceled);
    });
  }

  pauseSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(async () => {
      const subscription = await this.retrieve(subscriptionId);
      if (hasEnded(subscription) || isTollgatePaused(subscription)) return this.snapshotOf(subscription);
      // Renewal invoices are voided while paused; Tollgate's mark makes it a service pause, and the
      // paid period's end (Stripe's time) tells a resume whether a renewal passed while paused.
      const updated = await this.stripe.subscriptions.update(
        subscription.id,
        {
          pause_collection: { behavior: 'void' },
          metadata: { [PAUSED_AT_KEY]: String(toUnix(this.now())), [PAUSED_PERIOD_END_KEY]: String(firstItem(subscription).current_period_end) },
          expand: SUBSCRIPTION_EXPAND,
        },
        { idempotencyKey: stepKey(idempotencyKey, 'pause') },
      );
      return this.snapshotAfterWrite(updated);
    });
  }

  resumeSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(async () => {
      const subscription = await this.retrieve(subscriptionId);
      if (hasEnded(subscription)) return this.snapshotOf(subscription);
      if (subscription.status === 'paused') {
        // Stripe's own pause (a trial that ended without a card): Stripe's resume starts a new cycle.
        const resumed = await this.stripe.subscriptions.resume(
          subscription.id,
          { expand: SUBSCRIPTION_EXPAND },
          { idempotencyKey: stepKey(idempotencyKey, 'resume') },
        );
        return this.snapshotAfterWrite(resumed);
      }
      const params: Stripe.SubscriptionUpdateParams = {};
      if (subscription.pause_collection || subscription.metadata?.[PAUSED_AT_KEY]) {
        params.pause_collection = '';
        params.metadata = { [PAUSED_AT_KEY]: '', [PAUSED_PERIOD_END_KEY]: '' };
        if (isTollgatePaused(subscription) && renewedWhilePaused(subscription)) {
          // A period began while paused (its invoice was voided): a new period starts now and is
          // charged at once, whole (no credit for the paused days); a declined charge answers 402
          // and changes nothing, so the subscription stays paused.
          params.billing_cycle_anchor = 'now';
          params.proration_behavior = 'none';
          params.payment_behavior = 'error_if_incomplete';
        }
      }
      // A pending cancellation is dropped (a cancel_at set by other means too).
      if (subscription.cancel_at_period_end) params.cancel_at_period_end = false;
      else if (subscription.cancel_at !== null) params.cancel_at = '';
      if (Object.keys(params).length === 0) return this.snapshotOf(subscription);
      const updated = await this.stripe.subscriptions.update(
        subscription.id,
        { ...params, expand: SUBSCRIPTION_EXPAND },
        { idempotencyKey: stepKey(idempotencyKey, 'resume') },
      );
      return this.snapshotAfterWrite(updated);
    });
  }

  endTrial(subscriptionId: string, idempotencyKey: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.attempt(async () => {
      const subscription = await this.retrieve(subscriptionId);
      if (subscription.status !== 'trialing') return this.snapshotOf(subscription);
      // trial_end=now restarts the cycle and invoices the first period at once; a declined charge
      // makes it past_due, as a trial reaching its end does.
      const updated = await this.stripe.subscriptions.update(
        subscription.id,
        { trial_end: 'now', expand: SUBSCRIPTION_EXPAND },
        { idempotencyKey: stepKey(idempotencyKey, 'end-trial') },
      );
      return this.snapshotAfterWrite(updated);
    });
  }

  refundInvoice(invoiceId: string, input: { amount: number; reason: RefundReason; idempotencyKey: string }): Promise<ProcessorResult<ProcessorRefund>> {
    return this.attempt(async () => {
      // basil: an invoice's payments are InvoicePayments; the paid one names its PaymentIntent.
      const payments = await this.stripe.invoicePayments.list({ invoice: requireId(invoiceId, 'invoice'), status: 'paid', limit: 10 });
      const paymentIntent = payments.data.map((p) => idOf(p.payment.payment_intent as string | { id: string } | undefined)).find((id) => id !== null);
      if (!paymentIntent) throw new RefusedBeforeStripe({ kind: 'invalid_request', message: `Invoice ${invoiceId} has no payment to refund` });
      const refund = await this.stripe.refunds.create(
        { payment_intent: paymentIntent, amount: input.amount, reason: input.reason, metadata: { tollgate_invoice_id: invoiceId } },
        { idempotencyKey: stepKey(input.idempotencyKey, 'refund') },
      );
      return { id: refund.id, invoiceId, amount: refund.amount, currency: refund.currency, createdAt: toDate(refund.created) };
    });
  }

  getSubscription(subscriptionId: string): Promise<ProcessorResult<ProcessorSnapshot | null>> {
    return this.attempt(async () => {
      if (subscriptionId.trim() === '') return null;
      let subscription: Stripe.Subscription;
      try {
        subscription = await this.retrieve(subscriptionId);
      } catch (error) {
        if (isResourceMissing(error)) return null;
        throw error;
      }
      return this.snapshotOf(subscription);
    });
  }

  listSubscriptionIds(customerId: string): Promise<ProcessorResult<string[]>> {
    return this.attempt(async () => {
      const ids: string[] = [];
      for await (const subscription of this.stripe.subscriptions.list({ customer: customerId, status: 'all', limit: 100 })) {
        ids.push(subscription.id);
        if (ids.length >= MAX_LISTED) break;
      }
      return ids;
    });
  }

  checkoutSubscriptionId(checkoutId: string): Promise<ProcessorResult<string | null>> {
    return this.attempt(async () => {
      const session = await this.stripe.checkout.sessions.retrieve(requireId(checkoutId, 'checkout'));
      return idOf(session.subscription);
    });
  }

  // ---- helpers --------------------------------------------------------------------------------

  /** Runs one port call: its value, or the failure for whatever went wrong. */
  private async attempt<T>(work: () => Promise<T>): Promise<ProcessorResult<T>> {
    try {
      return processorOk(await work());
    } catch (error) {
      return processorFailed(failureOf(error));
    }
  }

  private retrieve(subscriptionId: string): Promise<Stripe.Subscription> {
    return this.stripe.subscriptions.retrieve(requireId(subscriptionId, 'subscription'), { expand: SUBSCRIPTION_EXPAND });
  }

  /** The snapshot after a write; a replayed answer is as old as the first request, so read again. */
  private async snapshotAfterWrite(written: Stripe.Response<Stripe.Subscription>): Promise<ProcessorSnapshot> {
    return this.snapshotOf(replayed(written) ? await this.retrieve(written.id) : written);
  }

  private async snapshotOf(subscription: Stripe.Subscription): Promise<ProcessorSnapshot> {
    const recent = await this.stripe.invoices.list({ subscription: subscription.id, limit: SNAPSHOT_INVOICES });
    const oldestFirst = [...recent.data].reverse();
    const invoices: ProcessorInvoice[] = [];
    for (const invoice of oldestFirst) {
      const mapped = invoiceOf(invoice, invoice.lines.has_more && invoice.id ? await this.allLines(invoice.id) : invoice.lines.data);
      if (mapped) invoices.push(mapped);
    }
    return { subscription: subscriptionOf(subscription, oldestFirst), invoices };
  }

  /** Every line of an invoice (its embedded list holds the first page only). */
  private async allLines(invoiceId: string): Promise<Stripe.InvoiceLineItem[]> {
    const lines: Stripe.InvoiceLineItem[] = [];
    for await (const line of this.stripe.invoices.listLineItems(invoiceId, { limit: 100 })) {
      lines.push(line);
      if (lines.length >= MAX_LISTED) break;
    }
    return lines;
  }
}

/**
 * An id to put in a path. An empty one would change the route (`GET /v1/subscriptions/` lists
 * subscriptions), so it is refused before anything is sent.
 */
function requireId(id: string, what: string, kind: 'invalid_request' | 'invalid_payment_method' = 'invalid_request'): string {
  if (typeof id !== 'string' || id.trim() === '') throw new RefusedBeforeStripe({ kind, message: `Missing ${what} id` });
  return id;
}

function firstItem(subscription: Stripe.Subscription): Stripe.SubscriptionItem {
  const item = subscription.items?.data?.[0];
  if (!item) throw new StripeShapeError(`subscription ${subscription.id} has no items`);
  return item;
}

/**
 * Whether the period Tollgate's pause stopped in is over: the item's period started at or after
 * the end recorded at pause time (or, for a pause marked before that end was recorded, after the
 * pause itself).
 */
function renewedWhilePaused(subscription: Stripe.Subscription): boolean {
  const start = firstItem(subscription).current_period_start;
  const mark = (key: string): number | null => {
    const value = subscription.metadata?.[key];
    return typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : null;
  };
  const pausedPeriodEnd = mark(PAUSED_PERIOD_END_KEY);
  if (pausedPeriodEnd !== null) return start >= pausedPeriodEnd;
  const pausedAt = mark(PAUSED_AT_KEY);
  return pausedAt !== null && start > pausedAt;
}

const hasEnded = (subscription: Stripe.Subscription): boolean =>
  subscription.status === 'canceled' || subscription.status === 'incomplete_expired';

const replayed = (response: { lastResponse?: { headers?: Record<string, string> } }): boolean =>
  response.lastResponse?.headers?.['idempotent-replayed'] === 'true';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The caller's key for one step of a call; hashed when it would exceed Stripe's 255 characters. */
export function stepKey(base: string, step: string): string {
  const key = `${base}:${step}`;
  return key.length <= MAX_KEY_LENGTH ? key : `tollgate:${step}:${sha256(key)}`;
}

/** A creation's key: Tollgate's id of the thing and a digest of what is sent. */
function contentKey(kind: string, id: string, params: object): string {
  return stepKey(`tollgate:${kind}:${id}`, `create:${sha256(JSON.stringify(params)).slice(0, 32)}`);
}

/** A key for one update call (see the class comment). */
const callKey = (kind: string, id: string): string => stepKey(`tollgate:${kind}:${id}`, randomUUID());
