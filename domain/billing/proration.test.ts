import { describe, expect, it } from 'vitest';
import type { PriceSnapshot } from './catalog';
import { previewPriceChange, prorate, resetsBillingCycle } from './proration';

const d = (iso: string): Date => new Date(iso);
const price = (id: string, amount: number, interval: 'month' | 'year' = 'month', currency = 'usd'): PriceSnapshot => ({
  id,
  planId: `plan_${id}`,
  amount,
  currency,
  interval,
});
// April 2025: 30 days = 2,592,000 seconds.
const april = { start: d('2025-04-01T00:00:00Z'), end: d('2025-05-01T00:00:00Z') };

describe('prorate', () => {
  it('rounds to the nearest minor unit, ties away from zero', () => {
    expect(prorate(1, 1, 2)).toBe(1); // 0.5 -> 1
    expect(prorate(3, 1, 2)).toBe(2); // 1.5 -> 2
    expect(prorate(5, 1, 4)).toBe(1); // 1.25 -> 1
    expect(prorate(7, 3, 4)).toBe(5); // 5.25 -> 5
    expect(prorate(2000, 1, 3)).toBe(667); // 666.67 -> 667
    expect(prorate(1000, 1, 3)).toBe(333); // 333.33 -> 333
  });

  it('the whole period is the whole amount; none of it is zero', () => {
    expect(prorate(1234, 2_592_000, 2_592_000)).toBe(1234);
    expect(prorate(1234, 0, 2_592_000)).toBe(0);
  });

  it('stays exact at the largest amount over a leap year of seconds', () => {
    // 99,999,999 * 31,622,399 / 31,622,400 = 99,999,999 - 3.162... = 99,999,995.84 -> 99,999,996
    expect(prorate(99_999_999, 31_622_399, 31_622_400)).toBe(99_999_996);
  });

  it('refuses impossible inputs (bugs)', () => {
    expect(() => prorate(-1, 1, 2)).toThrow(RangeError);
    expect(() => prorate(1.5, 1, 2)).toThrow(RangeError);
    expect(() => prorate(1, 3, 2)).toThrow(RangeError);
    expect(() => prorate(1, 1, 0)).toThrow(RangeError);
  });
});

