import type { Result } from '../result';
import { type PriceSnapshot, lineOfPrice } from './catalog';
import type { BillingEventType } from './events';
import { type InvoiceDraft, type InvoiceLine, type InvoiceReason, draftInvoice } from './invoice';
import { type Period, nextCycleBoundary } from './periods';
import type { Subscription } from './subscription-status';

/** The outcome of charging the card for an invoice with an amount due. */
export type PaymentOutcome = 'paid' | 'failed';

/**
 * What a transition decides: the subscription after it, the project events it causes (recorded in
 * the same transaction), and the invoice it produces, if any (null when nothing is billed).
 *
 * Rules that hold for every transition:
 * - An invoice is produced when it has a non-zero line; `invoice.paid` is recorded when an invoice
 *   with a positive subtotal is paid, by card or by credit balance (a downgrade credit or a free
 *   price is no payment).
 * - `subscription.updated` is recorded for a plan change, a pause, a resume, a scheduled
 *   cancellation and any status change that is not a creation or a final cancellation (trial end,
 *   falling past due, recovering from past due). A plain renewal is only `invoice.paid`.
 * - Events are ordered as a processor reports them: a creation before its invoice, an invoice
 *   before the status change its payment causes.
 * - Times are truncated to whole seconds, like Stripe's Unix timestamps.
 */
export interface Transition<S extends Subscription = Subscription> {
  readonly subscription: S;
  readonly events: readonly BillingEventType[];
  readonly invoice: InvoiceDraft | null;
}

export type SubscriptionError =
  | 'price_inactive'
  | 'price_plan_mismatch'
  | 'trials_not_enabled'
  | 'invalid_trial_days'
  | 'trial_not_eligible'
  | 'payment_required'
  | 'subscription_canceled'
  | 'subscription_incomplete'
  | 'subscription_not_incomplete'
  | 'incomplete_not_expired'
  | 'subscription_paused'
  | 'subscription_not_paused'
  | 'subscription_past_due'
  | 'subscription_not_past_due'
  | 'subscription_trialing'
  | 'subscription_not_trialing'
  | 'subscription_not_resumable'
  | 'cancellation_scheduled'
  | 'cancellation_not_scheduled'
  | 'same_price'
  | 'not_per_seat'
  | 'same_quantity'
  | 'currency_mismatch'
  | 'outside_current_period'
  | 'period_not_ended'
  | 'trial_not_ended'
  | 'grace_period_not_over';

export type Outcome<S extends Subscription, E extends SubscriptionError = SubscriptionError> = Result<Transition<S>, E>;

export const transition = <S extends Subscription>(subscription: S, events: BillingEventType[], invoice: InvoiceDraft | null = null): Transition<S> => ({
  subscription,
  events,
  invoice,
});

/** The refusals of a subscription that is over or never started: never of a live one. */
export type EndedError = 'subscription_canceled' | 'subscription_incomplete';

/** The refusal for a subscription that is over or never started. */
export function endedError(subscription: Subscription): EndedError | null {
  if (subscription.status === 'canceled') return 'subscription_canceled';
  if (subscription.status === 'incomplete' || subscription.status === 'incomplete_expired') return 'subscription_incomplete';
  return null;
}

export const invoiceOrNull = (invoice: InvoiceDraft): InvoiceDraft | null => (invoice.lines.length > 0 ? invoice : null);

export const paidEvents = (invoice: InvoiceDraft | null): BillingEventType[] => (invoice !== null && invoice.subtotal > 0 ? ['invoice.paid'] : []);

/** The invoice for one full period of the subscription's price. */
export function periodInvoice(
  reason: InvoiceReason,
  price: PriceSnapshot,
  period: Period,
  creditBalance: number,
  usage: readonly InvoiceLine[] = [],
): InvoiceDraft {
  const lines: InvoiceLine[] = price.amount > 0 ? [{ kind: 'subscription', ...lineOfPrice(price), amount: price.amount, period }] : [];
  return draftInvoice(reason, price.currency, [...lines, ...usage.filter((l) => l.amount > 0)], creditBalance);
}

/** The period after the current one on the subscription's cycle. */
export const nextPeriod = (subscription: Subscription): Period => ({
  start: subscription.currentPeriodEnd,
  end: nextCycleBoundary(subscription.billingCycleAnchor, subscription.price.interval, subscription.currentPeriodEnd),
});
