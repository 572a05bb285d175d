import { err, ok } from '../result';
import type { InvoiceLine } from './invoice';
import { toWholeSeconds } from './periods';
import { type Subscription, graceEndsAt } from './subscription-status';
import { type Outcome, type PaymentOutcome, endedError, invoiceOrNull, nextPeriod, paidEvents, periodInvoice, transition } from './subscription-transition';

/**
 * Renewal at the end of a period, from `active` or `past_due` with no cancellation scheduled. The
 * period advances whatever the payment outcome (Stripe starts the new period and leaves its invoice
 * open for retries):
 * - paid (or nothing due) -> `active`, past-due marker cleared; [invoice.paid], plus
 *   subscription.updated when it was past_due;
 * - failed -> `past_due` (the past-due clock keeps its first failure); [payment.failed], plus
 *   subscription.updated when it was active.
 * `usage`: the ended period's metered lines (usage past the included amount, billed in arrears on
 * the renewal invoice, as Stripe bills a metered price's usage).
 */
export function renew<S extends Subscription>(
  subscription: S,
  at: Date,
  payment: PaymentOutcome | undefined,
  creditBalance = 0,
  usage: readonly InvoiceLine[] = [],
): Outcome<S> {
  const ended = endedError(subscription);
  if (ended) return err(ended);
  if (subscription.status === 'paused') return err('subscription_paused');
  if (subscription.status === 'trialing') return err('subscription_trialing');
  if (subscription.cancelAtPeriodEnd) return err('cancellation_scheduled');
  const now = toWholeSeconds(at);
  if (now.getTime() < subscription.currentPeriodEnd.getTime()) return err('period_not_ended');
  const period = nextPeriod(subscription);
  const invoice = periodInvoice('subscription_cycle', subscription.price, period, creditBalance, usage);
  const advanced: S = { ...subscription, currentPeriodStart: period.start, currentPeriodEnd: period.end };
  const wasPastDue = subscription.status === 'past_due';
  if (invoice.amountDue > 0) {
    if (payment === undefined) return err('payment_required');
    if (payment === 'failed') {
      const failed: S = { ...advanced, status: 'past_due', pastDueAt: subscription.pastDueAt ?? now };
      return ok(transition(failed, ['payment.failed', ...(wasPastDue ? [] : (['subscription.updated'] as const))], invoice));
    }
  }
  const billed = invoiceOrNull(invoice);
  const paid: S = { ...advanced, status: 'active', pastDueAt: null };
  return ok(transition(paid, [...paidEvents(billed), ...(wasPastDue ? (['subscription.updated'] as const) : [])], billed));
}

/**
 * Another attempt at a past-due subscription's open invoice (a retry, or a new card): paid ->
 * `active`, [invoice.paid, subscription.updated]; failed -> unchanged, [payment.failed].
 * The billing period does not move: it advanced when the invoice was created.
 */
export function retryPayment<S extends Subscription>(subscription: S, payment: PaymentOutcome): Outcome<S> {
  if (subscription.status !== 'past_due') return err('subscription_not_past_due');
  if (payment === 'failed') return ok(transition(subscription, ['payment.failed']));
  return ok(transition({ ...subscription, status: 'active', pastDueAt: null }, ['invoice.paid', 'subscription.updated']));
}

/**
 * Trial end (no cancellation scheduled): the first full period [trial end, trial end + interval)
 * starts and its invoice is charged: paid -> `active`, [invoice.paid, subscription.updated];
 * failed -> `past_due` (a failed renewal, as on Stripe where the trial's $0 invoice was the first),
 * [payment.failed, subscription.updated].
 */
export function endTrial<S extends Subscription>(subscription: S, at: Date, payment: PaymentOutcome | undefined, creditBalance = 0): Outcome<S> {
  if (subscription.status !== 'trialing') return err('subscription_not_trialing');
  if (subscription.cancelAtPeriodEnd) return err('cancellation_scheduled');
  const now = toWholeSeconds(at);
  if (now.getTime() < subscription.currentPeriodEnd.getTime()) return err('trial_not_ended');
  const period = nextPeriod(subscription);
  const invoice = periodInvoice('subscription_cycle', subscription.price, period, creditBalance);
  const advanced: S = { ...subscription, currentPeriodStart: period.start, currentPeriodEnd: period.end };
  if (invoice.amountDue > 0) {
    if (payment === undefined) return err('payment_required');
    if (payment === 'failed') {
      return ok(transition({ ...advanced, status: 'past_due', pastDueAt: now }, ['payment.failed', 'subscription.updated'], invoice));
    }
  }
  const billed = invoiceOrNull(invoice);
  return ok(transition({ ...advanced, status: 'active' }, [...paidEvents(billed), 'subscription.updated'], billed));
}

/**
 * A trial ended now rather than at its end (Stripe's `trial_end=now`): the cycle restarts now, the
 * first full period [now, now + interval) is invoiced (reason `subscription_update`) and charged,
 * as {@link endTrial} at its end. Tollgate does this to a trial the user was not eligible for (a
 * second trial taken through a checkout opened before the first one was used).
 */
export function endTrialNow<S extends Subscription>(subscription: S, at: Date, payment: PaymentOutcome | undefined, creditBalance = 0): Outcome<S> {
  if (subscription.status !== 'trialing') return err('subscription_not_trialing');
  const now = toWholeSeconds(at);
  const cut: S = { ...subscription, currentPeriodEnd: now, trialEnd: now, billingCycleAnchor: now };
  const ended = endTrial(cut, now, payment, creditBalance);
  if (!ended.ok || ended.value.invoice === null) return ended;
  return ok(transition(ended.value.subscription, [...ended.value.events], { ...ended.value.invoice, reason: 'subscription_update' }));
}

/**
 * A pending cancellation reaches its period end -> `canceled`, ended at the period end
 * (spec: "the final cancellation is subscription.canceled"). [subscription.canceled]
 */
export function endAtPeriodEnd<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
  const ended = endedError(subscription);
  if (ended) return err(ended);
  if (!subscription.cancelAtPeriodEnd) return err('cancellation_not_scheduled');
  if (toWholeSeconds(at).getTime() < subscription.currentPeriodEnd.getTime()) return err('period_not_ended');
  return ok(transition({ ...subscription, status: 'canceled', cancelAtPeriodEnd: false, endedAt: subscription.currentPeriodEnd }, ['subscription.canceled']));
}

/** Past due for the whole grace period -> `canceled` (retries exhausted). [subscription.canceled] */
export function endAfterGracePeriod<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
  if (subscription.status !== 'past_due' || subscription.pastDueAt === null) return err('subscription_not_past_due');
  const now = toWholeSeconds(at);
  if (now.getTime() < graceEndsAt(subscription.pastDueAt).getTime()) return err('grace_period_not_over');
  return ok(transition({ ...subscription, status: 'canceled', cancelAtPeriodEnd: false, canceledAt: now, endedAt: now }, ['subscription.canceled']));
}

/** A period ends while paused: the next period starts, nothing is charged, no event. */
export function skipPausedPeriod<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
  if (subscription.status !== 'paused') return err('subscription_not_paused');
  if (toWholeSeconds(at).getTime() < subscription.currentPeriodEnd.getTime()) return err('period_not_ended');
  const period = nextPeriod(subscription);
  return ok(transition({ ...subscription, currentPeriodStart: period.start, currentPeriodEnd: period.end }, []));
}
