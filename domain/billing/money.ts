import { type Result, err, ok } from '../result';

/**
 * Money is an integer count of the currency's minor unit, exactly as Stripe's `amount` and
 * `unit_amount` fields carry it ("1000 to charge 10 USD, 10 to charge 10 JPY",
 * https://docs.stripe.com/currencies). Tollgate never converts between units: the number stored
 * for a price is the number sent to the processor, and no float is ever involved.
 */
export interface Money {
  readonly amount: number;
  readonly currency: Currency;
}

/** A lower-case ISO 4217 code, as Stripe writes it (`usd`, `eur`, `jpy`). */
export type Currency = string;

/**
 * Stripe's limit on an amount: "up to eight digits (e.g., a value of 99999999 for a USD charge of
 * $999,999.99)" (Stripe API reference, Charge.amount).
 */
export const MAX_AMOUNT = 99_999_999;

/** The spec's default billing currency (Limits: "Default billing currency: USD"). */
export const DEFAULT_CURRENCY: Currency = 'usd';

/**
 * Active ISO 4217 currencies that can be charged (fund codes such as BOV or USN, precious metals
 * and test codes are left out). A currency Stripe does not support for the connected account is
 * refused by Stripe when the price is pushed; this list only keeps typos out.
 */
export const CURRENCIES: readonly Currency[] = (
  'aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bhd bif bmd bnd bob brl bsd btn bwp byn bzd ' +
  'cad cdf chf clp cny cop crc cup cve czk djf dkk dop dzd egp ern etb eur fjd fkp gbp gel ghs gip gmd ' +
  'gnf gtq gyd hkd hnl htg huf idr ils inr iqd irr isk jmd jod jpy kes kgs khr kmf kpw krw kwd kyd kzt ' +
  'lak lbp lkr lrd lsl lyd mad mdl mga mkd mmk mnt mop mru mur mvr mwk mxn myr mzn nad ngn nio nok npr ' +
  'nzd omr pab pen pgk php pkr pln pyg qar ron rsd rub rwf sar sbd scr sdg sek sgd shp sle sll sos srd ' +
  'ssp stn svc syp szl thb tjs tmt tnd top try ttd twd tzs uah ugx usd uyu uzs ved ves vnd vuv wst xaf ' +
  'xcd xcg xof xpf yer zar zmw zwg zwl'
).split(' ');

const CURRENCY_SET: ReadonlySet<string> = new Set(CURRENCIES);

/**
 * Stripe's zero-decimal currencies: the amount is whole units (`10` charges 10 JPY)
 * (https://docs.stripe.com/currencies#zero-decimal). UGX is on Stripe's list but is a special case
 * handled like ISK (see {@link HUNDREDS_ONLY_CURRENCIES}).
 */
export const ZERO_DECIMAL_CURRENCIES: readonly Currency[] = [
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
];

/**
 * Stripe's three-decimal currencies: amounts carry three decimals and "the last digit must be 0",
 * so they are multiples of 10 (https://docs.stripe.com/currencies#three-decimal).
 */
export const THREE_DECIMAL_CURRENCIES: readonly Currency[] = ['bhd', 'jod', 'kwd', 'omr', 'tnd'];

/**
 * ISK and UGX "transitioned to a zero-decimal currency, but backward compatibility requires you to
 * represent it as a two-decimal value, where the decimal amount is always 00. For example, to charge
 * 5 ISK, provide an amount value of 500" (https://docs.stripe.com/currencies#special-cases).
 */
export const HUNDREDS_ONLY_CURRENCIES: readonly Currency[] = ['isk', 'ugx'];

/** Lower-cases and trims a currency code; null when it is not a known 3-letter ISO 4217 code. */
export function parseCurrency(input: string): Currency | null {
  const code = input.trim().toLowerCase();
  return /^[a-z]{3}$/.test(code) && CURRENCY_SET.has(code) ? code : null;
}

export const isCurrency = (value: string): value is Currency => CURRENCY_SET.has(value);

