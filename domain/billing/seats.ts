import { type Result, err, ok } from '../result';
import type { PriceSnapshot } from './catalog';
import { MAX_AMOUNT } from './money';
import type { Period } from './periods';
import { type PriceChangePreview, previewPriceChange } from './proration';
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
