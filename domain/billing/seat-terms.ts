import { type Result, err, ok } from '../result';
import { type Currency, MAX_AMOUNT, validateAmount } from './money';

/**
 * Per-seat prices: the rules an organization's seats follow, with no I/O. A per-seat price charges
 * its base `amount` for the first `included` seats and `unitAmount` for each seat beyond them, for
 * a quantity between `minimum` and `maximum` (Stripe: a graduated tiered price, a first tier up to
 * `included` with `flat_amount` = amount and `unit_amount` 0, then `unit_amount` = unitAmount; with
 * nothing included and no base amount, a plain per-unit price).
 *
 * Two ways the quantity moves, chosen per plan:
 * - automatic: it follows the seats in use (members, and pending invitations when the plan counts
 *   them). An added seat is charged at once, prorated; a freed seat lowers the quantity at the end
 *   of the period by default (so removing and re-adding someone within a period never pays for the
 *   same seat twice: the quantity never went down), or at once with a prorated credit;
 * - bought: an admin buys a quantity (previewed like a plan change); a seat past it is refused
 *   (`seats_exhausted`) until more are bought.
 */
export interface SeatPricing {
  /** Minor units per seat beyond the included ones. */
  unitAmount: number;
  /** Seats the base amount covers (0: none). */
  included: number;
  /** The fewest seats the price sells (at least 1). */
  minimum: number;
  /** The most seats the price sells; null: no limit. */
  maximum: number | null;
}

export type SeatMode = 'automatic' | 'bought';
export const SEAT_MODES: readonly SeatMode[] = ['automatic', 'bought'];

export interface SeatPolicy {
  mode: SeatMode;
  /** Automatic mode: pending invitations hold a seat too. */
  countInvitations: boolean;
  /** Automatic mode: a freed seat lowers the quantity at the period's end (default) or at once, with a credit. */
  removal: 'period_end' | 'immediately';
}

export const DEFAULT_SEAT_POLICY: SeatPolicy = { mode: 'automatic', countInvitations: false, removal: 'period_end' };

/** The most seats one subscription may hold, whatever a price says. */
export const MAX_SEATS = 100_000;

export type SeatPricingError = 'invalid_seat_pricing';
export type QuantityError = 'invalid_quantity' | 'quantity_below_minimum' | 'quantity_above_maximum';

const isCount = (n: unknown, min: number): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= MAX_SEATS;

/**
 * A per-seat price's terms, validated: the unit amount as any amount of the currency (above 0),
 * included seats 0 or more, a minimum of at least 1, a maximum (when given) not below the minimum
 * nor the included seats, and the amount at the maximum (else the minimum) within what a price
 * may charge; without a maximum, a quantity whose amount would exceed it is refused when asked
 * for ({@link checkQuantity}). Answers the reason in the error's detail.
 */
export function validateSeatPricing(
  input: { unitAmount: unknown; included?: unknown; minimum?: unknown; maximum?: unknown },
  base: { amount: number; currency: Currency },
): Result<SeatPricing, SeatPricingError> {
  const unit = typeof input.unitAmount === 'number' ? validateAmount(input.unitAmount, base.currency) : null;
  if (unit === null || !unit.ok || unit.value === 0) return err('invalid_seat_pricing', 'unitAmount: a whole number of minor units above 0');
  const included = input.included ?? 0;
  if (!isCount(included, 0)) return err('invalid_seat_pricing', `included: a whole number of seats from 0 to ${MAX_SEATS}`);
  const minimum = input.minimum ?? 1;
  if (!isCount(minimum, 1)) return err('invalid_seat_pricing', `minimum: a whole number of seats from 1 to ${MAX_SEATS}`);
  const maximum = input.maximum ?? null;
  if (maximum !== null && (!isCount(maximum, 1) || maximum < minimum || maximum < included)) {
    return err('invalid_seat_pricing', 'maximum: a whole number of seats, at least the minimum and the included seats');
  }
  const pricing: SeatPricing = { unitAmount: unit.value, included, minimum, maximum };
  const most = maximum ?? minimum;
  if (seatAmount({ amount: base.amount, seats: pricing }, most) > MAX_AMOUNT) {
    return err('invalid_seat_pricing', `The amount for ${most} seats would exceed ${MAX_AMOUNT} minor units: lower the amounts or the seats`);
  }
  return ok(pricing);
}

/** What a price charges per period for `quantity` seats (a flat price: its amount, whatever the quantity). */
export function seatAmount(price: { amount: number; seats: SeatPricing | null }, quantity: number): number {
  if (price.seats === null) return price.amount;
  return price.amount + price.seats.unitAmount * Math.max(0, quantity - price.seats.included);
}