/** Number of decimals in Stripe's representation of the currency: 0, 2 or 3. */
export function currencyExponent(currency: Currency): 0 | 2 | 3 {
  if (ZERO_DECIMAL_CURRENCIES.includes(currency)) return 0;
  if (THREE_DECIMAL_CURRENCIES.includes(currency)) return 3;
  return 2;
}

/** Decimals shown to people: Stripe's exponent, except ISK and UGX, which are whole units. */
function displayExponent(currency: Currency): number {
  return HUNDREDS_ONLY_CURRENCIES.includes(currency) ? 0 : currencyExponent(currency);
}

export type AmountError = 'invalid_amount';

/**
 * A price or charge amount: a safe integer from 0 to {@link MAX_AMOUNT}, and for the currencies
 * Stripe constrains, a multiple of 10 (three-decimal) or 100 (ISK, UGX). Zero is allowed (a free
 * price); whether a zero charge is sent at all is the caller's business.
 */
export function validateAmount(amount: number, currency: Currency): Result<number, AmountError> {
  if (!Number.isSafeInteger(amount) || amount < 0 || amount > MAX_AMOUNT) return err('invalid_amount');
  if (THREE_DECIMAL_CURRENCIES.includes(currency) && amount % 10 !== 0) return err('invalid_amount');
  if (HUNDREDS_ONLY_CURRENCIES.includes(currency) && amount % 100 !== 0) return err('invalid_amount');
  return ok(amount);
}

/**
 * The amount as an exact decimal string in major units, computed with integer arithmetic:
 * `{1234, usd}` -> `"12.34"`, `{1000, jpy}` -> `"1000"`, `{-5, usd}` -> `"-0.05"`,
 * `{500, isk}` -> `"5"`. Negative amounts (credits) keep their sign.
 */
export function toDecimalString(money: Money): string {
  if (!Number.isSafeInteger(money.amount)) throw new RangeError(`Amount is not a safe integer: ${money.amount}`);
  const exponent = currencyExponent(money.currency);
  const shown = displayExponent(money.currency);
  const sign = money.amount < 0 ? '-' : '';
  const digits = String(Math.abs(money.amount)).padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent, digits.length - exponent + shown);
  return shown > 0 ? `${sign}${whole}.${fraction}` : `${sign}${whole}`;
}

/**
 * Display form for people, through `Intl.NumberFormat` fed the exact decimal string (never a
 * float), with the currency's decimals fixed so nothing is rounded away: `$12.34`, `¥1,000`,
 * `-$0.05`. The output depends on the runtime's CLDR data, so it is for display only; compare
 * amounts, never formatted strings.
 */
export function formatMoney(money: Money, locale = 'en-US'): string {
  const digits = displayExponent(money.currency);
  const format = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: money.currency.toUpperCase(),
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
  return format.format(toDecimalString(money) as `${number}`);
}

/**
 * An amount typed by a person (the console's Amount field, the CLI's `--amount`), one rule for both:
 * a whole number is minor units, exactly what is stored and sent to the processor (`1000` is $10.00
 * in usd, ¥1,000 in jpy). A decimal is accepted only where it cannot be misread: for a currency with
 * minor units (not a zero-decimal one, nor ISK or UGX), written with exactly that currency's number
 * of decimals (`10.00` or `9.99` in usd, `1.250` in kwd). Integer arithmetic, never a float. Null
 * when the text is not such an amount.
 */
export function parseAmountInput(text: string, currency: Currency): number | null {
  const trimmed = text.trim();
  if (/^\d{1,15}$/.test(trimmed)) return Number(trimmed);
  const match = /^(\d{1,15})\.(\d{1,6})$/.exec(trimmed);
  if (!match || !isCurrency(currency) || HUNDREDS_ONLY_CURRENCIES.includes(currency)) return null;
  const decimals = currencyExponent(currency);
  if (decimals === 0 || match[2]!.length !== decimals) return null;
  const minor = Number(`${match[1]}${match[2]}`);
  return Number.isSafeInteger(minor) ? minor : null;
}

/** An amount in minor units shown back with its formatted value before it is used: `490 = $4.90`. */
export const echoAmount = (money: Money, locale = 'en-US'): string => `${money.amount} = ${formatMoney(money, locale)}`;
