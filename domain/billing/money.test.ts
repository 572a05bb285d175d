import { describe, expect, it } from 'vitest';
import { CURRENCIES, MAX_AMOUNT, currencyExponent, formatMoney, isCurrency, parseCurrency, toDecimalString, validateAmount } from './money';

describe('parseCurrency', () => {
  it('lower-cases and trims known ISO 4217 codes, as Stripe writes them', () => {
    expect(parseCurrency('USD')).toBe('usd');
    expect(parseCurrency(' eur ')).toBe('eur');
    expect(parseCurrency('jpy')).toBe('jpy');
    expect(parseCurrency('Kwd')).toBe('kwd');
  });

  it('refuses what is not a 3-letter code of a real currency', () => {
    for (const bad of ['', 'us', 'usdd', 'u$d', 'xyz', 'xau', 'usn', '12a', 'US D']) expect(parseCurrency(bad), bad).toBeNull();
  });

  it('the list holds only unique lower-case 3-letter codes', () => {
    expect(new Set(CURRENCIES).size).toBe(CURRENCIES.length);
    for (const c of CURRENCIES) expect(c).toMatch(/^[a-z]{3}$/);
    expect(isCurrency('usd')).toBe(true);
    expect(isCurrency('USD')).toBe(false);
  });
});

describe('currencyExponent (Stripe decimals)', () => {
  it('two decimals by default, zero for zero-decimal, three for the Gulf dinars', () => {
    expect(currencyExponent('usd')).toBe(2);
    expect(currencyExponent('eur')).toBe(2);
    expect(currencyExponent('jpy')).toBe(0);
    expect(currencyExponent('krw')).toBe(0);
    expect(currencyExponent('vnd')).toBe(0);
    expect(currencyExponent('kwd')).toBe(3);
    expect(currencyExponent('bhd')).toBe(3);
  });

  it('ISK and UGX keep a two-decimal representation at Stripe (5 ISK is 500)', () => {
    expect(currencyExponent('isk')).toBe(2);
    expect(currencyExponent('ugx')).toBe(2);
  });
});

describe('validateAmount', () => {
  it('accepts non-negative safe integers up to 99,999,999', () => {
    expect(validateAmount(0, 'usd')).toEqual({ ok: true, value: 0 });
    expect(validateAmount(1, 'usd')).toEqual({ ok: true, value: 1 });
    expect(validateAmount(MAX_AMOUNT, 'usd')).toEqual({ ok: true, value: 99_999_999 });
    expect(validateAmount(1, 'jpy')).toEqual({ ok: true, value: 1 });
  });

  it('refuses floats, negatives, non-finite values and amounts over eight digits', () => {
    for (const bad of [-1, 1.5, 0.1, Number.NaN, Number.POSITIVE_INFINITY, 100_000_000, 2 ** 53]) {
      expect(validateAmount(bad, 'usd'), String(bad)).toEqual({ ok: false, error: 'invalid_amount' });
    }
  });

  it('three-decimal amounts end in 0; ISK and UGX amounts are whole units (multiples of 100)', () => {
    expect(validateAmount(1000, 'kwd').ok).toBe(true);
    expect(validateAmount(1005, 'kwd')).toEqual({ ok: false, error: 'invalid_amount' });
    expect(validateAmount(500, 'isk').ok).toBe(true);
    expect(validateAmount(550, 'isk')).toEqual({ ok: false, error: 'invalid_amount' });
    expect(validateAmount(1550, 'ugx')).toEqual({ ok: false, error: 'invalid_amount' });
    expect(validateAmount(1005, 'usd').ok).toBe(true);
  });
});

describe('toDecimalString', () => {
  it('is exact, integer-only arithmetic', () => {
    expect(toDecimalString({ amount: 1234, currency: 'usd' })).toBe('12.34');
    expect(toDecimalString({ amount: 5, currency: 'usd' })).toBe('0.05');
    expect(toDecimalString({ amount: 0, currency: 'usd' })).toBe('0.00');
    expect(toDecimalString({ amount: 99_999_999, currency: 'usd' })).toBe('999999.99');
    expect(toDecimalString({ amount: 1000, currency: 'jpy' })).toBe('1000');
    expect(toDecimalString({ amount: 1500, currency: 'kwd' })).toBe('1.500');
    expect(toDecimalString({ amount: 7, currency: 'kwd' })).toBe('0.007');
    expect(toDecimalString({ amount: 500, currency: 'isk' })).toBe('5');
  });

  it('keeps the sign of a credit', () => {
    expect(toDecimalString({ amount: -5, currency: 'usd' })).toBe('-0.05');
    expect(toDecimalString({ amount: -334, currency: 'gbp' })).toBe('-3.34');
  });

  it('throws on a non-integer amount (a bug, not user input)', () => {
    expect(() => toDecimalString({ amount: 1.5, currency: 'usd' })).toThrow(RangeError);
  });
});

describe('formatMoney', () => {
  it('formats for display with the currency decimals fixed', () => {
    expect(formatMoney({ amount: 1234, currency: 'usd' })).toBe('$12.34');
    expect(formatMoney({ amount: 1000, currency: 'jpy' })).toBe('¥1,000');
    expect(formatMoney({ amount: -500, currency: 'usd' })).toBe('-$5.00');
    expect(formatMoney({ amount: 99_999_999, currency: 'usd' })).toBe('$999,999.99');
    expect(formatMoney({ amount: 1500, currency: 'kwd' })).toBe('KWD\u00a01.500');
    expect(formatMoney({ amount: 500, currency: 'isk' })).toBe('ISK\u00a05');
  });

  it('does not round away decimals CLDR would hide (ALL has two at Stripe)', () => {
    expect(formatMoney({ amount: 155_050, currency: 'all' })).toBe('ALL\u00a01,550.50');
  });

  it('follows the locale', () => {
    expect(formatMoney({ amount: 1050, currency: 'eur' }, 'de-DE')).toBe('10,50\u00a0€');
  });
});
