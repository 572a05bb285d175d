import { describe, expect, it } from 'vitest';
import type { InvoiceState, SubscriptionFacts } from './sync';
import { billingEventsOf } from './sync';

const at = new Date('2026-01-10T12:00:00Z');
const price = { id: 'price-basic', planId: 'basic', amount: 1000, currency: 'usd', interval: 'month' as const };
const sub = (patch: Partial<SubscriptionFacts> = {}): SubscriptionFacts => ({
  id: 'sub-1',
  status: 'active',
  cancelAtPeriodEnd: false,
  price,
  canceledAt: null,
  createdAt: at,
  ...patch,
});
const inv = (patch: Partial<InvoiceState> = {}): InvoiceState => ({ id: 'in-1', status: 'paid', subtotal: 1000, attemptCount: 1, ...patch });
const types = (change: Parameters<typeof billingEventsOf>[0]) => billingEventsOf(change).map((e) => e.type);
const none = new Map<string, InvoiceState>();

describe('billingEventsOf', () => {
  it('a new paid subscription: created, then its invoice paid', () => {
    expect(types({ before: null, after: sub(), invoicesBefore: none, invoicesAfter: [inv()] })).toEqual(['subscription.created', 'invoice.paid']);
  });

  it('the same state reported again causes nothing (a duplicate or stale webhook)', () => {
    const known = new Map([['in-1', inv()]]);
    expect(types({ before: sub(), after: sub(), invoicesBefore: known, invoicesAfter: [inv()] })).toEqual([]);
  });

  it('a trial starts with a $0 invoice: created only', () => {
    expect(types({ before: null, after: sub({ status: 'trialing' }), invoicesBefore: none, invoicesAfter: [inv({ subtotal: 0 })] })).toEqual([
      'subscription.created',
    ]);
  });

  it('an incomplete subscription is not created; its failed invoice is a payment.failed', () => {
    const events = billingEventsOf({ before: null, after: sub({ status: 'incomplete' }), invoicesBefore: none, invoicesAfter: [inv({ status: 'open' })] });
    expect(events.map((e) => e.type)).toEqual(['payment.failed']);
    expect(events[0]!.dedupeKey).toBe('payment.failed:in-1:1');
  });

  it('incomplete becoming active is the creation', () => {
    const known = new Map([['in-1', inv({ status: 'open' })]]);
    expect(types({ before: sub({ status: 'incomplete' }), after: sub(), invoicesBefore: known, invoicesAfter: [inv({ attemptCount: 2 })] })).toEqual([
      'subscription.created',
      'invoice.paid',
    ]);
  });

  it('a plan change: updated before its proration invoice', () => {
    const after = sub({ price: { ...price, id: 'price-pro', planId: 'pro', amount: 3000 } });
    expect(types({ before: sub(), after, invoicesBefore: none, invoicesAfter: [inv({ id: 'in-2', subtotal: 1000 })] })).toEqual([
      'subscription.updated',
      'invoice.paid',
    ]);
  });

  it('a renewal is only invoice.paid', () => {
    expect(types({ before: sub(), after: sub(), invoicesBefore: none, invoicesAfter: [inv({ id: 'in-2' })] })).toEqual(['invoice.paid']);
  });

  it('a failed renewal: payment.failed then the status change; another failed attempt is a new payment.failed', () => {
    const first = billingEventsOf({
      before: sub(),
      after: sub({ status: 'past_due' }),
      invoicesBefore: none,
      invoicesAfter: [inv({ id: 'in-2', status: 'open' })],
    });
    expect(first.map((e) => e.type)).toEqual(['payment.failed', 'subscription.updated']);
    const known = new Map([['in-2', inv({ id: 'in-2', status: 'open' })]]);
    const retry = billingEventsOf({
      before: sub({ status: 'past_due' }),
      after: sub({ status: 'past_due' }),
      invoicesBefore: known,
      invoicesAfter: [inv({ id: 'in-2', status: 'open', attemptCount: 2 })],
    });
    expect(retry.map((e) => e.dedupeKey)).toEqual(['payment.failed:in-2:2']);
  });

  it('recovering from past due: invoice.paid, then updated', () => {
    const known = new Map([['in-2', inv({ id: 'in-2', status: 'open' })]]);
    expect(types({ before: sub({ status: 'past_due' }), after: sub(), invoicesBefore: known, invoicesAfter: [inv({ id: 'in-2', attemptCount: 2 })] })).toEqual([
      'invoice.paid',
      'subscription.updated',
    ]);
  });

  it('pending cancellation and pause are updates; the end is canceled, once', () => {
    expect(types({ before: sub(), after: sub({ cancelAtPeriodEnd: true }), invoicesBefore: none, invoicesAfter: [] })).toEqual(['subscription.updated']);
    expect(types({ before: sub(), after: sub({ status: 'paused' }), invoicesBefore: none, invoicesAfter: [] })).toEqual(['subscription.updated']);
    const ended = billingEventsOf({ before: sub({ cancelAtPeriodEnd: true }), after: sub({ status: 'canceled' }), invoicesBefore: none, invoicesAfter: [] });
    expect(ended).toEqual([{ type: 'subscription.canceled', dedupeKey: 'subscription.canceled:sub-1', invoiceId: null }]);
    expect(types({ before: sub({ status: 'canceled' }), after: sub({ status: 'canceled' }), invoicesBefore: none, invoicesAfter: [] })).toEqual([]);
  });

  it('an incomplete subscription that expires announces nothing', () => {
    expect(types({ before: sub({ status: 'incomplete' }), after: sub({ status: 'incomplete_expired' }), invoicesBefore: none, invoicesAfter: [] })).toEqual([]);
  });

  it('a checkout seen only once it was already canceled: created, then canceled', () => {
    expect(types({ before: null, after: sub({ status: 'canceled' }), invoicesBefore: none, invoicesAfter: [inv()] })).toEqual([
      'subscription.created',
      'invoice.paid',
      'subscription.canceled',
    ]);
  });
});
