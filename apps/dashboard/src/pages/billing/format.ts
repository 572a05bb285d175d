import { echoAmount, formatMoney, isCurrency } from '../../../../../domain/billing/money';
import type { api } from '../../api';

type Ok<T> = Extract<Awaited<T>, { status: 200; body: unknown }>['body'];
export type Connection = NonNullable<Ok<ReturnType<typeof api.billing.get>>['connection']>;
export type Plan = Ok<ReturnType<typeof api.billing.listPlans>>['plans'][number];
export type Price = Plan['prices'][number];
export type SeatPolicy = Plan['seat_policy'];

export const locale = () => navigator.language || 'en-US';
/** An amount in minor units, written in its currency with Intl.NumberFormat. */
export const money = (amount: number, currency: string) => (isCurrency(currency) ? formatMoney({ amount, currency }, locale()) : `${amount} ${currency}`);

/** A date without its time (an invoice's period bounds). */
export const day = (iso: string) => new Date(iso).toLocaleDateString();

/** What an invoice was for, in words (the processor's billing reason otherwise). */
const INVOICE_REASONS: Record<string, string> = {
  subscription_create: 'New subscription',
  subscription_cycle: 'Renewal',
  subscription_update: 'Plan change',
  manual: 'Manual',
};
export const invoiceReason = (reason: string) => INVOICE_REASONS[reason] ?? reason;

export const firstIssue = (r: { success: false; error: { issues: Array<{ message: string }> } }) => r.error.issues[0]!.message;

/** A price as it will be created, shown back before it is: `490 = $4.90 / month`. */
export const echoPrice = (p: { amount: number; currency: string; interval: string }) =>
  `${echoAmount({ amount: p.amount, currency: p.currency }, locale())} / ${p.interval}`;

/** "1 seat", "3 seats". */
export const seatCount = (n: number) => `${n} ${n === 1 ? 'seat' : 'seats'}`;

/** Per-seat terms (the same words as the CLI's price list): base + unit/seat over the included seats. */
type SeatTerms = { unit_amount: number; included: number };

/**
 * What a price charges per period, without its interval: `$12.50` for a flat price; for a per-seat
 * one `$20.00 + $8.00/seat over 3 seats` (the base covers the first 3), `$20.00 + $8.00/seat` with
 * none included, `$8.00/seat` with no base either.
 */
export function priceAmount(p: { amount: number; currency: string; seats: SeatTerms | null }): string {
  if (p.seats === null) return money(p.amount, p.currency);
  const unit = `${money(p.seats.unit_amount, p.currency)}/seat`;
  if (p.seats.included > 0) return `${money(p.amount, p.currency)} + ${unit} over ${seatCount(p.seats.included)}`;
  return p.amount > 0 ? `${money(p.amount, p.currency)} + ${unit}` : unit;
}

/** The seats a per-seat price sells: `1 to 50 seats`, `from 1 seat`. */
export const seatRange = (s: { minimum: number; maximum: number | null }) =>
  s.maximum === null ? `from ${seatCount(s.minimum)}` : `${s.minimum} to ${seatCount(s.maximum)}`;

/** A plan's seat policy in words (its per-seat prices follow it). */
export function seatPolicyText(policy: SeatPolicy): string {
  const mode = policy.mode === 'bought' ? 'bought by the organization' : `automatic (the members${policy.count_invitations ? ' and pending invitations' : ''})`;
  return `${mode}; a freed seat ${policy.removal === 'immediately' ? 'credited at once' : 'billed until the period ends'}`;
}