describe('previewPriceChange: same interval', () => {
  it("Stripe's example: 10 USD to 20 USD halfway through: -5 + 10 = 5 USD due", () => {
    // Apr 16 00:00 leaves 15 of April's 30 days: exactly half.
    const preview = previewPriceChange({
      period: april,
      anchor: april.start,
      from: price('basic', 1000),
      to: price('pro', 2000),
      at: d('2025-04-16T00:00:00Z'),
      creditBalance: 0,
    })!;
    expect(preview.resetsBillingCycle).toBe(false);
    expect(preview.period).toEqual(april);
    expect(preview.billingCycleAnchor).toEqual(april.start);
    expect(preview.invoice.lines).toEqual([
      { kind: 'unused_time', priceId: 'basic', amount: -500, period: { start: d('2025-04-16T00:00:00Z'), end: april.end } },
      { kind: 'remaining_time', priceId: 'pro', amount: 1000, period: { start: d('2025-04-16T00:00:00Z'), end: april.end } },
    ]);
    expect(preview.invoice).toMatchObject({ reason: 'subscription_update', currency: 'usd', subtotal: 500, amountDue: 500 });
  });

  it("Stripe's classic-mode example: 20 GBP down to 10 GBP with a third left: -6.67 + 3.33 = -3.34 (credit)", () => {
    // Apr 21 00:00 leaves 10 of 30 days. Credit 2000/3 = 666.67 -> 667; charge 1000/3 = 333.33 -> 333.
    const preview = previewPriceChange({
      period: april,
      anchor: april.start,
      from: price('pro', 2000, 'month', 'gbp'),
      to: price('basic', 1000, 'month', 'gbp'),
      at: d('2025-04-21T00:00:00Z'),
      creditBalance: 0,
    })!;
    expect(preview.invoice.lines.map((l) => l.amount)).toEqual([-667, 333]);
    expect(preview.invoice).toMatchObject({ subtotal: -334, amountDue: 0, creditApplied: 0, creditBalanceAfter: 334 });
  });

  it('leap February, 19 of 29 days left: credit 655, charge 1,638, due 983', () => {
    // 1000 * 19/29 = 655.17 -> 655; 2500 * 19/29 = 1637.93 -> 1638.
    const february = { start: d('2024-02-01T00:00:00Z'), end: d('2024-03-01T00:00:00Z') };
    const preview = previewPriceChange({
      period: february,
      anchor: february.start,
      from: price('basic', 1000),
      to: price('pro', 2500),
      at: d('2024-02-11T00:00:00Z'),
      creditBalance: 0,
    })!;
    expect(preview.invoice.lines.map((l) => l.amount)).toEqual([-655, 1638]);
    expect(preview.invoice.amountDue).toBe(983);
  });

  it('prorates by the second and rounds each line on its own', () => {
    // Apr 16 12:00:30 leaves 14.5 days - 30 s = 1,252,770 of 2,592,000 seconds.
    // Credit 1000 * 1252770/2592000 = 483.32 -> 483; charge 2000 * ... = 966.64 -> 967; due 484.
    // (Prorating the 1000 difference in one step would give 483: per-line rounding is the rule.)
    const preview = previewPriceChange({
      period: april,
      anchor: april.start,
      from: price('basic', 1000),
      to: price('pro', 2000),
      at: d('2025-04-16T12:00:30.900Z'),
      creditBalance: 0,
    })!;
    expect(preview.invoice.lines.map((l) => l.amount)).toEqual([-483, 967]);
    expect(preview.invoice.amountDue).toBe(484);
    expect(preview.invoice.lines[0]!.period.start.toISOString()).toBe('2025-04-16T12:00:30.000Z');
  });

  it('at the very start of the period: the whole old price back, the whole new price charged', () => {
    const preview = previewPriceChange({
      period: april,
      anchor: april.start,
      from: price('basic', 1000),
      to: price('pro', 2000),
      at: april.start,
      creditBalance: 0,
    })!;
    expect(preview.invoice.lines.map((l) => l.amount)).toEqual([-1000, 2000]);
  });

  it('to a free price: only the credit, which goes to the balance', () => {
    const preview = previewPriceChange({
      period: april,
      anchor: april.start,
      from: price('pro', 2000),
      to: price('free', 0),
      at: d('2025-04-16T00:00:00Z'),
      creditBalance: 0,
    })!;
    expect(preview.resetsBillingCycle).toBe(false);
    expect(preview.invoice.lines.map((l) => [l.kind, l.amount])).toEqual([['unused_time', -1000]]);
    expect(preview.invoice).toMatchObject({ amountDue: 0, creditBalanceAfter: 1000 });
  });

  it('an existing credit balance pays first', () => {
    const base = {
      period: april,
      anchor: april.start,
      from: price('basic', 1000),
      to: price('pro', 2000),
      at: d('2025-04-16T00:00:00Z'),
    };
    expect(previewPriceChange({ ...base, creditBalance: 300 })!.invoice).toMatchObject({
      subtotal: 500,
      creditApplied: 300,
      amountDue: 200,
      creditBalanceAfter: 0,
    });
    expect(previewPriceChange({ ...base, creditBalance: 800 })!.invoice).toMatchObject({
      creditApplied: 500,
      amountDue: 0,
      creditBalanceAfter: 300,
    });
  });
});

