import { DEFAULT_SEAT_POLICY } from './seat-terms';
import { describe, expect, it } from 'vitest';
import {
  type Plan,
  type Price,
  applyPlanUpdate,
  findPlan,
  isPlanNameTaken,
  nextPlanPosition,
  normalizeFeatures,
  parseFeatureList,
  planRank,
  pricesOfPlan,
  publicCatalog,
  reorderPlans,
  resolveTrialDays,
  snapshotOf,
  sortPlans,
  validatePlanInput,
  validatePriceInput,
  seatsFitAudience,
  visiblePlans,
} from './catalog';

const plan = (id: string, position: number, extra: Partial<Plan> = {}): Plan => ({
  id,
  name: id.replace('plan_', ''),
  description: '',
  features: [],
  hidden: false,
  recommended: false,
  trialsEnabled: false,
  defaultTrialDays: null,
  audience: 'users',
  seatPolicy: DEFAULT_SEAT_POLICY,
  usageLimits: [],
  position,
  ...extra,
});

describe('features', () => {
  it("parses the dashboard's comma-separated form: trimmed, empty entries and duplicates dropped", () => {
    expect(parseFeatureList(' sso, audit-log,,sso , ')).toEqual(['sso', 'audit-log']);
    expect(parseFeatureList('')).toEqual([]);
    expect(parseFeatureList(' , ,')).toEqual([]);
    expect(parseFeatureList('Priority support,api')).toEqual(['Priority support', 'api']);
  });

  it('normalizes a list: trimmed, unique (first kept, case-sensitive), order kept', () => {
    expect(normalizeFeatures([' sso', 'api ', 'sso', 'SSO'])).toEqual({ ok: true, value: ['sso', 'api', 'SSO'] });
    expect(normalizeFeatures('b, a, b')).toEqual({ ok: true, value: ['b', 'a'] });
  });

  it('refuses empty entries in a list, commas and control characters inside a flag', () => {
    expect(normalizeFeatures(['sso', ' '])).toEqual({ ok: false, error: 'invalid_feature' });
    expect(normalizeFeatures(['a,b'])).toEqual({ ok: false, error: 'invalid_feature' });
    expect(normalizeFeatures(['line\nbreak'])).toEqual({ ok: false, error: 'invalid_feature' });
  });

  it('caps the length of a flag at 100 and the count at 100', () => {
    expect(normalizeFeatures(['x'.repeat(100)]).ok).toBe(true);
    expect(normalizeFeatures(['x'.repeat(101)])).toEqual({ ok: false, error: 'invalid_feature' });
    const hundred = Array.from({ length: 100 }, (_, i) => `f${i}`);
    expect(normalizeFeatures(hundred).ok).toBe(true);
    expect(normalizeFeatures([...hundred, 'f100'])).toEqual({ ok: false, error: 'too_many_features' });
    // Duplicates do not count against the cap.
    expect(normalizeFeatures([...hundred, 'f0']).ok).toBe(true);
  });
});

