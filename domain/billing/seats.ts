import { type Result, err, ok } from '../result';
import { MAX_AMOUNT } from './money';
import { MAX_SEATS, type QuantityError, type SeatPolicy, type SeatPricing, seatAmount } from './seat-terms';

export {
  DEFAULT_SEAT_POLICY,
  MAX_SEATS,
  type QuantityError,
  SEAT_MODES,
  type SeatMode,
  type SeatPolicy,
  type SeatPricing,
  type SeatPricingError,
  seatAmount,
  validateSeatPricing,
} from './seat-terms';

/**
 * A quantity a price sells: a whole number within its minimum and maximum, whose amount a price
 * may charge (a flat price sells 1).
 */
export function checkQuantity(price: { amount: number; seats: SeatPricing | null }, quantity: unknown): Result<number, QuantityError> {
  const pricing = price.seats;
  if (typeof quantity !== 'number' || !Number.isSafeInteger(quantity) || quantity < 1 || quantity > MAX_SEATS) {
    return err('invalid_quantity', `quantity: a whole number of seats from 1 to ${MAX_SEATS}`);
  }
  if (pricing === null) return quantity === 1 ? ok(1) : err('invalid_quantity', 'This price is not per seat: its quantity is 1');
  if (quantity < pricing.minimum) return err('quantity_below_minimum', `This price sells at least ${pricing.minimum} seats`);
  if (pricing.maximum !== null && quantity > pricing.maximum) return err('quantity_above_maximum', `This price sells at most ${pricing.maximum} seats`);
  if (seatAmount(price, quantity) > MAX_AMOUNT) return err('quantity_above_maximum', `${quantity} seats would cost more than one invoice may charge`);
  return ok(quantity);
}

/** Seats in use: the members, and the pending invitations when the policy counts them. */
export const seatsInUse = (policy: Pick<SeatPolicy, 'countInvitations'>, usage: { members: number; pendingInvitations: number }): number =>
  usage.members + (policy.countInvitations ? usage.pendingInvitations : 0);

/** Automatic mode: the quantity for `used` seats, within the price's minimum and maximum. */
export function automaticQuantity(pricing: SeatPricing, used: number): number {
  const floor = Math.max(used, pricing.minimum);
  return pricing.maximum === null ? floor : Math.min(floor, pricing.maximum);
}

/**
 * The most seats (members plus pending invitations) an organization may hold: the quantity bought
 * (bought mode), the price's maximum (automatic mode; null: no limit).
 */
export const seatCapacity = (policy: Pick<SeatPolicy, 'mode'>, pricing: SeatPricing, quantity: number): number | null =>
  policy.mode === 'bought' ? quantity : pricing.maximum;

/** One change of quantity at the processor: prorated now (charged or credited), or left for the next renewal to bill. */
export interface SeatStep {
  quantity: number;
  prorate: boolean;
}

/**
 * How a quantity moves from `current` to `target`, given the most seats already `paid` for in the
 * current period (at least `current`):
 * - more seats: those up to `paid` are taken back without a charge (paid for already this period),
 *   those beyond it are charged now, prorated;
 * - fewer seats, `period_end` (default): the quantity drops now without a credit, so the next renewal
 *   bills the lower one; the seat stays paid for until the period ends, and a seat freed and taken
 *   again within the period is not charged twice;
 * - fewer seats, `immediately`: the quantity drops now with a prorated credit, and is no longer paid.
 * Answers the steps (none when nothing changes) and the seats paid for after them.
 */
export function seatSteps(input: { current: number; target: number; paid: number; removal: SeatPolicy['removal'] }): { steps: SeatStep[]; paid: number } {
  const paid = Math.max(input.paid, input.current);
  const { current, target } = input;
  if (target === current) return { steps: [], paid };
  if (target > current) {
    if (target <= paid) return { steps: [{ quantity: target, prorate: false }], paid };
    const steps: SeatStep[] = current < paid ? [{ quantity: paid, prorate: false }] : [];
    return { steps: [...steps, { quantity: target, prorate: true }], paid: target };
  }
  return input.removal === 'immediately'
    ? { steps: [{ quantity: target, prorate: true }], paid: target }
    : { steps: [{ quantity: target, prorate: false }], paid };
}