describe('previewPriceChange: the billing cycle resets', () => {
  it('monthly 10 USD to yearly 100 USD halfway through April: -5 + 100 = 95 due, new year from the change', () => {
    const at = d('2025-04-16T00:00:00Z');
    const preview = previewPriceChange({
      period: april,
      anchor: april.start,
      from: price('pro_m', 1000),
      to: price('pro_y', 10_000, 'year'),
      at,
      creditBalance: 0,
    })!;
    expect(preview.resetsBillingCycle).toBe(true);
    expect(preview.billingCycleAnchor).toEqual(at);
    expect(preview.period).toEqual({ start: at, end: d('2026-04-16T00:00:00Z') });
    expect(preview.invoice.lines).toEqual([
      { kind: 'unused_time', priceId: 'pro_m', amount: -500, period: { start: at, end: april.end } },
      { kind: 'subscription', priceId: 'pro_y', amount: 10_000, period: { start: at, end: d('2026-04-16T00:00:00Z') } },
    ]);
    expect(preview.invoice.amountDue).toBe(9500);
  });

  it('yearly 120 to monthly 15 with 183 of 365 days left: credit 60.16, charge 15, 45.16 left as credit', () => {
    // Jul 2 2025 to Jan 1 2026: 30 + 31 + 30 + 31 + 30 + 31 = 183 days. 12000 * 183/365 = 6016.44 -> 6016.
    const year = { start: d('2025-01-01T00:00:00Z'), end: d('2026-01-01T00:00:00Z') };
    const at = d('2025-07-02T00:00:00Z');
    const preview = previewPriceChange({
      period: year,
      anchor: year.start,
      from: price('pro_y', 12_000, 'year'),
      to: price('pro_m', 1500),
      at,
      creditBalance: 0,
    })!;
    expect(preview.invoice.lines.map((l) => l.amount)).toEqual([-6016, 1500]);
    expect(preview.invoice).toMatchObject({ subtotal: -4516, amountDue: 0, creditBalanceAfter: 4516 });
    expect(preview.period).toEqual({ start: at, end: d('2025-08-02T00:00:00Z') });
  });

  it('free to paid resets the period to the change (Stripe: "resets the billing period to the date of the change")', () => {
    const at = d('2025-04-16T00:00:00Z');
    const preview = previewPriceChange({
      period: april,
      anchor: april.start,
      from: price('free', 0),
      to: price('pro', 2000),
      at,
      creditBalance: 0,
    })!;
    expect(preview.resetsBillingCycle).toBe(true);
    expect(preview.invoice.lines.map((l) => [l.kind, l.amount])).toEqual([['subscription', 2000]]);
    expect(preview.period).toEqual({ start: at, end: d('2025-05-16T00:00:00Z') });
  });

  it('resetsBillingCycle: interval change or free to paid, nothing else', () => {
    expect(resetsBillingCycle(price('a', 1000), price('b', 2000))).toBe(false);
    expect(resetsBillingCycle(price('a', 2000), price('b', 0))).toBe(false);
    expect(resetsBillingCycle(price('a', 0), price('b', 0))).toBe(false);
    expect(resetsBillingCycle(price('a', 0), price('b', 1))).toBe(true);
    expect(resetsBillingCycle(price('a', 1000), price('b', 1000, 'year'))).toBe(true);
    expect(resetsBillingCycle(price('a', 1000, 'year'), price('b', 1000))).toBe(true);
  });
});

describe('previewPriceChange: outside the period', () => {
  const base = { period: april, anchor: april.start, from: price('basic', 1000), to: price('pro', 2000), creditBalance: 0 };

  it('is null at or after the period end (a renewal is due first) and before its start', () => {
    expect(previewPriceChange({ ...base, at: april.end })).toBeNull();
    expect(previewPriceChange({ ...base, at: d('2025-03-31T23:59:59Z') })).toBeNull();
  });

  it('a currency change is a bug the caller should have refused', () => {
    expect(() => previewPriceChange({ ...base, to: price('pro', 2000, 'month', 'eur'), at: d('2025-04-16T00:00:00Z') })).toThrow();
  });
});
