import type Stripe from 'stripe';
import type { StripeObject } from './account';
import { applyMetadata, matchesCreated } from './catalog';
import type { Route } from './context';
import { invalidRequest } from './errors';
import { createdFilter, listFields, s } from './params';
import { newId, paginate } from './util';

/**
 * Refunds, as https://docs.stripe.com/api/refunds/create documents them: "you must specify a Charge
 * or a PaymentIntent object on which to create it ... You can optionally refund only part of a
 * charge. You can do so multiple times, until the entire charge has been refunded. Once entirely
 * refunded, a charge can't be refunded again. This method will raise an error when called on an
 * already-refunded charge, or when trying to refund more money than is left on a charge."
 *
 * Charges are not modelled here (a PaymentIntent's `latest_charge` is null), so a refund names its
 * PaymentIntent and has `charge: null`; it succeeds at once (card refunds in test mode do), emits
 * `refund.created`, and leaves the PaymentIntent `succeeded` with its `amount_received`, as Stripe
 * does. The balance counts refunds out.
 */

/** What is left to refund of a PaymentIntent. */
export function refundableOf(acct: { all<T>(type: string, filter?: (o: T) => boolean): T[] }, pi: Stripe.PaymentIntent): number {
  const refunded = acct.all<Stripe.Refund>('refund', (r) => r.payment_intent === pi.id && r.status === 'succeeded').reduce((sum, r) => sum + r.amount, 0);
  return pi.amount_received - refunded;
}

const money = (amount: number, currency: string) =>
  `${currency === 'usd' ? '$' : ''}${(amount / 100).toFixed(2)}${currency === 'usd' ? '' : ` ${currency.toUpperCase()}`}`;

export const refundRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/refunds',
    paramsType: 'RefundCreateParams',
    fields: {
      amount: s.int({ min: 1 }),
      charge: s.str(),
      payment_intent: s.str(),
      reason: s.enum(['duplicate', 'fraudulent', 'requested_by_customer']),
      metadata: s.meta(),
    },
    handler: (ctx, p) => {
      const { acct } = ctx;
      if (p.charge !== undefined && p.payment_intent !== undefined) {
        throw invalidRequest('You may only specify one of these parameters: charge, payment_intent.', { param: 'charge', beforeExecution: true });
      }
      if (p.charge !== undefined) {
        // No Charge objects here: every charge id is unknown.
        throw invalidRequest(`No such charge: '${p.charge}'`, { param: 'charge', code: 'resource_missing', status: 404 });
      }
      if (p.payment_intent === undefined) {
        throw invalidRequest('One of the following params should be provided for this request: payment_intent or charge.', { beforeExecution: true });
      }
      const pi = acct.find<Stripe.PaymentIntent>('payment_intent', p.payment_intent, 'payment_intent', 'payment_intent');
      if (pi.status !== 'succeeded') {
        throw invalidRequest(`This PaymentIntent (${pi.id}) does not have a successful charge to refund.`, {
          param: 'payment_intent',
          code: 'charge_not_refundable',
        });
      }
      const left = refundableOf(acct, pi);
      if (left <= 0) throw invalidRequest(`Charge for PaymentIntent ${pi.id} has already been refunded.`, { code: 'charge_already_refunded' });
      const amount: number = p.amount ?? left;
      if (amount > left) {
        throw invalidRequest(`Refund amount (${money(amount, pi.currency)}) is greater than unrefunded amount on charge (${money(left, pi.currency)})`, {
          param: 'amount',
          code: 'amount_too_large',
        });
      }
      const refund: Stripe.Refund = {
        id: newId('re'),
        object: 'refund',
        amount,
        balance_transaction: null,
        charge: pi.latest_charge,
        created: acct.now,
        currency: pi.currency,
        metadata: applyMetadata({}, p.metadata),
        payment_intent: pi.id,
        reason: p.reason ?? null,
        receipt_number: null,
        source_transfer_reversal: null,
        status: 'succeeded',
        transfer_reversal: null,
      };
      const stored = refund as unknown as StripeObject;
      acct.put(stored);
      acct.emit('refund.created', stored);
      return stored;
    },
  },
  {
    method: 'GET',
    path: '/v1/refunds/:id',
    paramsType: 'RefundRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => ctx.acct.find('refund', path.id!, 'refund'),
  },
  {
    method: 'GET',
    path: '/v1/refunds',
    paramsType: 'RefundListParams',
    fields: { ...listFields, charge: s.str(), payment_intent: s.str(), created: createdFilter },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Stripe.Refund>(
          'refund',
          (r) => (!p.payment_intent || r.payment_intent === p.payment_intent) && (!p.charge || r.charge === p.charge) && matchesCreated(r.created, p.created),
        ),
        p,
        '/v1/refunds',
      ) as unknown as ReturnType<Route['handler']>,
  },
];
