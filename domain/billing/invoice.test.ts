import { describe, expect, it } from 'vitest';
import { BILLING_EVENT_TYPES, isBillingEventType } from './events';
import { type InvoiceLine, draftInvoice, invoiceListLimit, isCardExpired, isProration, sortInvoicesNewestFirst } from './invoice';

const period = { start: new Date('2025-04-01T00:00:00Z'), end: new Date('2025-05-01T00:00:00Z') };
const line = (amount: number, kind: InvoiceLine['kind'] = 'subscription'): InvoiceLine => ({ kind, priceId: 'p', amount, period });

describe('draftInvoice: the customer credit balance', () => {
  it('charges the sum when there is no credit', () => {
    expect(draftInvoice('subscription_cycle', 'usd', [line(1000)], 0)).toMatchObject({
      subtotal: 1000,
      creditApplied: 0,
      amountDue: 1000,
      creditBalanceAfter: 0,
    });
  });

  it('uses credit first, up to the subtotal', () => {
    expect(draftInvoice('subscription_cycle', 'usd', [line(1000)], 300)).toMatchObject({ creditApplied: 300, amountDue: 700, creditBalanceAfter: 0 });
    expect(draftInvoice('subscription_cycle', 'usd', [line(1000)], 1300)).toMatchObject({ creditApplied: 1000, amountDue: 0, creditBalanceAfter: 300 });
  });

  it('a negative sum charges nothing and adds to the balance', () => {
    const lines = [line(-667, 'unused_time'), line(333, 'remaining_time')];
    expect(draftInvoice('subscription_update', 'gbp', lines, 100)).toMatchObject({ subtotal: -334, creditApplied: 0, amountDue: 0, creditBalanceAfter: 434 });
  });

  it('no lines: nothing due, balance untouched', () => {
    expect(draftInvoice('subscription_cycle', 'usd', [], 50)).toMatchObject({ subtotal: 0, amountDue: 0, creditBalanceAfter: 50 });
  });

  it('a negative or fractional balance is a bug', () => {
    expect(() => draftInvoice('subscription_cycle', 'usd', [], -1)).toThrow(RangeError);
    expect(() => draftInvoice('subscription_cycle', 'usd', [], 0.5)).toThrow(RangeError);
  });

  it('proration lines are the unused and remaining time ones', () => {
    expect(isProration(line(1, 'unused_time'))).toBe(true);
    expect(isProration(line(1, 'remaining_time'))).toBe(true);
    expect(isProration(line(1, 'subscription'))).toBe(false);
  });
});

describe('invoice lists', () => {
  it('limit: 10 by default, 1..100 allowed', () => {
    expect(invoiceListLimit(undefined)).toBe(10);
    expect(invoiceListLimit(1)).toBe(1);
    expect(invoiceListLimit(100)).toBe(100);
    for (const bad of [0, 101, 2.5, -1]) expect(invoiceListLimit(bad)).toBeNull();
  });

  it('newest first, ties by id descending', () => {
    const at = (iso: string) => new Date(iso);
    const sorted = sortInvoicesNewestFirst([
      { id: 'in_a', createdAt: at('2025-04-01T00:00:00Z') },
      { id: 'in_c', createdAt: at('2025-06-01T00:00:00Z') },
      { id: 'in_b', createdAt: at('2025-05-01T00:00:00Z') },
      { id: 'in_d', createdAt: at('2025-05-01T00:00:00Z') },
    ]);
    expect(sorted.map((i) => i.id)).toEqual(['in_c', 'in_d', 'in_b', 'in_a']);
  });
});

describe('payment method summary', () => {
  it('a card is valid through the end of its expiry month', () => {
    const card = { expMonth: 12, expYear: 2025 };
    expect(isCardExpired(card, new Date('2025-12-31T23:59:59Z'))).toBe(false);
    expect(isCardExpired(card, new Date('2026-01-01T00:00:00Z'))).toBe(true);
    expect(isCardExpired({ expMonth: 3, expYear: 2026 }, new Date('2025-12-31T00:00:00Z'))).toBe(false);
    expect(isCardExpired({ expMonth: 3, expYear: 2025 }, new Date('2025-04-01T00:00:00Z'))).toBe(true);
  });
});

describe('billing event types', () => {
  it('are the five the spec names, and invoice.refunded (a duplicate subscription refunded)', () => {
    expect([...BILLING_EVENT_TYPES]).toEqual([
      'subscription.created',
      'subscription.updated',
      'subscription.canceled',
      'invoice.paid',
      'payment.failed',
      'invoice.refunded',
    ]);
    expect(isBillingEventType('invoice.paid')).toBe(true);
    expect(isBillingEventType('customer.subscription.updated')).toBe(false);
  });
});
