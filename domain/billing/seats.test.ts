import { describe, expect, it } from 'vitest';
import {
  automaticQuantity,
  checkQuantity,
  DEFAULT_SEAT_POLICY,
  MAX_SEATS,
  previewQuantityChange,
  seatAmount,
  seatAvailable,
  type SeatPricing,
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

  it('grow at once; shrink at the period end by default, so a seat freed and taken again within a period is paid once', () => {
    const p = pricing({ minimum: 2, maximum: 20 });
    const atEnd = { removal: 'period_end' as const };
    expect(automaticQuantity(atEnd, p, { used: 6, current: 5, atRenewal: false })).toBe(6);
    // Someone leaves: the quantity stays 6 until the renewal...
    expect(automaticQuantity(atEnd, p, { used: 5, current: 6, atRenewal: false })).toBe(6);
    // ...and someone joins again within the period: still 6, nothing charged.
    expect(automaticQuantity(atEnd, p, { used: 6, current: 6, atRenewal: false })).toBe(6);
    expect(automaticQuantity(atEnd, p, { used: 5, current: 6, atRenewal: true })).toBe(5);
    expect(automaticQuantity({ removal: 'immediately' }, p, { used: 5, current: 6, atRenewal: false })).toBe(5);
    expect(automaticQuantity(atEnd, p, { used: 1, current: 1, atRenewal: true })).toBe(2);
    expect(automaticQuantity(atEnd, p, { used: 30, current: 20, atRenewal: false })).toBe(20);
  });

  it('refuse a seat past the maximum; bought seats refuse one past the quantity bought', () => {
    const p = pricing({ maximum: 10 });
    expect(seatAvailable({ mode: 'automatic' }, p, { used: 9, quantity: 9, adding: 1 }).ok).toBe(true);
    expect(seatAvailable({ mode: 'automatic' }, p, { used: 10, quantity: 10, adding: 1 })).toMatchObject({ ok: false, error: 'seats_exhausted' });
    expect(seatAvailable({ mode: 'automatic' }, pricing(), { used: 5000, quantity: 5000, adding: 1 }).ok).toBe(true);
    expect(seatAvailable({ mode: 'bought' }, p, { used: 4, quantity: 5, adding: 1 }).ok).toBe(true);
    expect(seatAvailable({ mode: 'bought' }, p, { used: 5, quantity: 5, adding: 1 })).toMatchObject({
      ok: false,
      error: 'seats_exhausted',
      detail: 'All 5 seats are taken: buy more seats first',
    });
  });
});

describe('a quantity change within the period', () => {
  const start = new Date('2026-03-01T00:00:00Z');
  const end = new Date('2026-03-31T00:00:00Z');
  const price = { id: 'price-team', planId: 'plan-team', amount: 5000, currency: 'usd' as const, interval: 'month' as const, seats: pricing() };
  const base = { period: { start, end }, anchor: start, price, creditBalance: 0 };

  it('halfway: credits half the old amount and charges half the new one; the dates stay', () => {
    const preview = previewQuantityChange({ ...base, from: 5, to: 7, at: new Date('2026-03-16T00:00:00Z') })!;
    // 5 seats: 5000 + 2 x 1000 = 7000; 7 seats: 9000; half of each.
    expect(preview.invoice.lines.map((l) => [l.kind, l.amount])).toEqual([
      ['unused_time', -3500],
      ['remaining_time', 4500],
    ]);
    expect(preview.invoice.amountDue).toBe(1000);
    expect(preview.period).toEqual({ start, end });
    expect(preview.resetsBillingCycle).toBe(false);
  });

  it('within the included seats nothing changes hands; a decrease leaves a credit, nothing due', () => {
    const within = previewQuantityChange({ ...base, from: 1, to: 3, at: new Date('2026-03-16T00:00:00Z') })!;
    expect(within.invoice.amountDue).toBe(0);
    expect(within.invoice.subtotal).toBe(0);
    const down = previewQuantityChange({ ...base, from: 7, to: 5, at: new Date('2026-03-16T00:00:00Z') })!;
    expect(down.invoice.amountDue).toBe(0);
    expect(down.invoice.subtotal).toBe(-1000);
  });

  it('answers null outside the period', () => {
    expect(previewQuantityChange({ ...base, from: 5, to: 7, at: new Date('2026-04-02T00:00:00Z') })).toBeNull();
  });
});
