import { describe, expect, it } from 'vitest';
import {
  allocate,
  creditBalance,
  creditsWentLow,
  drawOrder,
  type GrantBalance,
  type MeterBalance,
  releaseOf,
  remainingOf,
  subtractAllocation,
  thresholdsCrossed,
  usedAfter,
} from './balance';
import { validateCreditGrant } from './credits';
import { overageAmount, readUsageLimits, validateUsageLimits } from './limits';
import { applyMeterUpdate, isUsageValue, validateMeterInput } from './meter';
import { usageWindow } from './windows';

const now = new Date('2030-03-10T12:00:00Z');
const day = 86_400_000;
const grant = (id: string, remaining: number, expiresInDays: number | null, amount = remaining, createdDaysAgo = 1): GrantBalance => ({
  id,
  amount,
  remaining,
  expiresAt: expiresInDays === null ? null : new Date(now.getTime() + expiresInDays * day),
  createdAt: new Date(now.getTime() - createdDaysAgo * day),
});
const balance = (over: Partial<MeterBalance> = {}): MeterBalance => ({
  aggregation: 'sum',
  included: 100,
  used: 0,
  overage: 0,
  mode: 'refuse',
  grants: [],
  ...over,
});

describe('allocating usage', () => {
  it('takes the included amount first, then credits soonest expiring first (never-expiring last), then overage', () => {
    const grants = [grant('forever', 50, null), grant('late', 30, 20), grant('soon', 10, 2)];
    expect(drawOrder(grants, now).map((g) => g.id)).toEqual(['soon', 'late', 'forever']);
    const a = allocate(balance({ used: 90, grants, mode: 'bill' }), 100, now, { track: false });
    expect(a).toEqual({
      amount: 100,
      fromIncluded: 10,
      fromCredits: [
        { grantId: 'soon', amount: 10 },
        { grantId: 'late', amount: 30 },
        { grantId: 'forever', amount: 50 },
      ],
      overage: 0,
    });
    const past = allocate(balance({ used: 100, grants: [grant('soon', 10, 2)], mode: 'bill' }), 25, now, { track: false });
    expect(past).toEqual({ amount: 25, fromIncluded: 0, fromCredits: [{ grantId: 'soon', amount: 10 }], overage: 15 });
  });

  it('refuses a consumption a hard limit cannot cover, whole; tracked usage is never refused', () => {
    const b = balance({ used: 95, grants: [grant('g', 3, 5)] });
    expect(remainingOf(b, now)).toBe(8);
    expect(allocate(b, 8, now, { track: false })).not.toBeNull();
    expect(allocate(b, 9, now, { track: false })).toBeNull();
    expect(allocate(b, 9, now, { track: true })).toEqual({ amount: 9, fromIncluded: 5, fromCredits: [{ grantId: 'g', amount: 3 }], overage: 1 });
    expect(allocate(balance({ used: 100, mode: 'allow' }), 5, now, { track: false })?.overage).toBe(5);
  });

  it('ignores expired and empty grants', () => {
    const grants = [grant('gone', 10, -1), grant('empty', 0, 3, 10), grant('ok', 4, 3)];
    expect(creditBalance(grants, now)).toBe(4);
    expect(drawOrder(grants, now).map((g) => g.id)).toEqual(['ok']);
  });

  it('keeps the highest level of a max meter, with no credits and the level past the included amount as overage', () => {
    const b = balance({ aggregation: 'max', used: 300, included: 500, grants: [grant('g', 100, null)] });
    expect(remainingOf(b, now)).toBe(200);
    expect(allocate(b, 600, now, { track: false })).toBeNull();
    expect(allocate(b, 600, now, { track: true })).toEqual({ amount: 600, fromIncluded: 0, fromCredits: [], overage: 100 });
    expect(allocate({ ...b, used: 600, overage: 100 }, 550, now, { track: true })?.overage).toBe(0);
    expect(usedAfter(b, 200)).toBe(300);
    expect(usedAfter(balance({ used: 300 }), 200)).toBe(500);
  });
});

