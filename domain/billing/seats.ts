import { type Result, err, ok } from '../result';
import type { PriceSnapshot } from './catalog';
import { type Currency, MAX_AMOUNT, validateAmount } from './money';
import { type PriceChangePreview, previewPriceChange } from './proration';
import type { Period } from './periods';

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

/**
 * Automatic mode: the quantity the subscription should have for `used` seats. Within a period a
 * freed seat only lowers it when the policy removes at once; otherwise the quantity stays at
 * least `current` until the period ends (`atRenewal`: the quantity for the next period, which
 * drops to what is used). Never below the price's minimum; at most its maximum (seats past the
 * maximum are refused before they are added: {@link seatAvailable}).
 */
export function automaticQuantity(
  policy: Pick<SeatPolicy, 'removal'>,
  pricing: SeatPricing,
  input: { used: number; current: number; atRenewal: boolean },
): number {
  const wanted = policy.removal === 'period_end' && !input.atRenewal ? Math.max(input.used, input.current) : input.used;
  const floor = Math.max(wanted, pricing.minimum);
  return pricing.maximum === null ? floor : Math.min(floor, pricing.maximum);
}

/**
 * Whether `adding` more seats fit: bought mode, within the quantity bought; automatic mode,
 * within the price's maximum (the quantity grows with them). `seats_exhausted` otherwise.
 */
export function seatAvailable(
  policy: Pick<SeatPolicy, 'mode'>,
  pricing: SeatPricing,
  input: { used: number; quantity: number; adding: number },
): Result<void, 'seats_exhausted'> {
  const capacity = policy.mode === 'bought' ? input.quantity : (pricing.maximum ?? Number.POSITIVE_INFINITY);
  if (input.used + input.adding > capacity) {
    return err(
      'seats_exhausted',
      policy.mode === 'bought' ? `All ${input.quantity} seats are taken: buy more seats first` : `This plan sells at most ${capacity} seats`,
    );
  }
  return ok(undefined);
}

/**
 * A quantity change at `at` within the period, prorated as Stripe prorates an item's quantity
 * change (`proration_behavior: always_invoice`): a credit for the unused time on the old quantity's
 * amount and a charge for the remaining time on the new one; the billing dates stay (unless the
 * old quantity cost nothing: a free price made paid starts a new period, as on Stripe). Null when
 * `at` is outside the period.
 */
export function previewQuantityChange(input: {
  period: Period;
  anchor: Date;
  price: PriceSnapshot & { seats: SeatPricing | null };
  from: number;
  to: number;
  at: Date;
  creditBalance: number;
}): PriceChangePreview | null {
  const at = (quantity: number): PriceSnapshot => ({ ...input.price, amount: seatAmount(input.price, quantity) });
  return previewPriceChange({
    period: input.period,
    anchor: input.anchor,
    from: at(input.from),
    to: at(input.to),
    at: input.at,
    creditBalance: input.creditBalance,
  });
}
