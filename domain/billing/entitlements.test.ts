import { DEFAULT_SEAT_POLICY } from './seat-terms';
import { describe, expect, it } from 'vitest';
import { type Plan, type Price, reorderPlans } from './catalog';
import { type Entitlements, ENTITLED_STATES, check, entitlementsOf, hasFeature, hasPlan, isEntitled } from './entitlements';
import { type Subscription, cancelAtPeriodEnd, cancelNow, pause, renew, startSubscription } from './subscription';

const d = (iso: string): Date => new Date(iso);

const plan = (id: string, name: string, position: number, features: string[], hidden = false): Plan => ({
  id,
  name,
  description: '',
  features,
  hidden,
  recommended: false,
  trialsEnabled: true,
  defaultTrialDays: null,
  audience: 'users',
  seatPolicy: DEFAULT_SEAT_POLICY,
  usageLimits: [],
  position,
});

// The hierarchy, lowest first: Free < Basic < Pro < Enterprise (hidden, still the top tier).
const catalog = [
  plan('plan_pro', 'Pro', 2, ['sso', 'api', 'audit-log']),
  plan('plan_free', 'Free', 0, []),
  plan('plan_enterprise', 'Enterprise', 3, ['sso', 'api', 'audit-log', 'scim'], true),
  plan('plan_basic', 'Basic', 1, ['api']),
];
const proPlan = catalog[0]!;
const proPrice: Price = { id: 'price_pro', planId: 'plan_pro', name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month', active: true, seats: null };

function value<T>(result: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.error}`);
  return result.value;
}

/** Pro, paid on Apr 1 2025: period Apr 1 -> May 1. */
const active = (): Subscription =>
  value(startSubscription({ id: 'sub', price: proPrice, plan: proPlan, at: d('2025-04-01T00:00:00Z'), payment: 'paid' })).subscription;
const inApril = d('2025-04-20T00:00:00Z');

const pro: Entitlements = { plan: 'Pro', status: 'active', features: ['sso', 'api', 'audit-log'] };

describe('entitlementsOf: which subscriptions entitle', () => {
  it('active: plan name, status, the plan features', () => {
    expect(entitlementsOf(active(), proPlan, inApril)).toEqual(pro);
  });

  it('returns a copy of the features, not the plan’s own array', () => {
    const e = entitlementsOf(active(), proPlan, inApril)!;
    e.features.push('mutated');
    expect(proPlan.features).toEqual(['sso', 'api', 'audit-log']);
  });

  it('trialing is entitled', () => {
    const trial = value(startSubscription({ id: 's', price: proPrice, plan: proPlan, at: d('2025-04-01T00:00:00Z'), trialDays: 7 })).subscription;
    expect(entitlementsOf(trial, proPlan, d('2025-04-03T00:00:00Z'))?.status).toBe('trialing');
  });

  it('past due: entitled for 14 days after the first failed payment, then not', () => {
    const pastDue = value(renew(active(), d('2025-05-01T00:00:00Z'), 'failed')).subscription;
    expect(entitlementsOf(pastDue, proPlan, d('2025-05-14T23:59:59Z'))?.status).toBe('past_due');
    expect(entitlementsOf(pastDue, proPlan, d('2025-05-15T00:00:00Z'))).toBeNull();
  });

  it('pending cancellation: entitled until the paid period ends, by the clock', () => {
    const pending = value(cancelAtPeriodEnd(active(), d('2025-04-10T00:00:00Z'))).subscription;
    expect(entitlementsOf(pending, proPlan, d('2025-04-30T23:59:59Z'))).toEqual({ ...pro, status: 'pending_cancellation' });
    expect(entitlementsOf(pending, proPlan, d('2025-05-01T00:00:00Z'))).toBeNull();
  });

  it('an active subscription whose renewal is late stays entitled', () => {
    expect(entitlementsOf(active(), proPlan, d('2025-05-01T02:00:00Z'))?.status).toBe('active');
  });

  it('paused, canceled, incomplete: not entitled; no subscription: null', () => {
    expect(entitlementsOf(value(pause(active(), inApril)).subscription, proPlan, inApril)).toBeNull();
    expect(entitlementsOf(value(cancelNow(active(), inApril)).subscription, proPlan, inApril)).toBeNull();
    const incomplete = value(startSubscription({ id: 's', price: proPrice, plan: proPlan, at: d('2025-04-01T00:00:00Z'), payment: 'failed' })).subscription;
    expect(entitlementsOf(incomplete, proPlan, d('2025-04-01T01:00:00Z'))).toBeNull();
    expect(entitlementsOf({ ...incomplete, status: 'incomplete_expired' }, proPlan, d('2025-04-03T00:00:00Z'))).toBeNull();
    expect(entitlementsOf(null, null, inApril)).toBeNull();
    expect(entitlementsOf(active(), null, inApril)).toBeNull();
  });

  it('the entitled states are exactly these four', () => {
    expect([...ENTITLED_STATES]).toEqual(['active', 'trialing', 'past_due', 'pending_cancellation']);
    expect(isEntitled(active(), inApril)).toBe(true);
  });

  it('a plan that is not the subscription’s is a bug', () => {
    expect(() => entitlementsOf(active(), catalog[1]!, inApril)).toThrow();
  });
});

describe('hasPlan: the named plan or any plan above it', () => {
  it('passes for the plan itself and every plan below it', () => {
    expect(hasPlan(pro, 'Pro', catalog)).toBe(true);
    expect(hasPlan(pro, 'Basic', catalog)).toBe(true);
    expect(hasPlan(pro, 'Free', catalog)).toBe(true);
  });

  it('fails for a plan above, hidden or not', () => {
    expect(hasPlan({ ...pro, plan: 'Basic' }, 'Pro', catalog)).toBe(false);
    expect(hasPlan(pro, 'Enterprise', catalog)).toBe(false);
    expect(hasPlan({ ...pro, plan: 'Enterprise' }, 'Pro', catalog)).toBe(true);
  });

  it('names are trimmed and case-insensitive; ids work too', () => {
    expect(hasPlan(pro, ' basic ', catalog)).toBe(true);
    expect(hasPlan(pro, 'PRO', catalog)).toBe(true);
    expect(hasPlan(pro, 'plan_basic', catalog)).toBe(true);
    expect(hasPlan(pro, 'plan_enterprise', catalog)).toBe(false);
  });

  it('an unknown plan never passes, nor does a user without entitlements', () => {
    expect(hasPlan(pro, 'Gold', catalog)).toBe(false);
    expect(hasPlan({ ...pro, plan: 'Deleted plan' }, 'Free', catalog)).toBe(false);
    expect(hasPlan(null, 'Free', catalog)).toBe(false);
  });

  it('follows a reorder of the hierarchy', () => {
    const reordered = value(reorderPlans(catalog, ['plan_free', 'plan_pro', 'plan_basic', 'plan_enterprise']));
    expect(hasPlan(pro, 'Basic', reordered)).toBe(false);
    expect(hasPlan({ ...pro, plan: 'Basic' }, 'Pro', reordered)).toBe(true);
  });
});

describe('hasFeature and check', () => {
  it('a feature check is exact and case-sensitive', () => {
    expect(hasFeature(pro, 'sso')).toBe(true);
    expect(hasFeature(pro, 'SSO')).toBe(false);
    expect(hasFeature(pro, 'scim')).toBe(false);
    expect(hasFeature(null, 'sso')).toBe(false);
  });

  it('with both a plan and a feature, both must pass', () => {
    expect(check(pro, { plan: 'Basic', feature: 'sso' }, catalog)).toBe(true);
    expect(check(pro, { plan: 'Basic', feature: 'scim' }, catalog)).toBe(false);
    expect(check(pro, { plan: 'Enterprise', feature: 'sso' }, catalog)).toBe(false);
    expect(check({ ...pro, plan: 'Basic', features: ['api', 'sso'] }, { plan: 'Pro', feature: 'sso' }, catalog)).toBe(false);
  });

  it('with one of them, that one', () => {
    expect(check(pro, { plan: 'Pro' }, catalog)).toBe(true);
    expect(check(pro, { plan: 'Enterprise' }, catalog)).toBe(false);
    expect(check(pro, { feature: 'audit-log' }, catalog)).toBe(true);
    expect(check(pro, { feature: 'scim' }, catalog)).toBe(false);
  });

  it('with neither, any entitled subscription passes and none fails; empty strings count as absent', () => {
    expect(check(pro, {}, catalog)).toBe(true);
    expect(check({ plan: 'Free', status: 'trialing', features: [] }, { plan: '', feature: null }, catalog)).toBe(true);
    expect(check(null, {}, catalog)).toBe(false);
    expect(check(null, { feature: 'sso' }, catalog)).toBe(false);
  });
});
