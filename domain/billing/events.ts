/**
 * The project events billing causes (spec, Events): each state change of a subscription names the
 * events it records, in the order the processor would report them, in the same transaction as the
 * change. Payload fields stated by the spec: type, subscriptionId, amount and currency (invoice.paid).
 */
export const BILLING_EVENT_TYPES = [
  'subscription.created',
  'subscription.updated',
  'subscription.canceled',
  'invoice.paid',
  'payment.failed',
  'invoice.refunded',
] as const;

export type BillingEventType = (typeof BILLING_EVENT_TYPES)[number];

export const isBillingEventType = (value: string): value is BillingEventType => (BILLING_EVENT_TYPES as readonly string[]).includes(value);
