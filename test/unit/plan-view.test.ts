import { DEFAULT_SEAT_POLICY } from '../../domain/billing/seat-terms';
import { describe, expect, it } from 'vitest';
import type { StoredPlan, StoredPrice } from '../../application/billing/billing.store';
import { operatorPlanView, planView } from '../../application/billing/views';
import { renderPlan } from '../../apps/server/http/billing.routes';

const at = new Date('2026-12-01T10:00:00Z');
const plan: StoredPlan = {
  id: 'plan_1',
  projectId: 'project_1',
  name: 'Pro',
  description: 'For teams',
  features: ['sso'],
  hidden: false,
  recommended: true,
  trialsEnabled: true,
  defaultTrialDays: 14,
  audience: 'users',
  seatPolicy: DEFAULT_SEAT_POLICY,
  usageLimits: [],
  position: 2,
  processor: 'stripe',
  processorProductId: 'prod_secret',
  createdAt: at,
  updatedAt: at,
};
const price: StoredPrice = {
  id: 'price_1',
  projectId: 'project_1',
  planId: 'plan_1',
  name: 'Monthly',
  amount: 1999,
  currency: 'usd',
  interval: 'month',
  active: true,
  seats: null,
  processor: 'stripe',
  processorPriceId: 'price_secret',
  createdAt: at,
  updatedAt: at,
};

/** The body of GET billing/plans for this plan, as the API writes it (field order included; audience since organizations can pay). */
const publicJson =
  '{"id":"plan_1","name":"Pro","description":"For teams","features":["sso"],"hidden":false,"recommended":true,"trialsEnabled":true,' +
  '"defaultTrialDays":14,"audience":"users","seatPolicy":{"mode":"automatic","countInvitations":false,"removal":"period_end"},"usageLimits":[],"position":2,' +
  '"prices":[{"id":"price_1","planId":"plan_1","name":"Monthly","amount":1999,"currency":"usd","interval":"month","active":true,"seats":null}]}';

describe('the plan view', () => {
  it('is what the API renders for a plan, field for field and in order', () => {
    expect(JSON.stringify(planView(plan, [price]))).toBe(publicJson);
    expect(JSON.stringify(renderPlan(planView(plan, [price])))).toBe(publicJson);
  });

  it('keeps an operator view’s processor ids out of the API’s plan', () => {
    const operator = operatorPlanView(plan, [price]);
    expect(operator.processorProductId).toBe('prod_secret');
    expect(operator.prices[0]!.processorPriceId).toBe('price_secret');
    expect(JSON.stringify(renderPlan(operator))).toBe(publicJson);
  });

  it('copies the features, so the view and the plan never share a list', () => {
    const view = planView(plan, []);
    const rendered = renderPlan(view);
    expect(rendered.features).toEqual(['sso']);
    expect(rendered.features).not.toBe(view.features);
    expect(view.features).not.toBe(plan.features);
  });
});
