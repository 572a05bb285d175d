import type Stripe from 'stripe';
import type { ChangePreview, CreateSubscriptionInput, ProcessorSnapshot } from '../../../application/billing/payment-processor';
import { attachFailure, requireId } from './stripe-errors';
import { stepKey } from './stripe-keys';
import { PAUSED_AT_KEY, PAUSED_PERIOD_END_KEY, invoiceLinesOf, isMeteredPrice, isTollgatePaused, stripeMetadata, toDate, toUnix } from './stripe-mapping';
import { SUBSCRIPTION_EXPAND, type StripeSubscriptionReads, firstItem } from './stripe-subscriptions';

/**
 * What changes a subscription at Stripe: its creation with a card, a price or quantity change with
 * proration (previewed first), cancellation, Tollgate's pause and its resume, and the end of a trial. Each
 * answers the subscription as Stripe has it afterwards, read again when Stripe replayed an earlier
 * answer; each throws what Stripe refused, and `StripeProcessor` turns it into the port's failure.
 */
export class StripeSubscriptionChanges {
  constructor(
    private readonly stripe: Stripe,
    private readonly reads: StripeSubscriptionReads,
    /** Tollgate's clock: the time of a pause (Tollgate's mark). Prorations are at Stripe's time. */
    private readonly now: () => Date,
  ) {}

