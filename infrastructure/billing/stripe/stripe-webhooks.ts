import Stripe from 'stripe';
import type { ProcessorEvent, ProcessorEventSubject } from '../../../application/billing/payment-processor';
import type { InboundHeaders, InboundWebhooks, WebhookHints } from '../../../application/billing/processors';
import { err, ok, type Result } from '../../../domain/result';
import { METADATA_KEYS } from './stripe-mapping';

/** Stripe's default and recommended tolerance for a signature's timestamp: 5 minutes. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Events about a customer's payments and cards: Tollgate re-reads the customer's subscriptions. */
const CUSTOMER_EVENTS: ReadonlySet<string> = new Set([
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_method.updated',
  'payment_method.automatically_updated',
  'payment_method.attached',
]);

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
/** An id field, or the id of an object expanded in its place. */
const idIn = (value: unknown): string | null => str(value) ?? (isObject(value) ? str(value.id) : null);

/** The object an event is about (`data.object`), or null. */
function objectOf(event: Json): Json | null {
  return isObject(event.data) && isObject(event.data.object) ? event.data.object : null;
}

/**
 * The project an object names: its own metadata (subscriptions, customers, Checkout Sessions), or
 * for an invoice the metadata of its subscription as Stripe copies it
 * (basil: `parent.subscription_details.metadata`).
 */
function projectIdOf(object: Json): string | null {
  const own = isObject(object.metadata) ? str(object.metadata[METADATA_KEYS.projectId]) : null;
  if (own) return own;
  const details = isObject(object.parent) && isObject(object.parent.subscription_details) ? object.parent.subscription_details : null;
  return details && isObject(details.metadata) ? str(details.metadata[METADATA_KEYS.projectId]) : null;
}

function customerIdOf(object: Json): string | null {
  if (object.object === 'customer') return str(object.id);
  return idIn(object.customer);
}

function invoiceSubscriptionOf(invoice: Json): string | null {
  const details = isObject(invoice.parent) && isObject(invoice.parent.subscription_details) ? invoice.parent.subscription_details : null;
  return details ? idIn(details.subscription) : null;
}

/** What an event asks Tollgate to do; its copy of the object is never trusted beyond the ids. */
export function subjectOf(type: string, object: Json | null): ProcessorEventSubject {
  if (object === null) return { kind: 'ignored' };
  if (type.startsWith('customer.subscription.')) {
    const subscriptionId = str(object.id);
    return subscriptionId ? { kind: 'subscription', subscriptionId } : { kind: 'ignored' };
  }
  if (type.startsWith('invoice.')) {
    const subscriptionId = invoiceSubscriptionOf(object);
    return subscriptionId ? { kind: 'subscription', subscriptionId } : { kind: 'ignored' };
  }
  if (type === 'checkout.session.completed') {
    const checkoutId = str(object.id);
    if (!checkoutId) return { kind: 'ignored' };
    return { kind: 'checkout_completed', checkoutId, subscriptionId: idIn(object.subscription), customerId: idIn(object.customer) };
  }
  if (CUSTOMER_EVENTS.has(type)) {
    const customerId = idIn(object.customer);
    return customerId ? { kind: 'customer', customerId } : { kind: 'ignored' };
  }
  return { kind: 'ignored' };
}

/** The body's bytes as a Buffer (no copy), as stripe-node's signature check takes them. */
const bufferOf = (rawBody: Uint8Array): Buffer => (Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength));

/**
 * Stripe's webhooks (https://docs.stripe.com/webhooks): the signature travels in the
 * `Stripe-Signature` header; `hints` takes an untrusted look to find the project whose signing
 * secret to check with; `verify` checks the signature with stripe-node's own helper (HMAC-SHA256
 * over `timestamp.payload`, 5-minute tolerance measured against Tollgate's clock) and only then
 * reads the event.
 */
export class StripeWebhooks implements InboundWebhooks {
  readonly processor = 'stripe' as const;

  /** `Stripe-Signature` as sent (one value), or undefined. */
  signature(headers: InboundHeaders): string | undefined {
    const header = headers['stripe-signature'];
    return typeof header === 'string' ? header : undefined;
  }

  hints(rawBody: Uint8Array): WebhookHints | null {
    let event: unknown;
    try {
      event = JSON.parse(bufferOf(rawBody).toString('utf8'));
    } catch {
      return null;
    }
    if (!isObject(event) || typeof event.type !== 'string') return null;
    const object = objectOf(event);
    if (object === null) return null;
    return { projectId: projectIdOf(object), customerId: customerIdOf(object), eventId: str(event.id) };
  }

  verify(rawBody: Uint8Array, signatureHeader: string | undefined, secret: string, now: Date): Result<ProcessorEvent, 'invalid_signature'> {
    if (!signatureHeader || !secret) return err('invalid_signature');
    let event: unknown;
    try {
      event = Stripe.webhooks.constructEvent(bufferOf(rawBody), signatureHeader, secret, SIGNATURE_TOLERANCE_SECONDS, undefined, now.getTime());
    } catch {
      // A bad or missing signature, a stale timestamp, or a signed body that is not JSON.
      return err('invalid_signature');
    }
    if (!isObject(event) || typeof event.id !== 'string' || typeof event.type !== 'string') return err('invalid_signature');
    const object = objectOf(event);
    const created = typeof event.created === 'number' ? new Date(event.created * 1000) : now;
    return ok({
      id: event.id,
      type: event.type,
      createdAt: created,
      projectId: object ? projectIdOf(object) : null,
      subject: subjectOf(event.type, object),
    });
  }
}