describe('validatePlanInput', () => {
  it('normalizes and fills defaults', () => {
    expect(validatePlanInput({ name: '  Pro  ', description: ' For teams ', features: 'sso, api' })).toEqual({
      ok: true,
      value: {
        name: 'Pro',
        description: 'For teams',
        features: ['sso', 'api'],
        hidden: false,
        recommended: false,
        trialsEnabled: false,
        defaultTrialDays: null,
        audience: 'users',
        seatPolicy: DEFAULT_SEAT_POLICY,
        usageLimits: [],
      },
    });
  });

  it('a plan is sold to users unless it names organizations or both; any other audience is refused', () => {
    expect(validatePlanInput({ name: 'Pro' })).toMatchObject({ ok: true, value: { audience: 'users' } });
    for (const audience of ['users', 'organizations', 'both'] as const) {
      expect(validatePlanInput({ name: 'Pro', audience })).toMatchObject({ ok: true, value: { audience } });
    }
    for (const bad of ['', 'teams', 'Users', 'organization', 'user']) {
      expect(validatePlanInput({ name: 'Pro', audience: bad })).toEqual({ ok: false, error: 'invalid_plan_audience' });
    }
  });

  it('names are 1 to 100 characters after trimming, without control characters', () => {
    expect(validatePlanInput({ name: '' })).toEqual({ ok: false, error: 'invalid_plan_name' });
    expect(validatePlanInput({ name: '   ' })).toEqual({ ok: false, error: 'invalid_plan_name' });
    expect(validatePlanInput({ name: 'x'.repeat(101) })).toEqual({ ok: false, error: 'invalid_plan_name' });
    expect(validatePlanInput({ name: 'Pro\u0000' })).toEqual({ ok: false, error: 'invalid_plan_name' });
    expect(validatePlanInput({ name: 'x'.repeat(100) }).ok).toBe(true);
    expect(validatePlanInput({ name: 'A' }).ok).toBe(true);
  });

  it('descriptions are at most 1000 characters', () => {
    expect(validatePlanInput({ name: 'Pro', description: 'x'.repeat(1000) }).ok).toBe(true);
    expect(validatePlanInput({ name: 'Pro', description: 'x'.repeat(1001) })).toEqual({ ok: false, error: 'invalid_plan_description' });
    expect(validatePlanInput({ name: 'Pro', description: null })).toMatchObject({ ok: true, value: { description: '' } });
  });

  it('a default trial of 1..730 days, only with trials enabled', () => {
    expect(validatePlanInput({ name: 'Pro', trialsEnabled: true, defaultTrialDays: 14 })).toMatchObject({
      ok: true,
      value: { trialsEnabled: true, defaultTrialDays: 14 },
    });
    expect(validatePlanInput({ name: 'Pro', trialsEnabled: true, defaultTrialDays: 730 }).ok).toBe(true);
    expect(validatePlanInput({ name: 'Pro', defaultTrialDays: 14 })).toEqual({ ok: false, error: 'trials_not_enabled' });
    for (const bad of [0, 731, 1.5, -3]) {
      expect(validatePlanInput({ name: 'Pro', trialsEnabled: true, defaultTrialDays: bad })).toEqual({
        ok: false,
        error: 'invalid_trial_days',
      });
    }
  });

  it('passes feature errors through', () => {
    expect(validatePlanInput({ name: 'Pro', features: ['ok', ''] })).toEqual({ ok: false, error: 'invalid_feature' });
  });
});

describe('applyPlanUpdate', () => {
  const pro = plan('plan_pro', 3, { name: 'Pro', features: ['sso'], trialsEnabled: true, defaultTrialDays: 14 });

  it('merges the given fields and keeps id and position', () => {
    const updated = applyPlanUpdate(pro, { name: 'Pro+', hidden: true, features: 'sso, api' });
    expect(updated).toEqual({ ok: true, value: { ...pro, name: 'Pro+', hidden: true, features: ['sso', 'api'] } });
  });

  it('turning trials off clears the default trial instead of refusing', () => {
    expect(applyPlanUpdate(pro, { trialsEnabled: false })).toMatchObject({ ok: true, value: { trialsEnabled: false, defaultTrialDays: null } });
  });

  it('setting a default trial on a plan without trials is refused', () => {
    expect(applyPlanUpdate(plan('plan_basic', 0), { defaultTrialDays: 7 })).toEqual({ ok: false, error: 'trials_not_enabled' });
  });

  it('an invalid field refuses the whole update', () => {
    expect(applyPlanUpdate(pro, { name: ' ' })).toEqual({ ok: false, error: 'invalid_plan_name' });
  });

  it('keeps the audience unless the patch names one; an unknown audience is refused', () => {
    const team = plan('plan_team', 1, { audience: 'organizations' });
    expect(applyPlanUpdate(team, { name: 'Team' })).toMatchObject({ ok: true, value: { audience: 'organizations' } });
    expect(applyPlanUpdate(team, { audience: 'both' })).toEqual({ ok: true, value: { ...team, audience: 'both' } });
    expect(applyPlanUpdate(pro, { audience: 'teams' })).toEqual({ ok: false, error: 'invalid_plan_audience' });
  });
});

describe('names and lookups', () => {
  const plans = [plan('plan_free', 0, { name: 'Free' }), plan('plan_pro', 1, { name: 'Pro' })];

  it('plan names are unique case-insensitively, trimmed', () => {
    expect(isPlanNameTaken(plans, ' pro ')).toBe(true);
    expect(isPlanNameTaken(plans, 'PRO')).toBe(true);
    expect(isPlanNameTaken(plans, 'Team')).toBe(false);
    expect(isPlanNameTaken(plans, 'Pro', 'plan_pro')).toBe(false);
    expect(isPlanNameTaken(plans, 'Pro', 'plan_free')).toBe(true);
  });

  it('findPlan matches an id first, then a name', () => {
    expect(findPlan(plans, 'plan_pro')?.name).toBe('Pro');
    expect(findPlan(plans, 'free')?.id).toBe('plan_free');
    expect(findPlan(plans, 'Enterprise')).toBeNull();
  });
});

