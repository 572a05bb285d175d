import { describe, expect, it } from 'vitest';
import { amountForSeats, seatsAreBought, startingSeats } from '../../packages/sdk/src';

/** The SDK's per-seat arithmetic, as domain/billing/seats.ts bills it: amount + unitAmount × max(0, q − included). */

const perSeat = (seats: { unitAmount: number; included: number; minimum: number; maximum: number | null }) => ({ amount: 2000, seats });

describe('per-seat prices in the SDK', () => {
  it('prices a quantity: the amount covers the included seats, each further one costs the unit amount', () => {
    const price = perSeat({ unitAmount: 800, included: 3, minimum: 1, maximum: null });
    expect([1, 2, 3, 4, 10].map((q) => amountForSeats(price, q))).toEqual([2000, 2000, 2000, 2800, 7600]);
    expect(amountForSeats(perSeat({ unitAmount: 500, included: 0, minimum: 1, maximum: null }), 3)).toBe(3500);
    expect(amountForSeats({ amount: 6000, seats: null }, 12)).toBe(6000);
  });

  it('starts at the seats held, within the minimum and the maximum; a flat price at one', () => {
    const price = perSeat({ unitAmount: 800, included: 3, minimum: 2, maximum: 5 });
    expect([1, 2, 4, 9].map((held) => startingSeats(price, held))).toEqual([2, 2, 4, 5]);
    expect(startingSeats({ seats: null }, 7)).toBe(1);
  });

  it('says whether a plan has its seats bought', () => {
    expect(seatsAreBought({ seatPolicy: { mode: 'bought', countInvitations: false, removal: 'period_end' } })).toBe(true);
    expect(seatsAreBought({ seatPolicy: { mode: 'automatic', countInvitations: true, removal: 'immediately' } })).toBe(false);
  });
});
