import { err, ok } from '../result';
import { type Plan, type Price, resolveTrialDays, seatSnapshotOf } from './catalog';
import { type Period, addDays, cycleBoundary, toWholeSeconds } from './periods';
import { type Subscription, incompleteExpiresAt } from './subscription-status';
import { type Outcome, type PaymentOutcome, invoiceOrNull, paidEvents, periodInvoice, transition } from './subscription-transition';

export interface StartSubscriptionInput {
  id: string;
  price: Price;
  /** Seats of a per-seat price (absent: 1); a flat price ignores it. */
  quantity?: number;
  plan: Pick<Plan, 'id' | 'trialsEnabled' | 'defaultTrialDays'>;
  at: Date;
  /** Requested trial (checkout's trialDays); absent: the plan's default trial, if any. */
  trialDays?: number | null;
  /**
   * False when the customer already had a trial of this project: no default trial, and a requested
   * one is refused (`trial_not_eligible`), as Clerk offers a free trial once per payer.
   */
  eligibleForTrial?: boolean;
  creditBalance?: number;
  /** Result of charging the first invoice; required when it has an amount due. */
  payment?: PaymentOutcome;
}

/**
 * subscribe / checkout completed (spec: none -> active, "Card charged; subscription returned; event
 * subscription.created"):
 * - with a trial: `trialing`, period [now, trial end), anchor = trial end (Stripe: the anchor
 *   defaults "to the trial end date"), nothing charged, [subscription.created];
 * - without: period [now, now + interval), anchor = now, the first invoice charged:
 *   paid -> `active`, [subscription.created, invoice.paid];
 *   failed -> `incomplete` (not live, expires in 23 hours), [payment.failed];
 *   nothing due (free price, or covered by credit) -> `active`.
 */
export function startSubscription(input: StartSubscriptionInput): Outcome<Subscription> {
  const { price, plan } = input;
  if (!price.active) return err('price_inactive');
  if (price.planId !== plan.id) return err('price_plan_mismatch');
  const eligible = input.eligibleForTrial ?? true;
  if (!eligible && input.trialDays !== undefined && input.trialDays !== null) {
    return plan.trialsEnabled ? err('trial_not_eligible') : err('trials_not_enabled');
  }
  const trial = resolveTrialDays(plan, eligible ? input.trialDays : null);
  if (!trial.ok) return trial;
  const trialDays = eligible ? trial.value : null;
  const at = toWholeSeconds(input.at);
  const snapshot = seatSnapshotOf(price, input.quantity ?? 1);
  const base = {
    id: input.id,
    price: snapshot,
    currentPeriodStart: at,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    endedAt: null,
    pausedAt: null,
    pastDueAt: null,
    createdAt: at,
  };

  if (trialDays !== null) {
    const trialEnd = addDays(at, trialDays);
    const subscription: Subscription = {
      ...base,
      status: 'trialing',
      currentPeriodEnd: trialEnd,
      billingCycleAnchor: trialEnd,
      trialStart: at,
      trialEnd,
    };
    return ok(transition(subscription, ['subscription.created']));
  }

  const period: Period = { start: at, end: cycleBoundary(at, snapshot.interval, 1) };
  const invoice = periodInvoice('subscription_create', snapshot, period, input.creditBalance ?? 0);
  const subscription: Subscription = {
    ...base,
    status: 'active',
    currentPeriodEnd: period.end,
    billingCycleAnchor: at,
    trialStart: null,
    trialEnd: null,
  };
  if (invoice.amountDue > 0) {
    if (input.payment === undefined) return err('payment_required');
    if (input.payment === 'failed') {
      return ok(transition({ ...subscription, status: 'incomplete' }, ['payment.failed'], invoice));
    }
  }
  const paid = invoiceOrNull(invoice);
  return ok(transition(subscription, ['subscription.created', ...paidEvents(paid)], paid));
}

/**
 * The first invoice of an incomplete subscription paid later (another attempt, or after customer
 * action), within 23 hours: paid -> `active` on the period set at creation,
 * [subscription.created, invoice.paid]; failed again -> unchanged, [payment.failed]. The invoice is
 * the open one `startSubscription` returned.
 */
export function completeInitialPayment<S extends Subscription>(subscription: S, at: Date, payment: PaymentOutcome): Outcome<S> {
  if (subscription.status !== 'incomplete') return err('subscription_not_incomplete');
  if (toWholeSeconds(at).getTime() >= incompleteExpiresAt(subscription).getTime()) return err('subscription_incomplete');
  if (payment === 'failed') return ok(transition(subscription, ['payment.failed']));
  return ok(transition({ ...subscription, status: 'active' }, ['subscription.created', 'invoice.paid']));
}

/** incomplete -> `incomplete_expired` once 23 hours have passed; no event (nothing was announced). */
export function expireIncomplete<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
  if (subscription.status !== 'incomplete') return err('subscription_not_incomplete');
  const now = toWholeSeconds(at);
  if (now.getTime() < incompleteExpiresAt(subscription).getTime()) return err('incomplete_not_expired');
  return ok(transition({ ...subscription, status: 'incomplete_expired', endedAt: now }, []));
}
