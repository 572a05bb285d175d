import { type Result, err, ok } from '../result';
import { type Price, type PriceSnapshot, snapshotOf } from './catalog';
import { type PriceChangePreview, previewPriceChange } from './proration';
import { type Subscription, currentPeriod } from './subscription-status';
import { type EndedError, type Outcome, type PaymentOutcome, endedError, invoiceOrNull, paidEvents, transition } from './subscription-transition';

/** Why a price change is refused (see {@link checkChange}). */
export type ChangeError =
  | EndedError
  | 'subscription_paused'
  | 'subscription_past_due'
  | 'cancellation_scheduled'
  | 'price_inactive'
  | 'same_price'
  | 'currency_mismatch';

/** A subscription that cannot change now: over or never started, paused (resume first), past due (pay first). */
function notChangeable(subscription: Subscription): EndedError | 'subscription_paused' | 'subscription_past_due' | null {
  const ended = endedError(subscription);
  if (ended) return ended;
  if (subscription.status === 'paused') return 'subscription_paused';
  if (subscription.status === 'past_due') return 'subscription_past_due';
  return null;
}

/**
 * Where a price change is allowed: `active` (prorated, charged now) and `trialing` (the price is
 * swapped, the trial continues, nothing is charged; the new interval applies from the trial end).
 * Refused: `past_due` (pay the open invoice first: Stripe warns that prorating an unpaid period
 * credits time that was never paid), `paused` (resume first), pending cancellation (resume first,
 * so one request never both changes and keeps a scheduled end), and ended subscriptions. The new
 * price must be active, different and in the same currency.
 */
function checkChange(subscription: Subscription, price: Price): ChangeError | null {
  const unchangeable = notChangeable(subscription);
  if (unchangeable) return unchangeable;
  if (subscription.cancelAtPeriodEnd) return 'cancellation_scheduled';
  if (!price.active) return 'price_inactive';
  if (price.id === subscription.price.id) return 'same_price';
  if (price.currency !== subscription.price.currency) return 'currency_mismatch';
  return null;
}

export interface PriceChangeOptions {
  creditBalance?: number;
  /** Result of charging the prorated invoice; required when it has an amount due. */
  payment?: PaymentOutcome;
}

/**
 * The preview a UI shows before confirming a change (amount due now, lines, new period), or null
 * while trialing (nothing is billed then). Refused as {@link changePrice} would refuse.
 */
export function previewChange(
  subscription: Subscription,
  price: Price,
  at: Date,
  creditBalance = 0,
): Result<PriceChangePreview | null, ChangeError | 'outside_current_period'> {
  const refused = checkChange(subscription, price);
  return refused ? err(refused) : prorateTo(subscription, snapshotOf(price), at, creditBalance);
}

/** The proration of moving the subscription to `to` at `at`; null while trialing (nothing is billed then). */
function prorateTo(
  subscription: Subscription,
  to: PriceSnapshot,
  at: Date,
  creditBalance: number,
): Result<PriceChangePreview | null, 'outside_current_period'> {
  if (subscription.status === 'trialing') return ok(null);
  const preview = previewPriceChange({
    period: currentPeriod(subscription),
    anchor: subscription.billingCycleAnchor,
    from: subscription.price,
    to,
    at,
    creditBalance,
  });
  return preview ? ok(preview) : err('outside_current_period');
}

/**
 * The subscription on `to` after its proration: applied only once the prorated invoice is paid (a
 * failed charge changes nothing and records payment.failed); nothing to bill (a trial) swaps it.
 */
function applyProration<S extends Subscription>(subscription: S, to: PriceSnapshot, preview: PriceChangePreview | null, payment?: PaymentOutcome): Outcome<S> {
  if (preview === null) return ok(transition({ ...subscription, price: to }, ['subscription.updated']));
  const { invoice, period, billingCycleAnchor } = preview;
  if (invoice.amountDue > 0) {
    if (payment === undefined) return err('payment_required');
    if (payment === 'failed') return ok(transition(subscription, ['payment.failed'], invoice));
  }
  const changed: S = { ...subscription, price: to, currentPeriodStart: period.start, currentPeriodEnd: period.end, billingCycleAnchor };
  const billed = invoiceOrNull(invoice);
  return ok(transition(changed, ['subscription.updated', ...paidEvents(billed)], billed));
}

/**
 * POST subscription/change (spec: "same subscription on new price; prorated invoice for the
 * difference; event subscription.updated"). Proration as {@link previewPriceChange}, invoiced and
 * charged at once (`always_invoice`). If that charge fails, nothing changes and only payment.failed
 * is recorded: Tollgate applies a change only once it is paid, as Stripe's
 * `payment_behavior=pending_if_incomplete` does, rather than Stripe's default of applying it and
 * turning the subscription past_due. Events: [subscription.updated, invoice.paid (when the
 * prorated invoice has a positive subtotal)].
 */
export function changePrice<S extends Subscription>(subscription: S, price: Price, at: Date, options: PriceChangeOptions = {}): Outcome<S> {
  const preview = previewChange(subscription, price, at, options.creditBalance ?? 0);
  return preview.ok ? applyProration(subscription, snapshotOf(price), preview.value, options.payment) : preview;
}

/** Why a quantity change is refused: as a price change, and the price must be per seat with another quantity. */
export type QuantityChangeError = EndedError | 'subscription_paused' | 'subscription_past_due' | 'not_per_seat' | 'same_quantity';

function checkQuantityChange(subscription: Subscription, to: PriceSnapshot): QuantityChangeError | null {
  const unchangeable = notChangeable(subscription);
  if (unchangeable) return unchangeable;
  if (subscription.price.quantity === undefined || to.quantity === undefined || to.id !== subscription.price.id) return 'not_per_seat';
  if (to.quantity === subscription.price.quantity) return 'same_quantity';
  return null;
}

/**
 * The invoice a change of a per-seat subscription's quantity bills at `at`: the proration of the
 * amount for the old quantity to the amount for the new one (`to`: the price's snapshot for the new
 * quantity, domain/billing/catalog.ts `seatSnapshotOf`), as Stripe prorates an item's quantity;
 * null while trialing (nothing is billed then). A pending cancellation does not stop it (seats move
 * until the end). Past due refuses it: the seats stay as they are while a payment is retried.
 */
export function previewQuantityChange(
  subscription: Subscription,
  to: PriceSnapshot,
  at: Date,
  creditBalance = 0,
): Result<PriceChangePreview | null, QuantityChangeError | 'outside_current_period'> {
  const refused = checkQuantityChange(subscription, to);
  return refused ? err(refused) : prorateTo(subscription, to, at, creditBalance);
}

/**
 * A quantity change. `prorate: true` bills the proration now (a charge for added seats, a credit for
 * removed ones; a failed charge changes nothing, as a price change); `prorate: false` changes the
 * quantity without an invoice, so the next renewal bills it (Stripe's `proration_behavior=none`).
 * Events: [subscription.updated, invoice.paid (a positive prorated invoice)].
 */
export function changeQuantity<S extends Subscription>(
  subscription: S,
  to: PriceSnapshot,
  at: Date,
  options: PriceChangeOptions & { prorate: boolean },
): Outcome<S> {
  if (!options.prorate) {
    const refused = checkQuantityChange(subscription, to);
    return refused ? err(refused) : applyProration(subscription, to, null);
  }
  const preview = previewQuantityChange(subscription, to, at, options.creditBalance ?? 0);
  return preview.ok ? applyProration(subscription, to, preview.value, options.payment) : preview;
}
