import { type PriceSnapshot, lineOfPrice } from './catalog';
import { type InvoiceDraft, type InvoiceLine, draftInvoice } from './invoice';
import { type Period, cycleBoundary, isWithin, periodSeconds, toWholeSeconds, unixSeconds } from './periods';

/**
 * Proration as Stripe Billing computes it for a price change with `proration_behavior`
 * `create_prorations` or `always_invoice`, in the classic billing mode that API version
 * 2025-08-27.basil uses by default. Tollgate's sandbox processor uses this; with Stripe, Stripe
 * computes it and these functions only preview.
 *
 * Sources (https://docs.stripe.com/billing/subscriptions/prorations and .../change-price):
 * - "If a customer upgrades from a 10 USD monthly plan to a 20 USD option ... halfway through the
 *   billing period, the customer is billed an additional 5 USD: -5 USD for unused time on the
 *   initial price, and 10 USD for the remaining time on the new price."
 * - "The current billing period's start and end times are used to calculate the cost of the
 *   subscription before and after the change", and Stripe "prorates to the second".
 * - Classic mode "creates a credit proration based on the current price" (the price the
 *   subscription is on, whether or not it was paid for).
 * - Billing periods: "If both prices have the same billing periods ... the subscription retains the
 *   same billing dates. If the prices have different billing periods, the new price is billed at the
 *   new interval, starting on the day of the change", and "Stripe immediately attempts payment when
 *   a subscription's billing cycle anchor is reset."
 * - "If you've subscribed a customer to a zero-amount price ..., changing the price to a non-zero
 *   amount generates an invoice and resets the billing period to the date of the change."
 *
 * Rounding: each line is rounded on its own to the nearest minor unit, ties away from zero (Stripe
 * rounds each proration item to an integer amount; its docs do not state the tie rule, so ties are
 * Tollgate's choice). The Stripe docs' classic example checks out: a 20 GBP price credited for a
 * third of a month is -6.67 GBP, a 10 GBP price charged for the same third is 3.33 GBP, total -3.34.
 * Lines of zero (a free price) are left out.
 */

/**
 * `amount * remaining / total`, rounded to the nearest integer, ties away from zero, computed with
 * exact integer arithmetic (BigInt): no intermediate value is ever a fraction or a float.
 */
export function prorate(amount: number, remainingSeconds: number, totalSeconds: number): number {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`Bad amount: ${amount}`);
  if (!Number.isSafeInteger(totalSeconds) || totalSeconds <= 0) throw new RangeError(`Bad period: ${totalSeconds}`);
  if (!Number.isSafeInteger(remainingSeconds) || remainingSeconds < 0 || remainingSeconds > totalSeconds) {
    throw new RangeError(`Bad remaining time: ${remainingSeconds} of ${totalSeconds}`);
  }
  const numerator = BigInt(amount) * BigInt(remainingSeconds);
  const total = BigInt(totalSeconds);
  const quotient = numerator / total;
  const remainder = numerator % total;
  return Number(remainder * 2n >= total ? quotient + 1n : quotient);
}

export interface PriceChangeInput {
  /** The subscription's current period; the change time must lie within it. */
  readonly period: Period;
  readonly anchor: Date;
  readonly from: PriceSnapshot;
  readonly to: PriceSnapshot;
  readonly at: Date;
  /** The customer's credit balance before the change (zero or positive). */
  readonly creditBalance: number;
}

export interface PriceChangePreview {
  /** True when the change starts a new billing period at the change time (see {@link resetsBillingCycle}). */
  readonly resetsBillingCycle: boolean;
  /** The billing period after the change. */
  readonly period: Period;
  readonly billingCycleAnchor: Date;
  /** The prorated invoice, charged at once (`always_invoice`); its `amountDue` is what a UI shows. */
  readonly invoice: InvoiceDraft;
}

/**
 * A change resets the billing cycle when the interval changes (month <-> year) or when it leaves a
 * free price for a paid one; otherwise the billing dates stay.
 */
export const resetsBillingCycle = (from: PriceSnapshot, to: PriceSnapshot): boolean => from.interval !== to.interval || (from.amount === 0 && to.amount > 0);

/**
 * The invoice of a price change at `at` (whole seconds) within the current period [start, end):
 *
 * - Same billing cycle: a credit `-prorate(old, end - at, end - start)` for the unused time on the
 *   old price and a charge `prorate(new, end - at, end - start)` for the remaining time on the new
 *   price; the period and anchor stay.
 * - Reset billing cycle (interval change, or free to paid): the same credit for the unused time, and
 *   the new price's full amount for a new period [at, at + new interval); the anchor becomes `at`.
 *   Monthly 10 USD to yearly 100 USD halfway through the month: -5 USD + 100 USD = 95 USD due now.
 *
 * The sum goes through the customer's credit balance ({@link draftInvoice}): a downgrade whose
 * credit exceeds its charge has amount due 0 and leaves the difference as credit for later invoices.
 * Returns null when `at` is outside the period (a renewal is due first).
 */
export function previewPriceChange(input: PriceChangeInput): PriceChangePreview | null {
  const at = toWholeSeconds(input.at);
  if (!isWithin(input.period, at)) return null;
  if (input.from.currency !== input.to.currency) throw new Error('A price change keeps the currency');
  const total = periodSeconds(input.period);
  const remaining = unixSeconds(input.period.end) - unixSeconds(at);
  const rest: Period = { start: at, end: input.period.end };
  const lines: InvoiceLine[] = [];
  const credit = prorate(input.from.amount, remaining, total);
  if (credit > 0) lines.push({ kind: 'unused_time', ...lineOfPrice(input.from), amount: -credit, period: rest });

  if (resetsBillingCycle(input.from, input.to)) {
    const period: Period = { start: at, end: cycleBoundary(at, input.to.interval, 1) };
    if (input.to.amount > 0) lines.push({ kind: 'subscription', ...lineOfPrice(input.to), amount: input.to.amount, period });
    return {
      resetsBillingCycle: true,
      period,
      billingCycleAnchor: at,
      invoice: draftInvoice('subscription_update', input.to.currency, lines, input.creditBalance),
    };
  }

  const charge = prorate(input.to.amount, remaining, total);
  if (charge > 0) lines.push({ kind: 'remaining_time', ...lineOfPrice(input.to), amount: charge, period: rest });
  return {
    resetsBillingCycle: false,
    period: input.period,
    billingCycleAnchor: input.anchor,
    invoice: draftInvoice('subscription_update', input.to.currency, lines, input.creditBalance),
  };
}
