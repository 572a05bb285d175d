import { describe, expect, it } from 'vitest';
import { formatMoney, parseMajorAmount } from '../../domain/billing/money';

describe('parseMajorAmount: what a person types in the console, to minor units', () => {
  it('converts with the currency’s decimals, exactly', () => {
    expect(parseMajorAmount('12.50', 'usd')).toBe(1250);
    expect(parseMajorAmount('12', 'usd')).toBe(1200);
    expect(parseMajorAmount('0.1', 'eur')).toBe(10);
    expect(parseMajorAmount('19,99', 'eur')).toBe(1999);
    expect(parseMajorAmount('1000', 'jpy')).toBe(1000);
    expect(parseMajorAmount('1.250', 'kwd')).toBe(1250);
    expect(parseMajorAmount('5', 'isk')).toBe(500);
  });
  it('refuses more decimals than the currency shows, and anything that is not a plain amount', () => {
    expect(parseMajorAmount('1.001', 'usd')).toBeNull();
    expect(parseMajorAmount('10.5', 'jpy')).toBeNull();
    expect(parseMajorAmount('5.5', 'isk')).toBeNull();
    expect(parseMajorAmount('-1', 'usd')).toBeNull();
    expect(parseMajorAmount('1e3', 'usd')).toBeNull();
    expect(parseMajorAmount('', 'usd')).toBeNull();
  });
  it('round-trips with formatMoney', () => {
    expect(formatMoney({ amount: parseMajorAmount('12.50', 'usd')!, currency: 'usd' })).toBe('$12.50');
  });
});
