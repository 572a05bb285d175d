import { describe, expect, it } from 'vitest';
import { type Price, seatSnapshotOf } from './catalog';
import {
  type Subscription,
  type Transition,
  cancelAtPeriodEnd,
  cancelNow,
  changePrice,
  changeQuantity,
  completeInitialPayment,
  dueAction,
  endAfterGracePeriod,
  endAtPeriodEnd,
  endTrial,
  expireIncomplete,
  graceEndsAt,
  incompleteExpiresAt,
  isLive,
  nextActionAt,
  pause,
  previewChange,
  renew,
  resume,
  pausedAcrossRenewal,
  endTrialNow,
  retryPayment,
  skipPausedPeriod,
  startSubscription,
  subscriptionState,
  upcomingInvoice,
} from './subscription';

const d = (iso: string): Date => new Date(iso);

const basic: Price = { id: 'price_basic', planId: 'plan_basic', name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month', active: true, seats: null };
const pro: Price = { id: 'price_pro', planId: 'plan_pro', name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month', active: true, seats: null };
const proYearly: Price = {
  id: 'price_pro_y',
  planId: 'plan_pro',
  name: 'Yearly',
  amount: 20_000,
  currency: 'usd',
  interval: 'year',
  active: true,
  seats: null,
};
const free: Price = { id: 'price_free', planId: 'plan_free', name: 'Free', amount: 0, currency: 'usd', interval: 'month', active: true, seats: null };
const basicPlan = { id: 'plan_basic', trialsEnabled: false, defaultTrialDays: null };
const proPlan = { id: 'plan_pro', trialsEnabled: true, defaultTrialDays: 14 };
const freePlan = { id: 'plan_free', trialsEnabled: false, defaultTrialDays: null };

function value<T>(result: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.error}`);
  return result.value;
}

/** An active Basic subscription started and paid on Apr 1 2025: period Apr 1 -> May 1. */
const activeOnApril1 = (): Subscription =>
  value(startSubscription({ id: 'sub_1', price: basic, plan: basicPlan, at: d('2025-04-01T00:00:00Z'), payment: 'paid' })).subscription;

/** A Pro subscription in a 14-day trial from Apr 1 2025 (trial end Apr 15). */
const trialingOnApril1 = (): Subscription => value(startSubscription({ id: 'sub_t', price: pro, plan: proPlan, at: d('2025-04-01T00:00:00Z') })).subscription;

const pastDue = (): Subscription => value(renew(activeOnApril1(), d('2025-05-01T00:00:00Z'), 'failed')).subscription;
const paused = (): Subscription => value(pause(activeOnApril1(), d('2025-04-10T00:00:00Z'))).subscription;
const pending = (): Subscription => value(cancelAtPeriodEnd(activeOnApril1(), d('2025-04-10T00:00:00Z'))).subscription;
const canceled = (): Subscription => value(cancelNow(activeOnApril1(), d('2025-04-10T00:00:00Z'))).subscription;
const incomplete = (): Subscription =>
  value(startSubscription({ id: 'sub_i', price: basic, plan: basicPlan, at: d('2025-04-01T00:00:00Z'), payment: 'failed' })).subscription;

describe('startSubscription', () => {
  it('paid: active for one interval from now, first invoice charged; subscription.created then invoice.paid', () => {
    const t = value(startSubscription({ id: 'sub_1', price: basic, plan: basicPlan, at: d('2025-01-31T10:00:00.750Z'), payment: 'paid' }));
    expect(t.events).toEqual(['subscription.created', 'invoice.paid']);
    expect(t.subscription).toEqual({
      id: 'sub_1',
      status: 'active',
      price: { id: 'price_basic', planId: 'plan_basic', amount: 1000, currency: 'usd', interval: 'month' },
      currentPeriodStart: d('2025-01-31T10:00:00Z'),
      currentPeriodEnd: d('2025-02-28T10:00:00Z'),
      billingCycleAnchor: d('2025-01-31T10:00:00Z'),
      cancelAtPeriodEnd: false,
      canceledAt: null,
      endedAt: null,
      trialStart: null,
      trialEnd: null,
      pausedAt: null,
      pastDueAt: null,
      createdAt: d('2025-01-31T10:00:00Z'),
    });
    expect(t.invoice).toMatchObject({ reason: 'subscription_create', subtotal: 1000, amountDue: 1000, currency: 'usd' });
    expect(t.invoice!.lines).toEqual([
      { kind: 'subscription', priceId: 'price_basic', amount: 1000, period: { start: d('2025-01-31T10:00:00Z'), end: d('2025-02-28T10:00:00Z') } },
    ]);
    expect(isLive(t.subscription)).toBe(true);
  });

  it('declined: incomplete and not live, only payment.failed, the open invoice returned', () => {
    const t = value(startSubscription({ id: 'sub_1', price: basic, plan: basicPlan, at: d('2025-04-01T00:00:00Z'), payment: 'failed' }));
    expect(t.subscription.status).toBe('incomplete');
    expect(t.events).toEqual(['payment.failed']);
    expect(t.invoice?.amountDue).toBe(1000);
    expect(isLive(t.subscription)).toBe(false);
  });

  it('an amount due needs a payment outcome', () => {
    expect(startSubscription({ id: 's', price: basic, plan: basicPlan, at: d('2025-04-01T00:00:00Z') })).toEqual({
      ok: false,
      error: 'payment_required',
    });
  });

  it('a requested trial: trialing until the trial end, which anchors the cycle; nothing charged', () => {
    const t = value(startSubscription({ id: 's', price: pro, plan: proPlan, at: d('2025-04-01T08:30:00Z'), trialDays: 7 }));
    expect(t.events).toEqual(['subscription.created']);
    expect(t.invoice).toBeNull();
    expect(t.subscription).toMatchObject({
      status: 'trialing',
      trialStart: d('2025-04-01T08:30:00Z'),
      trialEnd: d('2025-04-08T08:30:00Z'),
      currentPeriodStart: d('2025-04-01T08:30:00Z'),
      currentPeriodEnd: d('2025-04-08T08:30:00Z'),
      billingCycleAnchor: d('2025-04-08T08:30:00Z'),
    });
  });

  it("the plan's default trial applies when none is requested", () => {
    const t = value(startSubscription({ id: 's', price: pro, plan: proPlan, at: d('2025-04-01T00:00:00Z') }));
    expect(t.subscription.trialEnd).toEqual(d('2025-04-15T00:00:00Z'));
  });

  it('trial rules: only with trials enabled, 1..730 days', () => {
    const at = d('2025-04-01T00:00:00Z');
    expect(startSubscription({ id: 's', price: basic, plan: basicPlan, at, trialDays: 7, payment: 'paid' })).toEqual({
      ok: false,
      error: 'trials_not_enabled',
    });
    expect(startSubscription({ id: 's', price: pro, plan: proPlan, at, trialDays: 0 })).toEqual({ ok: false, error: 'invalid_trial_days' });
    expect(startSubscription({ id: 's', price: pro, plan: proPlan, at, trialDays: 731 })).toEqual({ ok: false, error: 'invalid_trial_days' });
    expect(value(startSubscription({ id: 's', price: pro, plan: proPlan, at, trialDays: 730 })).subscription.trialEnd).toEqual(d('2027-04-01T00:00:00Z'));
  });

  it('a customer who had a trial gets none by default and is refused one on request', () => {
    const at = d('2025-04-01T00:00:00Z');
    const t = value(startSubscription({ id: 's', price: pro, plan: proPlan, at, eligibleForTrial: false, payment: 'paid' }));
    expect(t.subscription.status).toBe('active');
    expect(t.events).toEqual(['subscription.created', 'invoice.paid']);
    expect(startSubscription({ id: 's', price: pro, plan: proPlan, at, eligibleForTrial: false, trialDays: 7 })).toEqual({
      ok: false,
      error: 'trial_not_eligible',
    });
    expect(startSubscription({ id: 's', price: basic, plan: basicPlan, at, eligibleForTrial: false, trialDays: 7 })).toEqual({
      ok: false,
      error: 'trials_not_enabled',
    });
  });

  it('refuses an archived price or a price of another plan', () => {
    const at = d('2025-04-01T00:00:00Z');
    expect(startSubscription({ id: 's', price: { ...basic, active: false }, plan: basicPlan, at, payment: 'paid' })).toEqual({
      ok: false,
      error: 'price_inactive',
    });
    expect(startSubscription({ id: 's', price: pro, plan: basicPlan, at, payment: 'paid' })).toEqual({
      ok: false,
      error: 'price_plan_mismatch',
    });
  });

  it('a free price needs no payment and produces no invoice', () => {
    const t = value(startSubscription({ id: 's', price: free, plan: freePlan, at: d('2025-04-01T00:00:00Z') }));
    expect(t.subscription.status).toBe('active');
    expect(t.events).toEqual(['subscription.created']);
    expect(t.invoice).toBeNull();
  });

  it('a credit balance covering the first invoice needs no card charge; the invoice is still paid', () => {
    const t = value(startSubscription({ id: 's', price: basic, plan: basicPlan, at: d('2025-04-01T00:00:00Z'), creditBalance: 1500 }));
    expect(t.events).toEqual(['subscription.created', 'invoice.paid']);
    expect(t.invoice).toMatchObject({ subtotal: 1000, creditApplied: 1000, amountDue: 0, creditBalanceAfter: 500 });
  });
});

describe('incomplete subscriptions', () => {
  it('a later successful payment within 23 hours activates it: subscription.created, invoice.paid', () => {
    const t = value(completeInitialPayment(incomplete(), d('2025-04-01T22:59:59Z'), 'paid'));
    expect(t.subscription.status).toBe('active');
    expect(t.subscription.currentPeriodEnd).toEqual(d('2025-05-01T00:00:00Z'));
    expect(t.events).toEqual(['subscription.created', 'invoice.paid']);
  });

  it('another failure changes nothing but records payment.failed', () => {
    const sub = incomplete();
    expect(value(completeInitialPayment(sub, d('2025-04-01T01:00:00Z'), 'failed'))).toEqual({
      subscription: sub,
      events: ['payment.failed'],
      invoice: null,
    });
  });

  it('after 23 hours it can no longer be completed, and it expires without an event', () => {
    expect(completeInitialPayment(incomplete(), d('2025-04-01T23:00:00Z'), 'paid')).toEqual({ ok: false, error: 'subscription_incomplete' });
    expect(expireIncomplete(incomplete(), d('2025-04-01T22:59:59Z'))).toEqual({ ok: false, error: 'incomplete_not_expired' });
    const t = value(expireIncomplete(incomplete(), d('2025-04-01T23:00:00Z')));
    expect(t.subscription).toMatchObject({ status: 'incomplete_expired', endedAt: d('2025-04-01T23:00:00Z') });
    expect(t.events).toEqual([]);
  });

  it('only incomplete subscriptions complete or expire', () => {
    expect(completeInitialPayment(activeOnApril1(), d('2025-04-01T01:00:00Z'), 'paid')).toEqual({
      ok: false,
      error: 'subscription_not_incomplete',
    });
    expect(expireIncomplete(activeOnApril1(), d('2025-04-03T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_not_incomplete' });
  });
});

describe('changePrice', () => {
  const mid = d('2025-04-16T00:00:00Z');

  it('upgrade halfway through: same subscription and dates, prorated invoice of 5 USD; subscription.updated, invoice.paid', () => {
    const before = activeOnApril1();
    const t = value(changePrice(before, pro, mid, { payment: 'paid' }));
    expect(t.subscription).toEqual({ ...before, price: { id: 'price_pro', planId: 'plan_pro', amount: 2000, currency: 'usd', interval: 'month' } });
    expect(t.events).toEqual(['subscription.updated', 'invoice.paid']);
    expect(t.invoice?.lines.map((l) => [l.kind, l.amount])).toEqual([
      ['unused_time', -500],
      ['remaining_time', 1000],
    ]);
    expect(t.invoice).toMatchObject({ reason: 'subscription_update', amountDue: 500 });
  });

  it('the preview shows the same amount before confirming', () => {
    const preview = value(previewChange(activeOnApril1(), pro, mid));
    expect(preview?.invoice.amountDue).toBe(500);
    expect(value(previewChange(activeOnApril1(), pro, mid, 200))?.invoice.amountDue).toBe(300);
  });

  it('a declined charge leaves the subscription as it was and records only payment.failed', () => {
    const before = activeOnApril1();
    const t = value(changePrice(before, pro, mid, { payment: 'failed' }));
    expect(t.subscription).toEqual(before);
    expect(t.events).toEqual(['payment.failed']);
    expect(t.invoice?.amountDue).toBe(500);
  });

  it('an amount due needs a payment outcome', () => {
    expect(changePrice(activeOnApril1(), pro, mid)).toEqual({ ok: false, error: 'payment_required' });
  });

  it('downgrade: nothing to charge, the credit goes to the balance; subscription.updated only', () => {
    const onPro = value(changePrice(activeOnApril1(), pro, d('2025-04-01T00:00:00Z'), { payment: 'paid' })).subscription;
    const t = value(changePrice(onPro, basic, mid));
    expect(t.subscription.price.id).toBe('price_basic');
    expect(t.events).toEqual(['subscription.updated']);
    expect(t.invoice).toMatchObject({ subtotal: -500, amountDue: 0, creditBalanceAfter: 500 });
  });

  it('monthly to yearly: the cycle restarts at the change and the year is charged less the unused month', () => {
    const t = value(changePrice(activeOnApril1(), proYearly, mid, { payment: 'paid' }));
    expect(t.subscription).toMatchObject({
      currentPeriodStart: mid,
      currentPeriodEnd: d('2026-04-16T00:00:00Z'),
      billingCycleAnchor: mid,
      price: { id: 'price_pro_y', interval: 'year' },
    });
    expect(t.invoice?.amountDue).toBe(19_500);
    expect(t.events).toEqual(['subscription.updated', 'invoice.paid']);
  });

  it('while trialing: the price is swapped, the trial goes on, nothing is billed', () => {
    const before = trialingOnApril1();
    const t = value(changePrice(before, proYearly, d('2025-04-05T00:00:00Z')));
    expect(t.subscription).toEqual({ ...before, price: { id: 'price_pro_y', planId: 'plan_pro', amount: 20_000, currency: 'usd', interval: 'year' } });
    expect(t.events).toEqual(['subscription.updated']);
    expect(t.invoice).toBeNull();
    expect(previewChange(before, proYearly, d('2025-04-05T00:00:00Z'))).toEqual({ ok: true, value: null });
  });

  it('refuses a past-due, paused, pending-cancellation, canceled or incomplete subscription', () => {
    const at = d('2025-05-02T00:00:00Z');
    expect(changePrice(pastDue(), pro, at, { payment: 'paid' })).toEqual({ ok: false, error: 'subscription_past_due' });
    expect(changePrice(paused(), pro, mid, { payment: 'paid' })).toEqual({ ok: false, error: 'subscription_paused' });
    expect(changePrice(pending(), pro, mid, { payment: 'paid' })).toEqual({ ok: false, error: 'cancellation_scheduled' });
    expect(changePrice(canceled(), pro, mid, { payment: 'paid' })).toEqual({ ok: false, error: 'subscription_canceled' });
    expect(changePrice(incomplete(), pro, mid, { payment: 'paid' })).toEqual({ ok: false, error: 'subscription_incomplete' });
  });

  it('refuses the same price, an archived price or another currency', () => {
    expect(changePrice(activeOnApril1(), basic, mid)).toEqual({ ok: false, error: 'same_price' });
    expect(changePrice(activeOnApril1(), { ...pro, active: false }, mid)).toEqual({ ok: false, error: 'price_inactive' });
    expect(changePrice(activeOnApril1(), { ...pro, currency: 'eur' }, mid)).toEqual({ ok: false, error: 'currency_mismatch' });
  });

  it('refuses a change after the period end, before the renewal has run', () => {
    expect(changePrice(activeOnApril1(), pro, d('2025-05-01T00:00:00Z'), { payment: 'paid' })).toEqual({
      ok: false,
      error: 'outside_current_period',
    });
  });
});

describe('cancel at period end (pending cancellation)', () => {
  it('keeps the status, sets the flag; the shown state is pending_cancellation; subscription.updated', () => {
    const t = value(cancelAtPeriodEnd(activeOnApril1(), d('2025-04-10T12:00:00.5Z')));
    expect(t.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, canceledAt: d('2025-04-10T12:00:00Z') });
    expect(subscriptionState(t.subscription)).toBe('pending_cancellation');
    expect(t.events).toEqual(['subscription.updated']);
    expect(isLive(t.subscription)).toBe(true);
  });

  it('allowed while trialing and past due', () => {
    expect(value(cancelAtPeriodEnd(trialingOnApril1(), d('2025-04-05T00:00:00Z'))).subscription.status).toBe('trialing');
    expect(subscriptionState(value(cancelAtPeriodEnd(pastDue(), d('2025-05-02T00:00:00Z'))).subscription)).toBe('pending_cancellation');
  });

  it('refused twice, while paused, and once ended', () => {
    expect(cancelAtPeriodEnd(pending(), d('2025-04-11T00:00:00Z'))).toEqual({ ok: false, error: 'cancellation_scheduled' });
    expect(cancelAtPeriodEnd(paused(), d('2025-04-11T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_paused' });
    expect(cancelAtPeriodEnd(canceled(), d('2025-04-11T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_canceled' });
    expect(cancelAtPeriodEnd(incomplete(), d('2025-04-01T01:00:00Z'))).toEqual({ ok: false, error: 'subscription_incomplete' });
  });

  it('at the period end it ends: canceled, ended at the period end; subscription.canceled', () => {
    expect(endAtPeriodEnd(pending(), d('2025-04-30T23:59:59Z'))).toEqual({ ok: false, error: 'period_not_ended' });
    const t = value(endAtPeriodEnd(pending(), d('2025-05-01T00:05:00Z')));
    expect(t.subscription).toMatchObject({ status: 'canceled', endedAt: d('2025-05-01T00:00:00Z'), cancelAtPeriodEnd: false });
    expect(t.events).toEqual(['subscription.canceled']);
    expect(t.invoice).toBeNull();
    expect(isLive(t.subscription)).toBe(false);
  });

  it('a trial cancelled at period end ends at the trial end, uncharged', () => {
    const sub = value(cancelAtPeriodEnd(trialingOnApril1(), d('2025-04-05T00:00:00Z'))).subscription;
    expect(endTrial(sub, d('2025-04-15T00:00:00Z'), 'paid')).toEqual({ ok: false, error: 'cancellation_scheduled' });
    expect(value(endAtPeriodEnd(sub, d('2025-04-15T00:00:00Z'))).subscription.endedAt).toEqual(d('2025-04-15T00:00:00Z'));
  });

  it('endAtPeriodEnd needs a scheduled cancellation', () => {
    expect(endAtPeriodEnd(activeOnApril1(), d('2025-05-01T00:00:00Z'))).toEqual({ ok: false, error: 'cancellation_not_scheduled' });
    expect(endAtPeriodEnd(canceled(), d('2025-05-01T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_canceled' });
  });
});

describe('cancelNow', () => {
  it('active -> canceled at once; subscription.canceled; no refund line', () => {
    const t = value(cancelNow(activeOnApril1(), d('2025-04-10T00:00:00Z')));
    expect(t.subscription).toMatchObject({ status: 'canceled', canceledAt: d('2025-04-10T00:00:00Z'), endedAt: d('2025-04-10T00:00:00Z') });
    expect(t.events).toEqual(['subscription.canceled']);
    expect(t.invoice).toBeNull();
  });

  it('from every live state, pending cancellation included', () => {
    for (const sub of [trialingOnApril1(), pastDue(), paused(), pending()]) {
      const t = value(cancelNow(sub, d('2025-05-02T00:00:00Z')));
      expect(t.subscription).toMatchObject({ status: 'canceled', cancelAtPeriodEnd: false, pausedAt: null });
      expect(t.events).toEqual(['subscription.canceled']);
    }
  });

  it('refused once ended or never started', () => {
    expect(cancelNow(canceled(), d('2025-04-11T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_canceled' });
    expect(cancelNow(incomplete(), d('2025-04-01T01:00:00Z'))).toEqual({ ok: false, error: 'subscription_incomplete' });
  });
});

describe('pause and resume', () => {
  it('pause: active -> paused; subscription.updated', () => {
    const t = value(pause(activeOnApril1(), d('2025-04-10T00:00:00Z')));
    expect(t.subscription).toMatchObject({ status: 'paused', pausedAt: d('2025-04-10T00:00:00Z') });
    expect(t.events).toEqual(['subscription.updated']);
    expect(isLive(t.subscription)).toBe(true);
  });

  it('pause is refused while trialing, past due, already paused, pending cancellation or ended', () => {
    const at = d('2025-05-02T00:00:00Z');
    expect(pause(trialingOnApril1(), d('2025-04-02T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_trialing' });
    expect(pause(pastDue(), at)).toEqual({ ok: false, error: 'subscription_past_due' });
    expect(pause(paused(), at)).toEqual({ ok: false, error: 'subscription_paused' });
    expect(pause(pending(), d('2025-04-11T00:00:00Z'))).toEqual({ ok: false, error: 'cancellation_scheduled' });
    expect(pause(canceled(), at)).toEqual({ ok: false, error: 'subscription_canceled' });
    expect(pause(incomplete(), d('2025-04-01T01:00:00Z'))).toEqual({ ok: false, error: 'subscription_incomplete' });
  });

  it('resume from paused within the period: active again, same dates; subscription.updated', () => {
    const before = paused();
    const t = value(resume(before, d('2025-04-20T00:00:00Z')));
    expect(t.subscription).toEqual({ ...before, status: 'active', pausedAt: null });
    expect(t.events).toEqual(['subscription.updated']);
    expect(t.invoice).toBeNull();
  });

  it('resume once a period began while paused: a new period from now, anchored now, its invoice charged', () => {
    // Paused Apr 10; the May 1 renewal was skipped while paused.
    const skipped = value(skipPausedPeriod(paused(), d('2025-05-01T00:00:00Z'))).subscription;
    expect(resume(skipped, d('2025-05-02T00:00:00Z'))).toEqual({ ok: false, error: 'payment_required' });
    const t = value(resume(skipped, d('2025-05-02T00:00:00Z'), 'paid'));
    expect(t.subscription).toMatchObject({
      status: 'active',
      pausedAt: null,
      currentPeriodStart: d('2025-05-02T00:00:00Z'),
      currentPeriodEnd: d('2025-06-02T00:00:00Z'),
      billingCycleAnchor: d('2025-05-02T00:00:00Z'),
    });
    expect(t.events).toEqual(['subscription.updated', 'invoice.paid']);
    expect(t.invoice).toMatchObject({ reason: 'subscription_update', amountDue: 1000 });
    expect(pausedAcrossRenewal(skipped, d('2025-05-02T00:00:00Z'))).toBe(true);
    // A period end passed but not yet skipped counts too; credit pays first.
    expect(value(resume(paused(), d('2025-06-15T00:00:00Z'), 'paid', 300)).invoice).toMatchObject({ amountDue: 700 });
  });

  it('resume whose charge is declined: still paused, payment.failed', () => {
    const skipped = value(skipPausedPeriod(paused(), d('2025-05-01T00:00:00Z'))).subscription;
    const t = value(resume(skipped, d('2025-05-02T00:00:00Z'), 'failed'));
    expect(t.subscription).toEqual(skipped);
    expect(t.events).toEqual(['payment.failed']);
  });

  it('ends a trial now: active, a new period and anchor from now, charged (subscription_update)', () => {
    const t = value(endTrialNow(trialingOnApril1(), d('2025-04-03T00:00:00Z'), 'paid'));
    expect(t.subscription).toMatchObject({
      status: 'active',
      trialEnd: d('2025-04-03T00:00:00Z'),
      currentPeriodStart: d('2025-04-03T00:00:00Z'),
      currentPeriodEnd: d('2025-05-03T00:00:00Z'),
      billingCycleAnchor: d('2025-04-03T00:00:00Z'),
    });
    expect(t.events).toEqual(['invoice.paid', 'subscription.updated']);
    expect(t.invoice).toMatchObject({ reason: 'subscription_update', amountDue: 2000 });
    expect(endTrialNow(activeOnApril1(), d('2025-04-03T00:00:00Z'), 'paid')).toEqual({ ok: false, error: 'subscription_not_trialing' });
  });

  it('resume a pending cancellation: the flag is dropped, the status stays', () => {
    const t = value(resume(pending(), d('2025-04-20T00:00:00Z')));
    expect(t.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: false, canceledAt: null });
    expect(subscriptionState(t.subscription)).toBe('active');
    expect(t.events).toEqual(['subscription.updated']);
    const trial = value(cancelAtPeriodEnd(trialingOnApril1(), d('2025-04-02T00:00:00Z'))).subscription;
    expect(value(resume(trial, d('2025-04-03T00:00:00Z'))).subscription.status).toBe('trialing');
  });

  it('resume is refused for anything else', () => {
    expect(resume(activeOnApril1(), d('2025-04-20T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_not_resumable' });
    expect(resume(pastDue(), d('2025-05-02T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_not_resumable' });
    expect(resume(canceled(), d('2025-04-20T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_canceled' });
  });

  it('a period ending while paused is skipped: next period, no invoice, no event', () => {
    expect(skipPausedPeriod(paused(), d('2025-04-30T00:00:00Z'))).toEqual({ ok: false, error: 'period_not_ended' });
    const t = value(skipPausedPeriod(paused(), d('2025-05-01T00:00:00Z')));
    expect(t.subscription).toMatchObject({ status: 'paused', currentPeriodStart: d('2025-05-01T00:00:00Z'), currentPeriodEnd: d('2025-06-01T00:00:00Z') });
    expect(t.events).toEqual([]);
    expect(t.invoice).toBeNull();
    expect(skipPausedPeriod(activeOnApril1(), d('2025-05-01T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_not_paused' });
  });
});

describe('renewal', () => {
  it('paid: the period advances on the anchor; invoice.paid only', () => {
    const t = value(renew(activeOnApril1(), d('2025-05-01T00:00:00Z'), 'paid'));
    expect(t.subscription).toMatchObject({ status: 'active', currentPeriodStart: d('2025-05-01T00:00:00Z'), currentPeriodEnd: d('2025-06-01T00:00:00Z') });
    expect(t.events).toEqual(['invoice.paid']);
    expect(t.invoice).toMatchObject({ reason: 'subscription_cycle', amountDue: 1000 });
  });

  it('keeps the month-end anchor: Jan 31 -> Feb 28 -> Mar 31 -> Apr 30', () => {
    let sub = value(startSubscription({ id: 's', price: basic, plan: basicPlan, at: d('2025-01-31T00:00:00Z'), payment: 'paid' })).subscription;
    const ends = [sub.currentPeriodEnd.toISOString().slice(0, 10)];
    for (let i = 0; i < 3; i += 1) {
      sub = value(renew(sub, sub.currentPeriodEnd, 'paid')).subscription;
      ends.push(sub.currentPeriodEnd.toISOString().slice(0, 10));
    }
    expect(ends).toEqual(['2025-02-28', '2025-03-31', '2025-04-30', '2025-05-31']);
  });

  it('is refused before the period end', () => {
    expect(renew(activeOnApril1(), d('2025-04-30T23:59:59Z'), 'paid')).toEqual({ ok: false, error: 'period_not_ended' });
  });

  it('failed: past_due from now, the period still advances; payment.failed, subscription.updated', () => {
    const t = value(renew(activeOnApril1(), d('2025-05-01T00:10:00Z'), 'failed'));
    expect(t.subscription).toMatchObject({
      status: 'past_due',
      pastDueAt: d('2025-05-01T00:10:00Z'),
      currentPeriodStart: d('2025-05-01T00:00:00Z'),
      currentPeriodEnd: d('2025-06-01T00:00:00Z'),
    });
    expect(t.events).toEqual(['payment.failed', 'subscription.updated']);
    expect(t.invoice?.amountDue).toBe(1000);
  });

  it('past due renewing: paid -> active (invoice.paid, subscription.updated); failed -> stays, first failure kept', () => {
    // A 14-day grace is shorter than a month, so this only happens on a long grace; the rule still holds.
    const due = { ...pastDue(), currentPeriodEnd: d('2025-05-10T00:00:00Z') };
    const paid = value(renew(due, d('2025-05-10T00:00:00Z'), 'paid'));
    expect(paid.subscription).toMatchObject({ status: 'active', pastDueAt: null });
    expect(paid.events).toEqual(['invoice.paid', 'subscription.updated']);
    const failed = value(renew(due, d('2025-05-10T00:00:00Z'), 'failed'));
    expect(failed.subscription).toMatchObject({ status: 'past_due', pastDueAt: d('2025-05-01T00:00:00Z') });
    expect(failed.events).toEqual(['payment.failed']);
  });

  it('a credit balance covering the renewal needs no card', () => {
    const t = value(renew(activeOnApril1(), d('2025-05-01T00:00:00Z'), undefined, 1000));
    expect(t.invoice).toMatchObject({ amountDue: 0, creditApplied: 1000, creditBalanceAfter: 0 });
    expect(t.events).toEqual(['invoice.paid']);
    expect(renew(activeOnApril1(), d('2025-05-01T00:00:00Z'), undefined, 999)).toEqual({ ok: false, error: 'payment_required' });
  });

  it('a free subscription renews silently', () => {
    const sub = value(startSubscription({ id: 's', price: free, plan: freePlan, at: d('2025-04-01T00:00:00Z') })).subscription;
    const t = value(renew(sub, d('2025-05-01T00:00:00Z'), undefined));
    expect(t.events).toEqual([]);
    expect(t.invoice).toBeNull();
    expect(t.subscription.currentPeriodEnd).toEqual(d('2025-06-01T00:00:00Z'));
  });

  it('is not for trials, pauses, pending cancellations or ended subscriptions', () => {
    const at = d('2025-06-01T00:00:00Z');
    expect(renew(trialingOnApril1(), at, 'paid')).toEqual({ ok: false, error: 'subscription_trialing' });
    expect(renew(paused(), at, 'paid')).toEqual({ ok: false, error: 'subscription_paused' });
    expect(renew(pending(), at, 'paid')).toEqual({ ok: false, error: 'cancellation_scheduled' });
    expect(renew(canceled(), at, 'paid')).toEqual({ ok: false, error: 'subscription_canceled' });
    expect(renew(incomplete(), at, 'paid')).toEqual({ ok: false, error: 'subscription_incomplete' });
  });
});

describe('past due: retries and the grace period', () => {
  it('a successful retry: active, same period; invoice.paid, subscription.updated', () => {
    const before = pastDue();
    const t = value(retryPayment(before, 'paid'));
    expect(t.subscription).toEqual({ ...before, status: 'active', pastDueAt: null });
    expect(t.events).toEqual(['invoice.paid', 'subscription.updated']);
  });

  it('a failed retry changes nothing; payment.failed', () => {
    const before = pastDue();
    expect(value(retryPayment(before, 'failed'))).toEqual({ subscription: before, events: ['payment.failed'], invoice: null });
    expect(retryPayment(activeOnApril1(), 'paid')).toEqual({ ok: false, error: 'subscription_not_past_due' });
  });

  it('14 days after the first failure it ends: canceled; subscription.canceled', () => {
    expect(endAfterGracePeriod(pastDue(), d('2025-05-14T23:59:59Z'))).toEqual({ ok: false, error: 'grace_period_not_over' });
    const t = value(endAfterGracePeriod(pastDue(), d('2025-05-15T00:00:00Z')));
    expect(t.subscription).toMatchObject({ status: 'canceled', endedAt: d('2025-05-15T00:00:00Z') });
    expect(t.events).toEqual(['subscription.canceled']);
    expect(endAfterGracePeriod(activeOnApril1(), d('2025-05-15T00:00:00Z'))).toEqual({ ok: false, error: 'subscription_not_past_due' });
  });
});

describe('trial end', () => {
  it('paid: active, first full period from the trial end; invoice.paid, subscription.updated', () => {
    expect(endTrial(trialingOnApril1(), d('2025-04-14T23:59:59Z'), 'paid')).toEqual({ ok: false, error: 'trial_not_ended' });
    const t = value(endTrial(trialingOnApril1(), d('2025-04-15T00:00:30Z'), 'paid'));
    expect(t.subscription).toMatchObject({ status: 'active', currentPeriodStart: d('2025-04-15T00:00:00Z'), currentPeriodEnd: d('2025-05-15T00:00:00Z') });
    expect(t.events).toEqual(['invoice.paid', 'subscription.updated']);
    expect(t.invoice).toMatchObject({ reason: 'subscription_cycle', amountDue: 2000 });
  });

  it('failed (pm_card_chargeCustomerFail): past_due, a failed renewal; payment.failed, subscription.updated', () => {
    const t = value(endTrial(trialingOnApril1(), d('2025-04-15T00:00:00Z'), 'failed'));
    expect(t.subscription).toMatchObject({ status: 'past_due', pastDueAt: d('2025-04-15T00:00:00Z'), currentPeriodEnd: d('2025-05-15T00:00:00Z') });
    expect(t.events).toEqual(['payment.failed', 'subscription.updated']);
  });

  it('a trial ending on the 31st renews on the last day of shorter months', () => {
    const sub = value(startSubscription({ id: 's', price: pro, plan: proPlan, at: d('2025-01-17T00:00:00Z') })).subscription;
    expect(sub.trialEnd).toEqual(d('2025-01-31T00:00:00Z'));
    const after = value(endTrial(sub, d('2025-01-31T00:00:00Z'), 'paid')).subscription;
    expect(after.currentPeriodEnd).toEqual(d('2025-02-28T00:00:00Z'));
    expect(value(renew(after, d('2025-02-28T00:00:00Z'), 'paid')).subscription.currentPeriodEnd).toEqual(d('2025-03-31T00:00:00Z'));
  });

  it('only for trialing subscriptions', () => {
    expect(endTrial(activeOnApril1(), d('2025-05-01T00:00:00Z'), 'paid')).toEqual({ ok: false, error: 'subscription_not_trialing' });
    expect(endTrial(trialingOnApril1(), d('2025-04-15T00:00:00Z'), undefined)).toEqual({ ok: false, error: 'payment_required' });
  });
});

describe('dueAction and nextActionAt (the renewal scheduler)', () => {
  it('names the transition due now', () => {
    expect(dueAction(activeOnApril1(), d('2025-04-30T23:59:59Z'))).toBe('none');
    expect(dueAction(activeOnApril1(), d('2025-05-01T00:00:00Z'))).toBe('renew');
    expect(dueAction(pending(), d('2025-05-01T00:00:00Z'))).toBe('end_at_period_end');
    expect(dueAction(trialingOnApril1(), d('2025-04-15T00:00:00Z'))).toBe('end_trial');
    expect(dueAction(value(cancelAtPeriodEnd(trialingOnApril1(), d('2025-04-02T00:00:00Z'))).subscription, d('2025-04-15T00:00:00Z'))).toBe(
      'end_at_period_end',
    );
    expect(dueAction(paused(), d('2025-05-01T00:00:00Z'))).toBe('skip_paused_period');
    expect(dueAction(incomplete(), d('2025-04-01T23:00:00Z'))).toBe('expire_incomplete');
    expect(dueAction(incomplete(), d('2025-04-01T22:00:00Z'))).toBe('none');
    expect(dueAction(pastDue(), d('2025-05-10T00:00:00Z'))).toBe('none');
    expect(dueAction(pastDue(), d('2025-05-15T00:00:00Z'))).toBe('end_after_grace_period');
    expect(dueAction(canceled(), d('2030-01-01T00:00:00Z'))).toBe('none');
  });

  it('the grace-period end comes before a renewal that is also due', () => {
    expect(dueAction(pastDue(), d('2025-06-01T00:00:00Z'))).toBe('end_after_grace_period');
  });

  it('says when to look again', () => {
    expect(nextActionAt(activeOnApril1())).toEqual(d('2025-05-01T00:00:00Z'));
    expect(nextActionAt(trialingOnApril1())).toEqual(d('2025-04-15T00:00:00Z'));
    expect(nextActionAt(incomplete())).toEqual(d('2025-04-01T23:00:00Z'));
    expect(nextActionAt(pastDue())).toEqual(d('2025-05-15T00:00:00Z'));
    expect(nextActionAt({ ...pastDue(), currentPeriodEnd: d('2025-05-10T00:00:00Z') })).toEqual(d('2025-05-10T00:00:00Z'));
    expect(nextActionAt(canceled())).toBeNull();
  });

  /** Applies every due transition, as the sandbox worker does after its clock moves. */
  function advance(sub: Subscription, now: Date, payment: 'paid' | 'failed'): { sub: Subscription; events: string[] } {
    const events: string[] = [];
    for (;;) {
      const action = dueAction(sub, now);
      if (action === 'none') return { sub, events };
      // Each transition runs at the moment it fell due, as a punctual scheduler would.
      const at =
        action === 'end_after_grace_period' ? graceEndsAt(sub.pastDueAt!) : action === 'expire_incomplete' ? incompleteExpiresAt(sub) : sub.currentPeriodEnd;
      const steps: Record<Exclude<typeof action, 'none'>, () => Transition> = {
        renew: () => value(renew(sub, at, payment)),
        end_trial: () => value(endTrial(sub, at, payment)),
        end_at_period_end: () => value(endAtPeriodEnd(sub, at)),
        end_after_grace_period: () => value(endAfterGracePeriod(sub, at)),
        skip_paused_period: () => value(skipPausedPeriod(sub, at)),
        expire_incomplete: () => value(expireIncomplete(sub, at)),
      };
      const t = steps[action]();
      sub = t.subscription;
      events.push(...t.events);
    }
  }

  it('a clock moved 65 days renews a monthly subscription twice', () => {
    const { sub, events } = advance(activeOnApril1(), d('2025-06-05T00:00:00Z'), 'paid');
    expect(events).toEqual(['invoice.paid', 'invoice.paid']);
    expect(sub.currentPeriodEnd).toEqual(d('2025-07-01T00:00:00Z'));
  });

  it('a trial followed by a failing card: past due, then canceled after the grace period', () => {
    const { sub, events } = advance(trialingOnApril1(), d('2025-05-01T00:00:00Z'), 'failed');
    // Trial end Apr 15 fails; 14 days later, Apr 29, the grace period is over.
    expect(events).toEqual(['payment.failed', 'subscription.updated', 'subscription.canceled']);
    expect(sub).toMatchObject({ status: 'canceled', pastDueAt: d('2025-04-15T00:00:00Z'), endedAt: d('2025-04-29T00:00:00Z') });
  });

  it('a paused subscription passes period ends without a charge', () => {
    const { sub, events } = advance(paused(), d('2025-08-15T00:00:00Z'), 'paid');
    expect(events).toEqual([]);
    expect(sub).toMatchObject({ status: 'paused', currentPeriodStart: d('2025-08-01T00:00:00Z'), currentPeriodEnd: d('2025-09-01T00:00:00Z') });
  });
});

describe('upcomingInvoice (the next invoice amount)', () => {
  it('the price at the period end, less credit', () => {
    expect(upcomingInvoice(activeOnApril1())).toEqual({ amount: 1000, currency: 'usd', date: d('2025-05-01T00:00:00Z') });
    expect(upcomingInvoice(activeOnApril1(), 300)?.amount).toBe(700);
    expect(upcomingInvoice(trialingOnApril1())).toEqual({ amount: 2000, currency: 'usd', date: d('2025-04-15T00:00:00Z') });
  });

  it('none when nothing will be charged', () => {
    expect(upcomingInvoice(pending())).toBeNull();
    expect(upcomingInvoice(paused())).toBeNull();
    expect(upcomingInvoice(canceled())).toBeNull();
    expect(upcomingInvoice(incomplete())).toBeNull();
  });
});

describe('changeQuantity (per-seat prices)', () => {
  // 2000 for the first 2 seats, 1000 per further seat; April has 30 days.
  const team: Price = {
    id: 'price_team',
    planId: 'plan_team',
    name: 'Monthly',
    amount: 2000,
    currency: 'usd',
    interval: 'month',
    active: true,
    seats: { unitAmount: 1000, included: 2, minimum: 1, maximum: 10 },
  };
  const teamPlan = { id: 'plan_team', trialsEnabled: true, defaultTrialDays: null };
  const start = (quantity: number, trialDays?: number) =>
    value(startSubscription({ id: 'sub_s', price: team, quantity, plan: teamPlan, at: d('2025-04-01T00:00:00Z'), trialDays, payment: 'paid' }));
  const halfway = d('2025-04-16T00:00:00Z');

  it('starts with the amount for its seats, its line naming them', () => {
    const t = start(4);
    expect(t.subscription.price).toEqual({ ...seatSnapshotOf(team, 4), amount: 4000, quantity: 4 });
    expect(t.invoice?.lines.map((l) => [l.kind, l.amount, l.quantity])).toEqual([['subscription', 4000, 4]]);
  });

  it('prorated: charges the rest of the period on the new quantity less the unused time on the old; the dates stay', () => {
    const t = value(changeQuantity(start(3).subscription, seatSnapshotOf(team, 5), halfway, { prorate: true, payment: 'paid' }));
    expect(t.events).toEqual(['subscription.updated', 'invoice.paid']);
    expect(t.invoice?.lines.map((l) => [l.kind, l.amount, l.quantity])).toEqual([
      ['unused_time', -1500, 3],
      ['remaining_time', 2500, 5],
    ]);
    expect(t.subscription).toMatchObject({ price: { amount: 5000, quantity: 5 }, currentPeriodEnd: d('2025-05-01T00:00:00Z') });
  });

  it('not prorated: the quantity changes without an invoice, for the next renewal to bill', () => {
    const t = value(changeQuantity(start(5).subscription, seatSnapshotOf(team, 3), halfway, { prorate: false }));
    expect(t).toMatchObject({ events: ['subscription.updated'], invoice: null, subscription: { price: { amount: 3000, quantity: 3 } } });
    expect(value(renew(t.subscription, d('2025-05-01T00:00:00Z'), 'paid')).invoice?.lines.map((l) => [l.amount, l.quantity])).toEqual([[3000, 3]]);
  });

  it('a declined charge changes nothing; trialing bills nothing; past due, paused, a flat price or the same quantity are refused', () => {
    const declined = value(changeQuantity(start(3).subscription, seatSnapshotOf(team, 5), halfway, { prorate: true, payment: 'failed' }));
    expect(declined).toMatchObject({ events: ['payment.failed'], subscription: { price: { quantity: 3 } } });
    const trial = value(changeQuantity(start(3, 14).subscription, seatSnapshotOf(team, 5), halfway, { prorate: true }));
    expect(trial).toMatchObject({ events: ['subscription.updated'], invoice: null, subscription: { status: 'trialing', price: { quantity: 5 } } });
    const active = start(3).subscription;
    expect(changeQuantity({ ...active, status: 'past_due' }, seatSnapshotOf(team, 5), halfway, { prorate: true })).toMatchObject({
      error: 'subscription_past_due',
    });
    expect(changeQuantity({ ...active, status: 'paused' }, seatSnapshotOf(team, 5), halfway, { prorate: true })).toMatchObject({
      error: 'subscription_paused',
    });
    expect(changeQuantity(activeOnApril1(), seatSnapshotOf(team, 5), halfway, { prorate: true })).toMatchObject({ error: 'not_per_seat' });
    expect(changeQuantity(active, seatSnapshotOf(team, 3), halfway, { prorate: true })).toMatchObject({ error: 'same_quantity' });
  });
});
