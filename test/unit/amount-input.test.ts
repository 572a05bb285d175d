import { describe, expect, it } from 'vitest';
import { echoAmount, formatMoney, parseAmountInput } from '../../domain/billing/money';

/** The one rule for an amount a person types, in the console's Amount field and the CLI's --amount. */
describe('parseAmountInput: minor units, or the currency’s exact decimals', () => {
  it('reads a whole number as minor units, the number stored and sent to the processor', () => {
    expect(parseAmountInput('490', 'usd')).toBe(490);
    expect(parseAmountInput(' 1250 ', 'usd')).toBe(1250);
    expect(parseAmountInput('1000', 'jpy')).toBe(1000);
    expect(parseAmountInput('500', 'isk')).toBe(500);
    expect(parseAmountInput('0', 'eur')).toBe(0);
  });
  it('reads a decimal only with exactly the currency’s decimals', () => {
    expect(parseAmountInput('12.50', 'usd')).toBe(1250);
    expect(parseAmountInput('1.250', 'kwd')).toBe(1250);
    expect(parseAmountInput('12.5', 'usd')).toBeNull();
    expect(parseAmountInput('12.345', 'usd')).toBeNull();
    expect(parseAmountInput('10.00', 'jpy')).toBeNull();
    expect(parseAmountInput('5.00', 'isk')).toBeNull();
    expect(parseAmountInput('10.00', 'xyz')).toBeNull();
  });
  it('refuses anything that is not a plain amount', () => {
    for (const text of ['', '-1', '1e3', '19,99', 'ten', '1 000', '0x10']) expect(parseAmountInput(text, 'usd')).toBeNull();
  });
  it('shows the amount back with its formatted value', () => {
    expect(echoAmount({ amount: parseAmountInput('490', 'usd')!, currency: 'usd' })).toBe('490 = $4.90');
    expect(echoAmount({ amount: 1000, currency: 'jpy' })).toBe('1000 = ¥1,000');
    expect(formatMoney({ amount: parseAmountInput('12.50', 'usd')!, currency: 'usd' })).toBe('$12.50');
  });
});