describe('the hierarchy', () => {
  const plans = [plan('plan_pro', 2), plan('plan_free', 0), plan('plan_enterprise', 3, { hidden: true }), plan('plan_basic', 1)];

  it('sorts by position, lowest tier first', () => {
    expect(sortPlans(plans).map((p) => p.id)).toEqual(['plan_free', 'plan_basic', 'plan_pro', 'plan_enterprise']);
    expect(sortPlans([plan('b', 1), plan('a', 1)]).map((p) => p.id)).toEqual(['a', 'b']);
  });

  it('the visible list leaves hidden plans out', () => {
    expect(visiblePlans(plans).map((p) => p.id)).toEqual(['plan_free', 'plan_basic', 'plan_pro']);
  });

  it('ranks count hidden plans, which keep their tier', () => {
    expect(planRank(plans, 'plan_free')).toBe(0);
    expect(planRank(plans, 'plan_pro')).toBe(2);
    expect(planRank(plans, 'plan_enterprise')).toBe(3);
    expect(planRank(plans, 'plan_gold')).toBeNull();
  });

  it('positions need not be contiguous', () => {
    expect(planRank([plan('a', 10), plan('b', 40), plan('c', 25)], 'c')).toBe(1);
  });

  it('a new plan goes on top', () => {
    expect(nextPlanPosition(plans)).toBe(4);
    expect(nextPlanPosition([])).toBe(0);
    expect(nextPlanPosition([plan('a', 10)])).toBe(11);
  });

  it('reorder takes a permutation of the ids, lowest first, and numbers them 0..n-1', () => {
    const result = reorderPlans(plans, ['plan_basic', 'plan_free', 'plan_enterprise', 'plan_pro']);
    expect(result.ok && result.value.map((p) => [p.id, p.position])).toEqual([
      ['plan_basic', 0],
      ['plan_free', 1],
      ['plan_enterprise', 2],
      ['plan_pro', 3],
    ]);
    expect(result.ok && planRank(result.value, 'plan_pro')).toBe(3);
    expect(reorderPlans([], [])).toEqual({ ok: true, value: [] });
  });

  it('reorder refuses missing, repeated, unknown or extra ids', () => {
    const bad = { ok: false, error: 'invalid_plan_order' };
    expect(reorderPlans(plans, ['plan_free', 'plan_basic', 'plan_pro'])).toEqual(bad);
    expect(reorderPlans(plans, ['plan_free', 'plan_basic', 'plan_pro', 'plan_pro'])).toEqual(bad);
    expect(reorderPlans(plans, ['plan_free', 'plan_basic', 'plan_pro', 'plan_gold'])).toEqual(bad);
    expect(reorderPlans(plans, ['plan_free', 'plan_basic', 'plan_pro', 'plan_enterprise', 'plan_gold'])).toEqual(bad);
  });
});

