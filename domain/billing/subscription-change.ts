import { type Result, err, ok } from '../result';
import { type Price, snapshotOf } from './catalog';
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

/**
 * Where a price change is allowed: `active` (prorated, charged now) and `trialing` (the price is
 * swapped, the trial continues, nothing is charged; the new interval applies from the trial end).
 * Refused: `past_due` (pay the open invoice first: Stripe warns that prorating an unpaid period
 * credits time that was never paid), `paused` (resume first), pending cancellation (resume first,
 * so one request never both changes and keeps a scheduled end), and ended subscriptions. The new
 * price must be active, different and in the same currency.
 */
function checkChange(subscription: Subscription, price: Price): ChangeError | null {
  const ended = endedError(subscription);
  if (ended) return ended;
  if (subscription.status === 'paused') return 'subscription_paused';
  if (subscription.status === 'past_due') return 'subscription_past_due';
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
  if (refused) return err(refused);
  if (subscription.status === 'trialing') return ok(null);
  const preview = previewPriceChange({
    period: currentPeriod(subscription),
    anchor: subscription.billingCycleAnchor,
    from: subscription.price,
    to: snapshotOf(price),
    at,
    creditBalance,
  });
  return preview ? ok(preview) : err('outside_current_period');
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
  if (!preview.ok) return preview;
  const snapshot = snapshotOf(price);
  if (preview.value === null) {
    return ok(transition({ ...subscription, price: snapshot }, ['subscription.updated']));
  }
  const { invoice, period, billingCycleAnchor } = preview.value;
  if (invoice.amountDue > 0) {
    if (options.payment === undefined) return err('payment_required');
    if (options.payment === 'failed') return ok(transition(subscription, ['payment.failed'], invoice));
  }
  const changed: S = {
    ...subscription,
    price: snapshot,
    currentPeriodStart: period.start,
    currentPeriodEnd: period.end,
    billingCycleAnchor,
  };
  const billed = invoiceOrNull(invoice);
  return ok(transition(changed, ['subscription.updated', ...paidEvents(billed)], billed));
}