  async createSubscription(input: CreateSubscriptionInput): Promise<ProcessorSnapshot> {
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
      items: [{ price: input.priceId, ...(input.quantity === undefined ? {} : { quantity: input.quantity }) }],
      default_payment_method: card.id,
      payment_behavior: 'error_if_incomplete',
      metadata: stripeMetadata(input.metadata),
      expand: SUBSCRIPTION_EXPAND,
    };
    if (input.trialDays) params.trial_period_days = input.trialDays;
    const created = await this.stripe.subscriptions.create(params, { idempotencyKey: stepKey(key, 'create-subscription') });
    return this.reads.snapshotAfterWrite(created);
  }

  async previewChange(subscriptionId: string, priceId: string): Promise<ChangePreview> {
    return this.previewItemChange(subscriptionId, { price: priceId });
  }

  async previewQuantity(subscriptionId: string, quantity: number): Promise<ChangePreview> {
    return this.previewItemChange(subscriptionId, { quantity });
  }

  /** The invoice a change of the subscription's item (its price or its quantity) would make now. */
  private async previewItemChange(subscriptionId: string, change: { price: string } | { quantity: number }): Promise<ChangePreview> {
    const subscription = await this.stripe.subscriptions.retrieve(requireId(subscriptionId, 'subscription'));
    const item = firstItem(subscription);
    // No proration_date: Stripe prorates the preview at its own time, as it will prorate the
    // change (which sends none either). A date from Tollgate's clock previews another amount
    // than the change charges whenever the two clocks differ: a subscription on a Stripe test
    // clock, or Tollgate's clock behind Stripe's.
    const preview = await this.stripe.invoices.createPreview({
      subscription: subscription.id,
      subscription_details: {
        items: [{ id: item.id, ...change }],
        proration_behavior: 'always_invoice',
      },
    });
    const prices = await this.reads.linePricesOf(preview.lines.data, [item.price]);
    const current = { start: toDate(item.current_period_start), end: toDate(item.current_period_end) };
    // With always_invoice the preview is the invoice the change makes now. Should Stripe answer the
    // next renewal instead (nothing is invoiced now, e.g. during a trial), only its prorations count.
    if (preview.billing_reason === 'subscription_update') {
      const lines = invoiceLinesOf(preview.lines.data, prices);
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
    const lines = invoiceLinesOf(preview.lines.data, prices).filter((l) => l.kind !== 'subscription');
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
  }

  async changeSubscription(subscriptionId: string, priceId: string, idempotencyKey: string): Promise<ProcessorSnapshot> {
    const subscription = await this.reads.retrieve(subscriptionId);
    const item = firstItem(subscription);
    if (item.price.id === priceId) return this.reads.snapshotOf(subscription);
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
    return this.reads.snapshotAfterWrite(updated);
  }

  /**
   * Sets the item's quantity. Prorated: `always_invoice` invoices and charges the proration now,
   * and `error_if_incomplete` makes a declined charge answer 402 with nothing changed (the same
   * as a price change). Not prorated: `none`, no invoice; the next renewal bills the new quantity.
   * Already at the quantity: nothing is sent.
   */
  async updateQuantity(subscriptionId: string, quantity: number, options: { prorate: boolean; idempotencyKey: string }): Promise<ProcessorSnapshot> {
    const subscription = await this.reads.retrieve(subscriptionId);
    const item = firstItem(subscription);
    if ((item.quantity ?? 1) === quantity) return this.reads.snapshotOf(subscription);
    const params: Stripe.SubscriptionUpdateParams = options.prorate
      ? { proration_behavior: 'always_invoice', payment_behavior: 'error_if_incomplete' }
      : { proration_behavior: 'none' };
    const updated = await this.stripe.subscriptions.update(
      subscription.id,
      { ...params, items: [{ id: item.id, quantity }], expand: SUBSCRIPTION_EXPAND },
      { idempotencyKey: stepKey(options.idempotencyKey, 'update-quantity') },
    );
    return this.reads.snapshotAfterWrite(updated);
  }

  async cancelSubscription(subscriptionId: string, options: { atPeriodEnd: boolean; idempotencyKey: string }): Promise<ProcessorSnapshot> {
    const subscription = await this.reads.retrieve(subscriptionId);
    if (hasEnded(subscription)) return this.reads.snapshotOf(subscription);
    if (options.atPeriodEnd) {
      if (subscription.cancel_at_period_end) return this.reads.snapshotOf(subscription);
      const updated = await this.stripe.subscriptions.update(
        subscription.id,
        { cancel_at_period_end: true, expand: SUBSCRIPTION_EXPAND },
        { idempotencyKey: stepKey(options.idempotencyKey, 'cancel-at-period-end') },
      );
      return this.reads.snapshotAfterWrite(updated);
    }
    // Now, without crediting unused time (Stripe's default: prorate false). With a metered item
    // (usage overage), `invoice_now` bills the usage reported so far on a final invoice; without it
    // Stripe would discard that usage.
    const metered = subscription.items.data.some((item) => isMeteredPrice(item.price));
    const canceled = await this.stripe.subscriptions.cancel(
      subscription.id,
      { expand: SUBSCRIPTION_EXPAND, ...(metered ? { invoice_now: true } : {}) },
      { idempotencyKey: stepKey(options.idempotencyKey, 'cancel-now') },
    );
    return this.reads.snapshotAfterWrite(canceled);
  }

  async pauseSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorSnapshot> {
    const subscription = await this.reads.retrieve(subscriptionId);
    if (hasEnded(subscription) || isTollgatePaused(subscription)) return this.reads.snapshotOf(subscription);
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
    return this.reads.snapshotAfterWrite(updated);
  }

  async resumeSubscription(subscriptionId: string, idempotencyKey: string): Promise<ProcessorSnapshot> {
    const subscription = await this.reads.retrieve(subscriptionId);
    if (hasEnded(subscription)) return this.reads.snapshotOf(subscription);
    if (subscription.status === 'paused') {
      // Stripe's own pause (a trial that ended without a card): Stripe's resume starts a new cycle.
      const resumed = await this.stripe.subscriptions.resume(
        subscription.id,
        { expand: SUBSCRIPTION_EXPAND },
        { idempotencyKey: stepKey(idempotencyKey, 'resume') },
      );
      return this.reads.snapshotAfterWrite(resumed);
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
    if (Object.keys(params).length === 0) return this.reads.snapshotOf(subscription);
    const updated = await this.stripe.subscriptions.update(
      subscription.id,
      { ...params, expand: SUBSCRIPTION_EXPAND },
      { idempotencyKey: stepKey(idempotencyKey, 'resume') },
    );
    return this.reads.snapshotAfterWrite(updated);
  }

  async endTrial(subscriptionId: string, idempotencyKey: string): Promise<ProcessorSnapshot> {
    const subscription = await this.reads.retrieve(subscriptionId);
    if (subscription.status !== 'trialing') return this.reads.snapshotOf(subscription);
    // trial_end=now restarts the cycle and invoices the first period at once; a declined charge
    // makes it past_due, as a trial reaching its end does.
    const updated = await this.stripe.subscriptions.update(
      subscription.id,
      { trial_end: 'now', expand: SUBSCRIPTION_EXPAND },
      { idempotencyKey: stepKey(idempotencyKey, 'end-trial') },
    );
    return this.reads.snapshotAfterWrite(updated);
  }
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

const hasEnded = (subscription: Stripe.Subscription): boolean => subscription.status === 'canceled' || subscription.status === 'incomplete_expired';
