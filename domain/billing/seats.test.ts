import { describe, expect, it } from 'vitest';
import { seatSnapshotOf } from './catalog';
import { previewPriceChange } from './proration';
import {
  automaticQuantity,
  checkQuantity,
  DEFAULT_SEAT_POLICY,
  MAX_SEATS,
  seatAmount,
  seatCapacity,
  type SeatPricing,
  seatSteps,
  seatsInUse,
  validateSeatPricing,
} from './seats';

const usd = { amount: 5000, currency: 'usd' as const };
const pricing = (p: Partial<SeatPricing> = {}): SeatPricing => ({ unitAmount: 1000, included: 3, minimum: 1, maximum: null, ...p });

describe('per-seat pricing terms', () => {
  it('defaults: nothing included, at least one seat, no maximum', () => {
    expect(validateSeatPricing({ unitAmount: 1200 }, usd)).toEqual({ ok: true, value: { unitAmount: 1200, included: 0, minimum: 1, maximum: null } });
    expect(validateSeatPricing({ unitAmount: 1000, included: 5, minimum: 2, maximum: 50 }, usd)).toMatchObject({
      ok: true,
      value: { included: 5, minimum: 2, maximum: 50 },
    });
  });

  it.each([
    [{ unitAmount: 0 }, 'unitAmount'],
    [{ unitAmount: -5 }, 'unitAmount'],
    [{ unitAmount: 10.5 }, 'unitAmount'],
    [{ unitAmount: '1000' }, 'unitAmount'],
    [{ unitAmount: 1000, included: -1 }, 'included'],
    [{ unitAmount: 1000, included: 1.5 }, 'included'],
    [{ unitAmount: 1000, minimum: 0 }, 'minimum'],
    [{ unitAmount: 1000, minimum: 3, maximum: 2 }, 'maximum'],
    [{ unitAmount: 1000, included: 10, maximum: 5 }, 'maximum'],
    [{ unitAmount: 1000, maximum: MAX_SEATS + 1 }, 'maximum'],
  ])('refuses %j, naming %s', (input, field) => {
    const r = validateSeatPricing(input, usd);
    expect(r).toMatchObject({ ok: false, error: 'invalid_seat_pricing' });
    expect(r.ok ? '' : r.detail).toContain(field);
  });

  it('refuses terms whose amount at the maximum (else the minimum) would exceed what a price may charge', () => {
    expect(validateSeatPricing({ unitAmount: 99_999, maximum: 5000 }, usd)).toMatchObject({ ok: false, detail: expect.stringContaining('5000 seats') });
    expect(validateSeatPricing({ unitAmount: 99_999, minimum: 2000 }, usd)).toMatchObject({ ok: false, error: 'invalid_seat_pricing' });
    expect(validateSeatPricing({ unitAmount: 99_999, maximum: 100 }, usd).ok).toBe(true);
  });

  it('refuses a unit amount the currency cannot charge (jpy has no minor unit: still whole yen)', () => {
    expect(validateSeatPricing({ unitAmount: 500 }, { amount: 0, currency: 'jpy' }).ok).toBe(true);
  });
});

describe('the amount for a quantity', () => {
  it('is the base for the included seats and the unit amount for each seat beyond', () => {
    const price = { amount: 5000, seats: pricing() };
    expect([1, 3, 4, 10].map((q) => seatAmount(price, q))).toEqual([5000, 5000, 6000, 12000]);
    expect(seatAmount({ amount: 0, seats: pricing({ included: 0 }) }, 7)).toBe(7000);
    expect(seatAmount({ amount: 2500, seats: null }, 7)).toBe(2500);
  });
});

describe('quantities', () => {
  const priced = (p: Partial<SeatPricing> = {}) => ({ amount: 5000, seats: pricing(p) });
  it('takes a whole number within the minimum and maximum; a flat price only 1', () => {
    expect(checkQuantity(priced({ minimum: 2, maximum: 10 }), 5)).toEqual({ ok: true, value: 5 });
    expect(checkQuantity(priced({ minimum: 2 }), 1)).toMatchObject({ ok: false, error: 'quantity_below_minimum' });
    expect(checkQuantity(priced({ maximum: 10 }), 11)).toMatchObject({ ok: false, error: 'quantity_above_maximum' });
    for (const bad of [0, -1, 2.5, Number.NaN, '3', null, MAX_SEATS + 1]) expect(checkQuantity(priced(), bad)).toMatchObject({ error: 'invalid_quantity' });
    expect(checkQuantity({ amount: 2500, seats: null }, 1)).toEqual({ ok: true, value: 1 });
    expect(checkQuantity({ amount: 2500, seats: null }, 2)).toMatchObject({ ok: false, error: 'invalid_quantity' });
  });

  it('without a maximum, refuses a quantity whose amount one invoice could not charge', () => {
    expect(checkQuantity(priced({ unitAmount: 99_999 }), 900).ok).toBe(true);
    expect(checkQuantity(priced({ unitAmount: 99_999 }), 2000)).toMatchObject({ ok: false, error: 'quantity_above_maximum' });
  });
});

