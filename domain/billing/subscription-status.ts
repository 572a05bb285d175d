import type { PriceSnapshot } from './catalog';
import { type Period, addDays, addSeconds } from './periods';

/**
 * Subscription statuses, a subset of Stripe's (https://docs.stripe.com/api/subscriptions/object,
 * `status`), with the same meanings:
 * - `incomplete`: the first payment failed or needs action; "A successful payment needs to be made
 *   within 23 hours to activate the subscription";
 * - `incomplete_expired`: that payment never came: terminal, nothing was ever announced;
 * - `trialing`: in a trial, no charge yet; "moves to active when the trial period is over";
 * - `active`: paid up;
 * - `past_due`: "payment is required but cannot be paid"; Stripe keeps retrying;
 * - `paused`: Tollgate's pause (below);
 * - `canceled`: terminal.
 * Stripe's `unpaid` is not used: the Stripe adapter reports it as `past_due`, whose grace period
 * ({@link PAST_DUE_GRACE_DAYS}) ends entitlement anyway.
 *
 * "Pending cancellation" (a state the spec names) is not a status: like Stripe, a subscription
 * cancelled at period end keeps its status (`active`, `trialing` or `past_due`) with
 * `cancelAtPeriodEnd = true` until the period ends. {@link subscriptionState} derives the state shown
 * to people and returned as the entitlements `status`: `pending_cancellation`.
 *
 * Pause: Tollgate's `paused` is a service pause. Access stops at once and no renewal is charged while
 * paused; billing dates keep running (periods that end while paused are skipped, not charged).
 * Resuming within the period that was paid continues the same cycle (the next charge at its end);
 * resuming once a period began while paused starts a new period at once and charges it, as Paddle
 * and Chargebee do on resume, so a pause across a renewal never gives the next period free. With Stripe
 * this is `pause_collection[behavior]=void` ("invoices are created and immediately voided"; the
 * Stripe subscription's own status stays `active`, https://docs.stripe.com/billing/subscriptions/pause-payment)
 * plus Tollgate's own `paused` status.
 */
export const SUBSCRIPTION_STATUSES = ['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'paused', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** The state shown to people: the status, or `pending_cancellation` while a cancellation is scheduled. */
export type SubscriptionState = SubscriptionStatus | 'pending_cancellation';

/**
 * Live subscriptions are the ones a user can have only one of per project (a second subscribe or
 * checkout answers 409): everything that has started and not ended. `incomplete` is not live: a
 * declined first payment "leaves no live subscription" and the user may try another card.
 */
export const LIVE_STATUSES = ['trialing', 'active', 'past_due', 'paused'] as const satisfies readonly SubscriptionStatus[];

/** Stripe: an incomplete subscription expires if its first invoice is not paid within 23 hours. */
export const INCOMPLETE_EXPIRY_SECONDS = 23 * 60 * 60;

/**
 * How long a past-due subscription stays entitled and open before Tollgate ends it: Stripe's
 * recommended Smart Retries default is "8 tries within 2 weeks"
 * (https://docs.stripe.com/billing/revenue-recovery/smart-retries); the sandbox retries within the
 * same window and cancels after it, as Stripe's "cancel the subscription" setting does.
 */
export const PAST_DUE_GRACE_DAYS = 14;

export interface Subscription {
  id: string;
  status: SubscriptionStatus;
  /** The price it is billed on (one item per subscription). */
  price: PriceSnapshot;
  /**
   * The current billing period [start, end). In Stripe API 2025-03-31.basil and later these live on
   * the subscription item (`items.data[0].current_period_start/_end`), no longer on the subscription
   * (https://docs.stripe.com/changelog/basil/2025-03-31/deprecate-subscription-current-period-start-and-end);
   * the Stripe adapter reads them from the item. Tollgate has one item, so one period.
   */
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  /** Aligns every billing date (see periods.ts). Creation time, or the trial end. */
  billingCycleAnchor: Date;
  /** Pending cancellation: ends at `currentPeriodEnd` instead of renewing. */
  cancelAtPeriodEnd: boolean;
  /** When the cancellation was asked for (at period end or now); null if none. */
  canceledAt: Date | null;
  /** When it stopped (canceled or expired); null while it runs. */
  endedAt: Date | null;
  trialStart: Date | null;
  trialEnd: Date | null;
  pausedAt: Date | null;
  /** First failed payment of the current delinquency; null when paid up. */
  pastDueAt: Date | null;
  createdAt: Date;
}

export const isLive = (subscription: Pick<Subscription, 'status'>): boolean => (LIVE_STATUSES as readonly string[]).includes(subscription.status);

export function subscriptionState(subscription: Pick<Subscription, 'status' | 'cancelAtPeriodEnd'>): SubscriptionState {
  const { status } = subscription;
  if (subscription.cancelAtPeriodEnd && (status === 'active' || status === 'trialing' || status === 'past_due')) {
    return 'pending_cancellation';
  }
  return status;
}

export const currentPeriod = (subscription: Pick<Subscription, 'currentPeriodStart' | 'currentPeriodEnd'>): Period => ({
  start: subscription.currentPeriodStart,
  end: subscription.currentPeriodEnd,
});

/** When an incomplete subscription expires: 23 hours after creation. */
export const incompleteExpiresAt = (subscription: Pick<Subscription, 'createdAt'>): Date => addSeconds(subscription.createdAt, INCOMPLETE_EXPIRY_SECONDS);

/** When a past-due subscription's grace period is over. */
export const graceEndsAt = (pastDueAt: Date): Date => addDays(pastDueAt, PAST_DUE_GRACE_DAYS);
