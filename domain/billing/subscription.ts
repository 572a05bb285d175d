import { type Result, err, ok } from '../result';
import { type Plan, type Price, type PriceSnapshot, resolveTrialDays, snapshotOf } from './catalog';
import { type BillingEventType } from './events';
import { type InvoiceDraft, type InvoiceLine, type InvoiceReason, draftInvoice } from './invoice';
import { type Period, addDays, addSeconds, cycleBoundary, nextCycleBoundary, periodContaining, toWholeSeconds } from './periods';
import { type PriceChangePreview, previewPriceChange } from './proration';

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
export const SUBSCRIPTION_STATUSES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'paused',
  'canceled',
] as const;
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

export const isLive = (subscription: Pick<Subscription, 'status'>): boolean =>
  (LIVE_STATUSES as readonly string[]).includes(subscription.status);

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
  | 'currency_mismatch'
  | 'outside_current_period'
  | 'period_not_ended'
  | 'trial_not_ended'
  | 'grace_period_not_over';

type Outcome<S extends Subscription, E extends SubscriptionError = SubscriptionError> = Result<Transition<S>, E>;

const transition = <S extends Subscription>(
  subscription: S,
  events: BillingEventType[],
  invoice: InvoiceDraft | null = null,
): Transition<S> => ({ subscription, events, invoice });

/** The refusal for a subscription that is over or never started. */
function endedError(subscription: Subscription): 'subscription_canceled' | 'subscription_incomplete' | null {
  if (subscription.status === 'canceled') return 'subscription_canceled';
  if (subscription.status === 'incomplete' || subscription.status === 'incomplete_expired') return 'subscription_incomplete';
  return null;
}

const invoiceOrNull = (invoice: InvoiceDraft): InvoiceDraft | null => (invoice.lines.length > 0 ? invoice : null);

const paidEvents = (invoice: InvoiceDraft | null): BillingEventType[] =>
  invoice !== null && invoice.subtotal > 0 ? ['invoice.paid'] : [];

/** The invoice for one full period of the subscription's price. */
function periodInvoice(
  reason: InvoiceReason,
  price: PriceSnapshot,
  period: Period,
  creditBalance: number,
): InvoiceDraft {
  const lines: InvoiceLine[] = price.amount > 0 ? [{ kind: 'subscription', priceId: price.id, amount: price.amount, period }] : [];
  return draftInvoice(reason, price.currency, lines, creditBalance);
}

