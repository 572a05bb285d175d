import { describe, expect, it } from 'vitest';
import { planAtLeast, satisfies, type Entitlements, type RankedPlan } from '../../packages/sdk/src/entitlements';

/**
 * The spec's entitlement rules, as the SDK implements them for has() on the server and for the
 * browser's cached check: "a plan check passes when the user's plan is the named plan or any plan
 * above it in the dashboard order; a feature check passes when the features list contains the
 * flag; a check with both requires both." The order is GET billing/products (hidden plans keep
 * their place); entitlements are null when there is no entitled subscription.
 */

const plans: RankedPlan[] = [
  { id: 'p-basic', name: 'Basic', position: 0 },
  { id: 'p-pro', name: 'Pro', position: 1 },
  { id: 'p-legacy', name: 'Legacy', position: 2 }, // hidden, above Pro
  { id: 'p-team', name: 'Team', position: 3 },
];
const on = (plan: string, features: string[] = []): Entitlements => ({ plan, status: 'active', features });

describe('a plan check', () => {
  it('passes for the named plan', () => {
    expect(satisfies(on('Pro'), { plan: 'Pro' }, plans)).toBe(true);
  });
  it('passes for any plan above it in the order, a hidden one included', () => {
    expect(satisfies(on('Team'), { plan: 'Pro' }, plans)).toBe(true);
    expect(satisfies(on('Legacy'), { plan: 'Pro' }, plans)).toBe(true);
  });
  it('fails for a lower plan', () => {
    expect(satisfies(on('Basic'), { plan: 'Pro' }, plans)).toBe(false);
    expect(satisfies(on('Pro'), { plan: 'Legacy' }, plans)).toBe(false);
  });
  it('names the plan by id or by its name in any case, as Tollgate compares names', () => {
    expect(satisfies(on('Pro'), { plan: 'pro' }, plans)).toBe(true);
    expect(satisfies(on('Team'), { plan: 'p-pro' }, plans)).toBe(true);
    expect(satisfies(on('Basic'), { plan: 'p-pro' }, plans)).toBe(false);
  });
  it('fails for a plan the catalog does not know (a misspelt name denies)', () => {
    expect(satisfies(on('Team'), { plan: 'Prp' }, plans)).toBe(false);
    expect(planAtLeast('Ghost', 'Basic', plans)).toBe(false);
  });
  it('does not look at features', () => {
    expect(satisfies(on('Pro', []), { plan: 'Basic' }, plans)).toBe(true);
  });
});

describe('a feature check', () => {
  it('passes when the features list contains the flag', () => {
    expect(satisfies(on('Basic', ['reports', 'export']), { feature: 'export' }, plans)).toBe(true);
  });
  it('fails when it does not, whatever the plan', () => {
    expect(satisfies(on('Team', ['reports']), { feature: 'sso' }, plans)).toBe(false);
  });
  it('compares the flag exactly', () => {
    expect(satisfies(on('Pro', ['sso']), { feature: 'SSO' }, plans)).toBe(false);
  });
});

describe('a check with both', () => {
  it('requires both', () => {
    expect(satisfies(on('Team', ['sso']), { plan: 'Pro', feature: 'sso' }, plans)).toBe(true);
    expect(satisfies(on('Team', ['reports']), { plan: 'Pro', feature: 'sso' }, plans)).toBe(false);
    expect(satisfies(on('Basic', ['sso']), { plan: 'Pro', feature: 'sso' }, plans)).toBe(false);
  });
});

describe('null entitlements (no entitled subscription)', () => {
  it('pass nothing', () => {
    expect(satisfies(null, { plan: 'Basic' }, plans)).toBe(false);
    expect(satisfies(null, { feature: 'reports' }, plans)).toBe(false);
    expect(satisfies(null, { plan: 'Basic', feature: 'reports' }, plans)).toBe(false);
    expect(satisfies(null, {}, plans)).toBe(false);
  });
  it('while any entitlement passes an empty check', () => {
    expect(satisfies(on('Basic'), {}, plans)).toBe(true);
  });
});
