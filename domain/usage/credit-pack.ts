import { MAX_AMOUNT, parseCurrency, type Currency, validateAmount } from '../billing/money';
import { type Result, err, ok } from '../result';
import { MAX_USAGE_VALUE, METER_KEY } from './meter';

/**
 * A credit pack: `units` credits of one meter sold for a one-off `amount` through the processor's
 * checkout (docs/usage.md, "Credit packs"). Paying it grants the credits to the buyer (a user, or
 * an organization), expiring `expiresInDays` after the purchase (null: never).
 */
export interface CreditPack {
  id: string;
  projectId: string;
  meterKey: string;
  name: string;
  units: number;
  amount: number;
  currency: Currency;
  expiresInDays: number | null;
  active: boolean;
  createdAt: Date;
}

export const CREDIT_PACK_NAME_MAX_LENGTH = 100;
export const MAX_CREDIT_PACK_DAYS = 3660;

export type CreditPackError = 'invalid_credit_pack';

export interface CreditPackInput {
  meter: string;
  name: string;
  units: number;
  amount: number;
  currency: string;
  expiresInDays?: number | null;
}

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/**
 * A pack's terms: a meter key, a name of 1 to 100 characters, 1 to 10^12 units, a positive amount in
 * the currency's minor units, an expiry of 1 to 3660 days or none.
 */
export function validateCreditPack(input: CreditPackInput): Result<Omit<CreditPack, 'id' | 'projectId' | 'active' | 'createdAt'>, CreditPackError> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length === 0 || name.length > CREDIT_PACK_NAME_MAX_LENGTH || CONTROL_CHARS.test(name)) return err('invalid_credit_pack');
  if (typeof input.meter !== 'string' || !METER_KEY.test(input.meter)) return err('invalid_credit_pack');
  if (!Number.isSafeInteger(input.units) || input.units < 1 || input.units > MAX_USAGE_VALUE) return err('invalid_credit_pack');
  const currency = parseCurrency(input.currency);
  if (currency === null) return err('invalid_credit_pack');
  if (input.amount <= 0 || input.amount > MAX_AMOUNT || !validateAmount(input.amount, currency).ok) return err('invalid_credit_pack');
  const days = input.expiresInDays ?? null;
  if (days !== null && (!Number.isSafeInteger(days) || days < 1 || days > MAX_CREDIT_PACK_DAYS)) return err('invalid_credit_pack');
  return ok({ meterKey: input.meter, name, units: input.units, amount: input.amount, currency, expiresInDays: days });
}
