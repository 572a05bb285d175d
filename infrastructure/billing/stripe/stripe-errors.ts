import Stripe from 'stripe';
import type { ProcessorFailure, RequestFailure } from '../../../application/billing/payment-processor';

/**
 * Stripe's errors (https://docs.stripe.com/api/errors, stripe-node's `Stripe.errors.*`) as the
 * port's failures. Stripe's own message travels with each, so a use case can show why Stripe
 * refused (a decline's reason, an unknown price, a revoked key).
 *
 * - `card_error` (402): `card_declined`, with Stripe's `decline_code` (`insufficient_funds`, ...) or,
 *   without one, its error `code` (`expired_card`, `incorrect_cvc`, ...).
 * - `invalid_request_error` about a payment method (`resource_missing` "No such PaymentMethod", a
 *   card attached to another customer, a default that is not attached): `invalid_payment_method`.
 * - other `invalid_request_error` and `idempotency_error`: `invalid_request`.
 * - `authentication_error` (401) and a restricted key's permission error (403): `authentication`.
 * - connection failures and timeouts, `api_error` (5xx) and rate limits (429), which stripe-node has
 *   already retried: `unavailable`.
 */
export function failureOf(error: unknown): ProcessorFailure {
  if (error instanceof Stripe.errors.StripeError) return stripeFailure(error);
  if (error instanceof StripeShapeError) return { kind: 'unavailable', message: error.message };
  if (error instanceof RefusedBeforeStripe) return error.failure;
  // stripe-node refusing arguments before sending anything (`Stripe: Argument "id" must be a string`).
  if (error instanceof Error && error.message.startsWith('Stripe: ')) return { kind: 'invalid_request', message: error.message };
  // Not Stripe's: a fault while talking to it (or reading its answer). The port promises no throw.
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'unavailable', message: `Stripe request failed: ${message}` };
}

/**
 * The failure of a call that attaches and charges no card (a product, a customer, a cancellation).
 * Stripe answers card errors only where a card is attached or charged; should it answer one
 * anywhere else, Stripe refused the request.
 */
export function requestFailure(failure: ProcessorFailure): RequestFailure {
  return failure.kind === 'card_declined' || failure.kind === 'invalid_payment_method' ? { kind: 'invalid_request', message: failure.message } : failure;
}

/** Stripe answered something Tollgate cannot read (a subscription without items, ...). */
export class StripeShapeError extends Error {
  constructor(message: string) {
    super(`Unexpected answer from Stripe: ${message}`);
    this.name = 'StripeShapeError';
  }
}

/** A failure decided without (or after) asking Stripe: an empty id, a payment method Stripe would not attach. */
export class RefusedBeforeStripe extends Error {
  constructor(readonly failure: ProcessorFailure) {
    super(failure.message);
    this.name = 'RefusedBeforeStripe';
  }
}

/**
 * An id to put in a path. An empty one would change the route (`GET /v1/subscriptions/` lists
 * subscriptions), so it is refused before anything is sent.
 */
export function requireId(id: string, what: string, kind: 'invalid_request' | 'invalid_payment_method' = 'invalid_request'): string {
  if (typeof id !== 'string' || id.trim() === '') throw new RefusedBeforeStripe({ kind, message: `Missing ${what} id` });
  return id;
}

/**
 * What attaching a payment method refused: a decline stays a decline and an outage an outage, but
 * whatever Stripe found invalid about the call (an unknown card, one attached to another customer)
 * is about the payment method, unless it names the customer.
 */
export function attachFailure(error: unknown): unknown {
  if (error instanceof Stripe.errors.StripeInvalidRequestError && error.param !== 'customer') {
    return new RefusedBeforeStripe({ kind: 'invalid_payment_method', message: error.message });
  }
  return error;
}

/** `payment_method`, `default_payment_method`, `invoice_settings[default_payment_method]` (not `payment_method_types`). */
const PAYMENT_METHOD_PARAM = /(^|\[|_)payment_method(\]|$)/;

function stripeFailure(error: Stripe.errors.StripeError): ProcessorFailure {
  const message = error.message || 'Stripe refused the request';
  if (error instanceof Stripe.errors.StripeCardError || error.rawType === 'card_error') {
    return { kind: 'card_declined', message, declineCode: error.decline_code ?? error.code ?? null };
  }
  if (error instanceof Stripe.errors.StripeAuthenticationError || error instanceof Stripe.errors.StripePermissionError) {
    return { kind: 'authentication', message };
  }
  if (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError
  ) {
    return { kind: 'unavailable', message };
  }
  if (error instanceof Stripe.errors.StripeInvalidRequestError) {
    const param = error.param ?? '';
    const aboutPaymentMethod = PAYMENT_METHOD_PARAM.test(param) || (error.code === 'resource_missing' && /paymentmethod|payment method/i.test(message));
    return aboutPaymentMethod ? { kind: 'invalid_payment_method', message } : { kind: 'invalid_request', message };
  }
  if (error instanceof Stripe.errors.StripeIdempotencyError) return { kind: 'invalid_request', message };
  // Anything else Stripe may add: by its HTTP status.
  const status = error.statusCode ?? 0;
  if (status === 401 || status === 403) return { kind: 'authentication', message };
  if (status >= 400 && status < 500 && status !== 429) return { kind: 'invalid_request', message };
  return { kind: 'unavailable', message };
}

/** Stripe's "No such subscription: 'sub_x'" and other unknown ids. */
export const isResourceMissing = (error: unknown): boolean => error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing';
