import { err, ok } from '../result';
import { type Period, cycleBoundary, toWholeSeconds } from './periods';
import type { Subscription } from './subscription-status';
import {
  type EndedError,
  type Outcome,
  type PaymentOutcome,
  endedError,
  invoiceOrNull,
  paidEvents,
  periodInvoice,
  transition,
} from './subscription-transition';

/**
 * Cancel at period end -> pending cancellation (Stripe `cancel_at_period_end=true`: the subscription
 * runs, and stays entitled, until the period ends, then ends instead of renewing), from `active`,
 * `trialing` or `past_due`. A trial ends at its trial end without being charged. Not from `paused`
 * (cancel now instead). [subscription.updated]
 */
export function cancelAtPeriodEnd<S extends Subscription>(
  subscription: S,
  at: Date,
): Outcome<S, EndedError | 'subscription_paused' | 'cancellation_scheduled'> {
  const ended = endedError(subscription);
  if (ended) return err(ended);
  if (subscription.status === 'paused') return err('subscription_paused');
  if (subscription.cancelAtPeriodEnd) return err('cancellation_scheduled');
  return ok(transition({ ...subscription, cancelAtPeriodEnd: true, canceledAt: toWholeSeconds(at) }, ['subscription.updated']));
}

/**
 * Cancel now -> `canceled` from any live state (pending cancellation included). As Stripe's
 * immediate cancel without `prorate`, the unused time is not credited or refunded.
 * [subscription.canceled]
 */
export function cancelNow<S extends Subscription>(subscription: S, at: Date): Outcome<S, EndedError> {
  const ended = endedError(subscription);
  if (ended) return err(ended);
  const now = toWholeSeconds(at);
  return ok(
    transition({ ...subscription, status: 'canceled', cancelAtPeriodEnd: false, canceledAt: now, endedAt: now, pausedAt: null }, ['subscription.canceled']),
  );
}

/**
 * Pause -> `paused`, only from `active` with no cancellation scheduled: a trial has nothing to pause
 * (cancel at period end instead), a past-due subscription must be paid first (a pause is no way out
 * of dunning), a pending cancellation must be resumed first. Access stops at once. [subscription.updated]
 */
export function pause<S extends Subscription>(
  subscription: S,
  at: Date,
): Outcome<S, EndedError | 'subscription_paused' | 'subscription_past_due' | 'subscription_trialing' | 'cancellation_scheduled'> {
  const ended = endedError(subscription);
  if (ended) return err(ended);
  if (subscription.status === 'paused') return err('subscription_paused');
  if (subscription.status === 'past_due') return err('subscription_past_due');
  if (subscription.status === 'trialing') return err('subscription_trialing');
  if (subscription.cancelAtPeriodEnd) return err('cancellation_scheduled');
  return ok(transition({ ...subscription, status: 'paused', pausedAt: toWholeSeconds(at) }, ['subscription.updated']));
}

/**
 * Whether a paused subscription, resumed at `at`, is in a period that began while it was paused (a
 * renewal passed, skipped and not charged, or is due now): the paid period is over.
 */
export function pausedAcrossRenewal(subscription: Pick<Subscription, 'status' | 'pausedAt' | 'currentPeriodStart' | 'currentPeriodEnd'>, at: Date): boolean {
  if (subscription.status !== 'paused') return false;
  const now = toWholeSeconds(at).getTime();
  if (subscription.currentPeriodEnd.getTime() <= now) return true;
  return subscription.pausedAt !== null && subscription.currentPeriodStart.getTime() > subscription.pausedAt.getTime();
}

/**
 * Resume (spec: "paused or pending cancellation -> resumed", subscription.updated):
 * - `paused`, within the period it was paused in (already paid) -> `active` on the same billing
 *   cycle, nothing charged;
 * - `paused`, once a period began while paused ({@link pausedAcrossRenewal}) -> a new period
 *   [now, now + interval) starts, anchored now, and its invoice is charged at once (reason
 *   `subscription_update`, as Stripe's `billing_cycle_anchor=now`): paid -> `active`,
 *   [subscription.updated, invoice.paid]; failed -> unchanged (still paused), [payment.failed];
 * - pending cancellation -> the scheduled end is dropped; the status stays (active, trialing or
 *   past_due).
 */
export function resume<S extends Subscription>(
  subscription: S,
  at: Date,
  payment?: PaymentOutcome,
  creditBalance = 0,
): Outcome<S, EndedError | 'payment_required' | 'subscription_not_resumable'> {
  const ended = endedError(subscription);
  if (ended) return err(ended);
  if (subscription.status === 'paused') {
    const now = toWholeSeconds(at);
    const resumed: S = { ...subscription, status: 'active', pausedAt: null };
    if (!pausedAcrossRenewal(subscription, now)) return ok(transition(resumed, ['subscription.updated']));
    const period: Period = { start: now, end: cycleBoundary(now, subscription.price.interval, 1) };
    const invoice = periodInvoice('subscription_update', subscription.price, period, creditBalance);
    if (invoice.amountDue > 0) {
      if (payment === undefined) return err('payment_required');
      if (payment === 'failed') return ok(transition(subscription, ['payment.failed'], invoice));
    }
    const billed = invoiceOrNull(invoice);
    const restarted: S = { ...resumed, currentPeriodStart: period.start, currentPeriodEnd: period.end, billingCycleAnchor: now };
    return ok(transition(restarted, ['subscription.updated', ...paidEvents(billed)], billed));
  }
  if (subscription.cancelAtPeriodEnd) {
    return ok(transition({ ...subscription, cancelAtPeriodEnd: false, canceledAt: null }, ['subscription.updated']));
  }
  return err('subscription_not_resumable');
}
