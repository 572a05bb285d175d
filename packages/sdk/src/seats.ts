/**
 * Per-seat prices, as Tollgate bills them: a price with `seats` charges its `amount` for the first
 * `included` seats and `unitAmount` for each seat beyond, per interval; the quantity sold lies
 * between `minimum` and `maximum` (null: no limit). Amounts are integer minor units.
 */
import type { Plan, Price } from './types';

/** The amount a price charges per interval for `quantity` seats: amount + unitAmount x max(0, quantity - included). A flat price: its amount. */
export function amountForSeats(price: Pick<Price, 'amount' | 'seats'>, quantity: number): number {
  if (!price.seats) return price.amount;
  return price.amount + price.seats.unitAmount * Math.max(0, quantity - price.seats.included);
}

/**
 * The seats a subscription to `price` would start with for an organization holding `held` seats
 * (members, and pending invitations when the plan counts them): at least the price's minimum, at
 * most its maximum. Automatic seats start there; bought ones default to it.
 */
export function startingSeats(price: Pick<Price, 'seats'>, held: number): number {
  if (!price.seats) return 1;
  const floor = Math.max(held, price.seats.minimum);
  return price.seats.maximum === null ? floor : Math.min(floor, price.seats.maximum);
}

/** Whether a plan's per-seat prices have their seats bought by an admin (a quantity is chosen), not following the members. */
export const seatsAreBought = (plan: Pick<Plan, 'seatPolicy'>): boolean => plan.seatPolicy?.mode === 'bought';