describe('releasing a reservation', () => {
  const held = {
    amount: 60,
    fromIncluded: 20,
    fromCredits: [
      { grantId: 'a', amount: 10 },
      { grantId: 'b', amount: 20 },
    ],
    overage: 10,
  };
  it('gives back overage first, then the credits last drawn, then the included amount', () => {
    expect(releaseOf(held, 35)).toEqual({
      amount: 35,
      fromIncluded: 0,
      fromCredits: [
        { grantId: 'b', amount: 20 },
        { grantId: 'a', amount: 5 },
      ],
      overage: 10,
    });
    expect(releaseOf(held, 1000).amount).toBe(60);
  });
  it('leaves what is still held', () => {
    expect(subtractAllocation(held, releaseOf(held, 35))).toEqual({ amount: 25, fromIncluded: 20, fromCredits: [{ grantId: 'a', amount: 5 }], overage: 0 });
  });
});

describe('events', () => {
  it('reports 80% and 100% of the included amount once each', () => {
    expect(thresholdsCrossed(100, 79, 0)).toEqual([]);
    expect(thresholdsCrossed(100, 80, 0)).toEqual([80]);
    expect(thresholdsCrossed(100, 120, 0)).toEqual([80, 100]);
    expect(thresholdsCrossed(100, 120, 1)).toEqual([100]);
    expect(thresholdsCrossed(100, 120, 3)).toEqual([]);
    expect(thresholdsCrossed(0, 5, 0)).toEqual([]);
  });
  it('says credits went low when a draw takes the balance under 20% of the live grants', () => {
    const grants = [grant('a', 30, 5, 100)];
    expect(creditsWentLow(grants, 9, now)).toBe(false);
    expect(creditsWentLow(grants, 11, now)).toBe(true);
    expect(creditsWentLow([grant('a', 15, 5, 100)], 5, now)).toBe(false);
    expect(creditsWentLow(grants, 0, now)).toBe(false);
  });
});

