import { toWholeSeconds } from './periods';
import { type Subscription, graceEndsAt, incompleteExpiresAt } from './subscription-status';
import { nextPeriod, periodInvoice } from './subscription-transition';

/** What the scheduler (sandbox renewals) must do for a subscription now. */
export type DueAction = 'none' | 'expire_incomplete' | 'end_trial' | 'renew' | 'end_at_period_end' | 'end_after_grace_period' | 'skip_paused_period';

/**
 * The transition due at `now`, if any; apply it and ask again until `none` (a clock moved by
 * several periods renews once per period). The grace-period end comes before a renewal.
 */
export function dueAction(subscription: Subscription, now: Date): DueAction {
  const t = toWholeSeconds(now).getTime();
  const periodOver = t >= subscription.currentPeriodEnd.getTime();
  switch (subscription.status) {
    case 'incomplete':
      return t >= incompleteExpiresAt(subscription).getTime() ? 'expire_incomplete' : 'none';
    case 'trialing':
      if (!periodOver) return 'none';
      return subscription.cancelAtPeriodEnd ? 'end_at_period_end' : 'end_trial';
    case 'past_due':
      if (subscription.pastDueAt !== null && t >= graceEndsAt(subscription.pastDueAt).getTime()) return 'end_after_grace_period';
      if (!periodOver) return 'none';
      return subscription.cancelAtPeriodEnd ? 'end_at_period_end' : 'renew';
    case 'active':
      if (!periodOver) return 'none';
      return subscription.cancelAtPeriodEnd ? 'end_at_period_end' : 'renew';
    case 'paused':
      return periodOver ? 'skip_paused_period' : 'none';
    case 'incomplete_expired':
    case 'canceled':
      return 'none';
  }
}

/** When the next {@link dueAction} falls due (for scheduling a job); null for ended subscriptions. */
export function nextActionAt(subscription: Subscription): Date | null {
  switch (subscription.status) {
    case 'incomplete':
      return incompleteExpiresAt(subscription);
    case 'past_due': {
      const grace = subscription.pastDueAt === null ? null : graceEndsAt(subscription.pastDueAt);
      return grace !== null && grace.getTime() < subscription.currentPeriodEnd.getTime() ? grace : subscription.currentPeriodEnd;
    }
    case 'trialing':
    case 'active':
    case 'paused':
      return subscription.currentPeriodEnd;
    case 'incomplete_expired':
    case 'canceled':
      return null;
  }
}

/**
 * The spec's "next invoice amount": the next period's price at the current period's end, less the
 * credit balance; null when nothing will be charged (pending cancellation, paused, ended).
 */
export function upcomingInvoice(subscription: Subscription, creditBalance = 0): { amount: number; currency: string; date: Date } | null {
  if (subscription.cancelAtPeriodEnd) return null;
  if (subscription.status !== 'active' && subscription.status !== 'trialing' && subscription.status !== 'past_due') return null;
  const invoice = periodInvoice('subscription_cycle', subscription.price, nextPeriod(subscription), creditBalance);
  return { amount: invoice.amountDue, currency: subscription.price.currency, date: subscription.currentPeriodEnd };
}