export interface StartSubscriptionInput {
  id: string;
  price: Price;
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
  const snapshot = snapshotOf(price);
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

/** When an incomplete subscription expires: 23 hours after creation. */
export const incompleteExpiresAt = (subscription: Pick<Subscription, 'createdAt'>): Date =>
  addSeconds(subscription.createdAt, INCOMPLETE_EXPIRY_SECONDS);

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

/**
 * Where a price change is allowed: `active` (prorated, charged now) and `trialing` (the price is
 * swapped, the trial continues, nothing is charged; the new interval applies from the trial end).
 * Refused: `past_due` (pay the open invoice first: Stripe warns that prorating an unpaid period
 * credits time that was never paid), `paused` (resume first), pending cancellation (resume first,
 * so one request never both changes and keeps a scheduled end), and ended subscriptions. The new
 * price must be active, different and in the same currency.
 */
function checkChange(subscription: Subscription, price: Price): SubscriptionError | null {
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
): Result<PriceChangePreview | null, SubscriptionError> {
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
export function changePrice<S extends Subscription>(
  subscription: S,
  price: Price,
  at: Date,
  options: PriceChangeOptions = {},
): Outcome<S> {
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

/**
 * Cancel at period end -> pending cancellation (Stripe `cancel_at_period_end=true`: the subscription
 * runs, and stays entitled, until the period ends, then ends instead of renewing), from `active`,
 * `trialing` or `past_due`. A trial ends at its trial end without being charged. Not from `paused`
 * (cancel now instead). [subscription.updated]
 */
export function cancelAtPeriodEnd<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
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
export function cancelNow<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
  const ended = endedError(subscription);
  if (ended) return err(ended);
  const now = toWholeSeconds(at);
  return ok(
    transition(
      { ...subscription, status: 'canceled', cancelAtPeriodEnd: false, canceledAt: now, endedAt: now, pausedAt: null },
      ['subscription.canceled'],
    ),
  );
}

/**
 * Pause -> `paused`, only from `active` with no cancellation scheduled: a trial has nothing to pause
 * (cancel at period end instead), a past-due subscription must be paid first (a pause is no way out
 * of dunning), a pending cancellation must be resumed first. Access stops at once. [subscription.updated]
 */
export function pause<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
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
export function resume<S extends Subscription>(subscription: S, at: Date, payment?: PaymentOutcome, creditBalance = 0): Outcome<S> {
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

/** The period after the current one on the subscription's cycle. */
const nextPeriod = (subscription: Subscription): Period => ({
  start: subscription.currentPeriodEnd,
  end: nextCycleBoundary(subscription.billingCycleAnchor, subscription.price.interval, subscription.currentPeriodEnd),
});

/**
 * Renewal at the end of a period, from `active` or `past_due` with no cancellation scheduled. The
 * period advances whatever the payment outcome (Stripe starts the new period and leaves its invoice
 * open for retries):
 * - paid (or nothing due) -> `active`, past-due marker cleared; [invoice.paid], plus
 *   subscription.updated when it was past_due;
 * - failed -> `past_due` (the past-due clock keeps its first failure); [payment.failed], plus
 *   subscription.updated when it was active.
 */
export function renew<S extends Subscription>(
  subscription: S,
  at: Date,
  payment: PaymentOutcome | undefined,
  creditBalance = 0,
): Outcome<S> {
  const ended = endedError(subscription);
  if (ended) return err(ended);
  if (subscription.status === 'paused') return err('subscription_paused');
  if (subscription.status === 'trialing') return err('subscription_trialing');
  if (subscription.cancelAtPeriodEnd) return err('cancellation_scheduled');
  const now = toWholeSeconds(at);
  if (now.getTime() < subscription.currentPeriodEnd.getTime()) return err('period_not_ended');
  const period = nextPeriod(subscription);
  const invoice = periodInvoice('subscription_cycle', subscription.price, period, creditBalance);
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
export function endTrial<S extends Subscription>(
  subscription: S,
  at: Date,
  payment: PaymentOutcome | undefined,
  creditBalance = 0,
): Outcome<S> {
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
  return ok(
    transition(
      { ...subscription, status: 'canceled', cancelAtPeriodEnd: false, endedAt: subscription.currentPeriodEnd },
      ['subscription.canceled'],
    ),
  );
}

/** When a past-due subscription's grace period is over. */
export const graceEndsAt = (pastDueAt: Date): Date => addDays(pastDueAt, PAST_DUE_GRACE_DAYS);

/** Past due for the whole grace period -> `canceled` (retries exhausted). [subscription.canceled] */
export function endAfterGracePeriod<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
  if (subscription.status !== 'past_due' || subscription.pastDueAt === null) return err('subscription_not_past_due');
  const now = toWholeSeconds(at);
  if (now.getTime() < graceEndsAt(subscription.pastDueAt).getTime()) return err('grace_period_not_over');
  return ok(
    transition(
      { ...subscription, status: 'canceled', cancelAtPeriodEnd: false, canceledAt: now, endedAt: now },
      ['subscription.canceled'],
    ),
  );
}

/** A period ends while paused: the next period starts, nothing is charged, no event. */
export function skipPausedPeriod<S extends Subscription>(subscription: S, at: Date): Outcome<S> {
  if (subscription.status !== 'paused') return err('subscription_not_paused');
  if (toWholeSeconds(at).getTime() < subscription.currentPeriodEnd.getTime()) return err('period_not_ended');
  const period = nextPeriod(subscription);
  return ok(transition({ ...subscription, currentPeriodStart: period.start, currentPeriodEnd: period.end }, []));
}

/** What the scheduler (sandbox renewals) must do for a subscription now. */
export type DueAction =
  | 'none'
  | 'expire_incomplete'
  | 'end_trial'
  | 'renew'
  | 'end_at_period_end'
  | 'end_after_grace_period'
  | 'skip_paused_period';

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
export function upcomingInvoice(
  subscription: Subscription,
  creditBalance = 0,
): { amount: number; currency: string; date: Date } | null {
  if (subscription.cancelAtPeriodEnd) return null;
  if (subscription.status !== 'active' && subscription.status !== 'trialing' && subscription.status !== 'past_due') return null;
  const invoice = periodInvoice('subscription_cycle', subscription.price, nextPeriod(subscription), creditBalance);
  return { amount: invoice.amountDue, currency: subscription.price.currency, date: subscription.currentPeriodEnd };
}