describe('prices', () => {
  it('validates and normalizes', () => {
    expect(validatePriceInput({ name: ' Monthly ', amount: 1999, currency: 'USD', interval: 'month' })).toEqual({
      ok: true,
      value: { name: 'Monthly', amount: 1999, currency: 'usd', interval: 'month', seats: null },
    });
    expect(validatePriceInput({ name: 'Free', amount: 0, currency: 'eur', interval: 'year' }).ok).toBe(true);
  });

  it('takes a per-seat price with its defaults, refuses bad seat terms, and keeps per-seat prices off plans sold to users alone', () => {
    const seat = { name: 'Team', amount: 2000, currency: 'usd', interval: 'month' };
    expect(validatePriceInput({ ...seat, seats: { unitAmount: 800, included: 3 } })).toEqual({
      ok: true,
      value: { ...seat, seats: { unitAmount: 800, included: 3, minimum: 1, maximum: null } },
    });
    for (const bad of [
      { unitAmount: 0 },
      { unitAmount: 12.5 },
      { unitAmount: 800, minimum: 0 },
      { unitAmount: 800, included: -1 },
      { unitAmount: 800, minimum: 5, maximum: 4 },
    ]) {
      expect(validatePriceInput({ ...seat, seats: bad })).toMatchObject({ ok: false, error: 'invalid_seat_pricing' });
    }
    expect(seatsFitAudience('users', [{ seats: { unitAmount: 1, included: 0, minimum: 1, maximum: null }, active: true }])).toBe(false);
    expect(seatsFitAudience('organizations', [{ seats: { unitAmount: 1, included: 0, minimum: 1, maximum: null }, active: true }])).toBe(true);
    expect(seatsFitAudience('users', [{ seats: null, active: true }])).toBe(true);
  });

  it('a plan keeps a seat policy: automatic by default; a bad mode or removal is refused', () => {
    const plan = validatePlanInput({ name: 'Team', audience: 'organizations' });
    expect(plan.ok && plan.value.seatPolicy).toEqual({ mode: 'automatic', countInvitations: false, removal: 'period_end' });
    const bought = validatePlanInput({ name: 'Team', seatMode: 'bought', seatRemoval: 'immediately', seatCountInvitations: true });
    expect(bought.ok && bought.value.seatPolicy).toEqual({ mode: 'bought', countInvitations: true, removal: 'immediately' });
    expect(validatePlanInput({ name: 'Team', seatMode: 'some' })).toEqual({ ok: false, error: 'invalid_seat_policy' });
    expect(validatePlanInput({ name: 'Team', seatRemoval: 'never' })).toEqual({ ok: false, error: 'invalid_seat_policy' });
  });

  it('refuses each bad field with its own code', () => {
    const good = { name: 'Monthly', amount: 1999, currency: 'usd', interval: 'month' };
    expect(validatePriceInput({ ...good, name: '' })).toEqual({ ok: false, error: 'invalid_price_name' });
    expect(validatePriceInput({ ...good, amount: -1 })).toEqual({ ok: false, error: 'invalid_amount' });
    expect(validatePriceInput({ ...good, amount: 19.99 })).toEqual({ ok: false, error: 'invalid_amount' });
    expect(validatePriceInput({ ...good, currency: 'dollars' })).toEqual({ ok: false, error: 'invalid_currency' });
    expect(validatePriceInput({ ...good, interval: 'week' })).toEqual({ ok: false, error: 'invalid_interval' });
    expect(validatePriceInput({ ...good, currency: 'kwd', amount: 1005 })).toEqual({ ok: false, error: 'invalid_amount' });
  });

  const prices: Price[] = [
    { id: 'p_year', planId: 'plan_pro', name: 'Yearly', amount: 20_000, currency: 'usd', interval: 'year', active: true, seats: null },
    { id: 'p_old', planId: 'plan_pro', name: 'Old monthly', amount: 1500, currency: 'usd', interval: 'month', active: false, seats: null },
    { id: 'p_month', planId: 'plan_pro', name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month', active: true, seats: null },
    { id: 'p_free', planId: 'plan_free', name: 'Free', amount: 0, currency: 'usd', interval: 'month', active: true, seats: null },
    { id: 'p_ent', planId: 'plan_enterprise', name: 'Yearly', amount: 90_000, currency: 'usd', interval: 'year', active: true, seats: null },
  ];

  it('lists a plan’s prices monthly first, then by amount', () => {
    expect(pricesOfPlan(prices, 'plan_pro', { activeOnly: false }).map((p) => p.id)).toEqual(['p_old', 'p_month', 'p_year']);
    expect(pricesOfPlan(prices, 'plan_pro', { activeOnly: true }).map((p) => p.id)).toEqual(['p_month', 'p_year']);
  });

  it('the public catalog: visible plans in order, each with its active prices', () => {
    const plans = [plan('plan_pro', 1), plan('plan_free', 0), plan('plan_enterprise', 2, { hidden: true })];
    expect(publicCatalog(plans, prices).map((p) => [p.id, p.prices.map((x) => x.id)])).toEqual([
      ['plan_free', ['p_free']],
      ['plan_pro', ['p_month', 'p_year']],
    ]);
  });

  it('a snapshot keeps what billing needs', () => {
    expect(snapshotOf(prices[0]!)).toEqual({ id: 'p_year', planId: 'plan_pro', amount: 20_000, currency: 'usd', interval: 'year' });
  });
});

describe('resolveTrialDays', () => {
  const trials = { trialsEnabled: true, defaultTrialDays: 14 };
  const noTrials = { trialsEnabled: false, defaultTrialDays: null };

  it('a requested trial of 1..730 days needs trials enabled', () => {
    expect(resolveTrialDays(trials, 7)).toEqual({ ok: true, value: 7 });
    expect(resolveTrialDays(trials, 1)).toEqual({ ok: true, value: 1 });
    expect(resolveTrialDays(trials, 730)).toEqual({ ok: true, value: 730 });
    expect(resolveTrialDays(noTrials, 7)).toEqual({ ok: false, error: 'trials_not_enabled' });
    for (const bad of [0, 731, 2.5, -1]) expect(resolveTrialDays(trials, bad)).toEqual({ ok: false, error: 'invalid_trial_days' });
  });

  it('none requested: the plan default, or no trial', () => {
    expect(resolveTrialDays(trials, undefined)).toEqual({ ok: true, value: 14 });
    expect(resolveTrialDays(trials, null)).toEqual({ ok: true, value: 14 });
    expect(resolveTrialDays({ trialsEnabled: true, defaultTrialDays: null }, undefined)).toEqual({ ok: true, value: null });
    expect(resolveTrialDays(noTrials, undefined)).toEqual({ ok: true, value: null });
  });
});