describe('limits, meters, credits and windows', () => {
  it('validates limits: a known shape, one per meter, a price exactly when overage is billed', () => {
    const ok = validateUsageLimits([{ meter: 'api_calls', included: 5000, overage: 'bill', price: { unitAmount: 200, packageSize: 1000 } }]);
    expect(ok).toEqual({
      ok: true,
      value: [{ meter: 'api_calls', included: 5000, reset: 'period', overage: 'bill', price: { unitAmount: 200, packageSize: 1000 } }],
    });
    const bad = [
      [{ meter: 'Bad Key', included: 1 }],
      [{ meter: 'a', included: -1 }],
      [{ meter: 'a', included: 1.5 }],
      [{ meter: 'a', included: 1, reset: 'week' }],
      [{ meter: 'a', included: 1, overage: 'bill' }],
      [{ meter: 'a', included: 1, overage: 'refuse', price: { unitAmount: 1 } }],
      [{ meter: 'a', included: 1, overage: 'bill', price: { unitAmount: 0 } }],
      [{ meter: 'a', included: 1, overage: 'bill', price: { unitAmount: 5, packageSize: 0 } }],
      [
        { meter: 'a', included: 1 },
        { meter: 'a', included: 2 },
      ],
    ];
    for (const input of bad) expect(validateUsageLimits(input as never).ok, JSON.stringify(input)).toBe(false);
    expect(validateUsageLimits(Array.from({ length: 21 }, (_, i) => ({ meter: `m${i}`, included: 1 })))).toEqual({ ok: false, error: 'too_many_usage_limits' });
    expect(readUsageLimits([{ meter: 'a', included: 1 }, { junk: true }, 'x'])).toEqual([
      { meter: 'a', included: 1, reset: 'period', overage: 'refuse', price: null },
    ]);
    expect(readUsageLimits(null)).toEqual([]);
  });

  it('prices overage per started package', () => {
    expect(overageAmount(0, { unitAmount: 200, packageSize: 1000 })).toBe(0);
    expect(overageAmount(1, { unitAmount: 200, packageSize: 1000 })).toBe(200);
    expect(overageAmount(1500, { unitAmount: 200, packageSize: 1000 })).toBe(400);
    expect(overageAmount(3, { unitAmount: 7, packageSize: 1 })).toBe(21);
  });

  it('validates meters: key, name, unit and aggregation; renames keep the key', () => {
    expect(validateMeterInput({ key: 'api_calls' })).toEqual({ ok: true, value: { key: 'api_calls', name: 'api_calls', unit: '', aggregation: 'sum' } });
    for (const key of ['', 'API', '1calls', 'a-b', 'x'.repeat(65)]) expect(validateMeterInput({ key }).ok, key).toBe(false);
    expect(validateMeterInput({ key: 'a', aggregation: 'avg' })).toEqual({ ok: false, error: 'invalid_meter_aggregation' });
    expect(validateMeterInput({ key: 'a', unit: 'u'.repeat(31) })).toEqual({ ok: false, error: 'invalid_meter_unit' });
    const meter = { id: 'm', projectId: 'p', key: 'a', name: 'A', unit: '', aggregation: 'sum' as const, createdAt: now };
    expect(applyMeterUpdate(meter, { name: 'Calls', unit: 'calls' })).toEqual({ ok: true, value: { ...meter, name: 'Calls', unit: 'calls' } });
    expect(applyMeterUpdate(meter, { name: ' ' })).toEqual({ ok: false, error: 'invalid_meter_name' });
    expect([0, 1, 1e12].every((v) => isUsageValue(v))).toBe(true);
    expect([-1, 0.5, Number.NaN, 1e12 + 1, '1'].some((v) => isUsageValue(v))).toBe(false);
    expect(isUsageValue(0, 1)).toBe(false);
  });

  it('validates credit grants', () => {
    expect(validateCreditGrant({ amount: 10, reason: ' welcome ' }, now)).toEqual({ ok: true, value: { amount: 10, expiresAt: null, reason: 'welcome' } });
    expect(validateCreditGrant({ amount: 0 }, now)).toEqual({ ok: false, error: 'invalid_credit_amount' });
    expect(validateCreditGrant({ amount: 2.5 }, now)).toEqual({ ok: false, error: 'invalid_credit_amount' });
    expect(validateCreditGrant({ amount: 1, expiresAt: now }, now)).toEqual({ ok: false, error: 'invalid_credit_expiry' });
    expect(validateCreditGrant({ amount: 1, reason: 'x'.repeat(201) }, now)).toEqual({ ok: false, error: 'invalid_credit_reason' });
  });

  it('windows: a UTC day, a calendar month, or the billing period (late events before it get their own window)', () => {
    const period = { start: new Date('2030-03-05T08:00:00Z'), end: new Date('2030-04-05T08:00:00Z') };
    expect(usageWindow('day', now, period)).toEqual({ start: new Date('2030-03-10T00:00:00Z'), end: new Date('2030-03-11T00:00:00Z') });
    expect(usageWindow('month', now, period)).toEqual({ start: new Date('2030-03-01T00:00:00Z'), end: new Date('2030-04-01T00:00:00Z') });
    expect(usageWindow('period', now, period)).toEqual(period);
    expect(usageWindow('period', now, null)).toEqual({ start: new Date('2030-03-01T00:00:00Z'), end: new Date('2030-04-01T00:00:00Z') });
    const early = new Date('2030-03-05T07:00:00Z');
    expect(usageWindow('period', early, period)).toEqual({ start: new Date('2030-03-05T00:00:00Z'), end: period.start });
    expect(usageWindow('period', early, period, true)).toEqual(period);
  });
});