describe('automatic seats', () => {
  it('count members, and pending invitations when the plan says so', () => {
    expect(seatsInUse(DEFAULT_SEAT_POLICY, { members: 4, pendingInvitations: 2 })).toBe(4);
    expect(seatsInUse({ countInvitations: true }, { members: 4, pendingInvitations: 2 })).toBe(6);
  });

  it('follow the seats in use within the minimum and maximum; the capacity is the quantity bought, or the maximum', () => {
    const p = pricing({ minimum: 2, maximum: 20 });
    expect(automaticQuantity(p, 6)).toBe(6);
    expect(automaticQuantity(p, 1)).toBe(2);
    expect(automaticQuantity(p, 30)).toBe(20);
    expect(seatCapacity({ mode: 'bought' }, p, 7)).toBe(7);
    expect(seatCapacity({ mode: 'automatic' }, p, 7)).toBe(20);
    expect(seatCapacity({ mode: 'automatic' }, pricing(), 7)).toBeNull();
  });
});

describe('moving a quantity within a period', () => {
  it('charges a new seat now, prorated; frees one without a credit; takes a freed seat back without a charge', () => {
    const atEnd = 'period_end' as const;
    expect(seatSteps({ current: 5, target: 6, paid: 5, removal: atEnd })).toEqual({ steps: [{ quantity: 6, prorate: true }], paid: 6 });
    // Someone leaves: the quantity drops for the next renewal, the seat stays paid for this period...
    expect(seatSteps({ current: 6, target: 5, paid: 6, removal: atEnd })).toEqual({ steps: [{ quantity: 5, prorate: false }], paid: 6 });
    // ...someone joins again within the period: nothing charged.
    expect(seatSteps({ current: 5, target: 6, paid: 6, removal: atEnd })).toEqual({ steps: [{ quantity: 6, prorate: false }], paid: 6 });
    // Past the seats paid for: back to them for free, then the rest prorated.
    expect(seatSteps({ current: 4, target: 7, paid: 6, removal: atEnd })).toEqual({
      steps: [
        { quantity: 6, prorate: false },
        { quantity: 7, prorate: true },
      ],
      paid: 7,
    });
    expect(seatSteps({ current: 6, target: 6, paid: 6, removal: atEnd })).toEqual({ steps: [], paid: 6 });
  });

  it('credits a freed seat at once when the plan says so, and it is no longer paid for', () => {
    expect(seatSteps({ current: 6, target: 4, paid: 6, removal: 'immediately' })).toEqual({ steps: [{ quantity: 4, prorate: true }], paid: 4 });
    expect(seatSteps({ current: 4, target: 5, paid: 4, removal: 'immediately' })).toEqual({ steps: [{ quantity: 5, prorate: true }], paid: 5 });
  });
});

describe('a quantity change within the period', () => {
  const start = new Date('2026-03-01T00:00:00Z');
  const end = new Date('2026-03-31T00:00:00Z');
  const price = { id: 'price-team', planId: 'plan-team', amount: 5000, currency: 'usd' as const, interval: 'month' as const, seats: pricing() };
  const base = { period: { start, end }, anchor: start, creditBalance: 0 };
  const change = (from: number, to: number, at: string) =>
    previewPriceChange({ ...base, from: seatSnapshotOf(price, from), to: seatSnapshotOf(price, to), at: new Date(at) });

  it('halfway: credits half the old amount and charges half the new one; the dates stay; the lines name the seats', () => {
    const preview = change(5, 7, '2026-03-16T00:00:00Z')!;
    // 5 seats: 5000 + 2 x 1000 = 7000; 7 seats: 9000; half of each.
    expect(preview.invoice.lines.map((l) => [l.kind, l.amount, l.quantity])).toEqual([
      ['unused_time', -3500, 5],
      ['remaining_time', 4500, 7],
    ]);
    expect(preview.invoice.amountDue).toBe(1000);
    expect(preview.period).toEqual({ start, end });
    expect(preview.resetsBillingCycle).toBe(false);
  });

  it('within the included seats nothing changes hands; a decrease leaves a credit, nothing due', () => {
    const within = change(1, 3, '2026-03-16T00:00:00Z')!;
    expect(within.invoice.amountDue).toBe(0);
    expect(within.invoice.subtotal).toBe(0);
    const down = change(7, 5, '2026-03-16T00:00:00Z')!;
    expect(down.invoice.amountDue).toBe(0);
    expect(down.invoice.subtotal).toBe(-1000);
  });

  it('answers null outside the period', () => {
    expect(change(5, 7, '2026-04-02T00:00:00Z')).toBeNull();
  });
});
