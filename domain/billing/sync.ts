import type { BillingEventType } from './events';
import type { InvoiceStatus } from './invoice';
import { type Subscription, type SubscriptionStatus, subscriptionState } from './subscription';

/**
 * Which project events a change of billing state causes, derived from the state before and after.
 *
 * Tollgate keeps its own record of each subscription and its invoices, and brings it in step with
 * the processor whenever it learns something: the answer to its own API call, a Stripe webhook, a
 * sandbox renewal. Whatever the path, the events are the difference between the record and what
 * the processor now reports, so a duplicate webhook, a webhook that arrives after the API answer
 * it repeats, or a stale one re-read from the processor causes nothing new. Every event that can be
 * derived twice carries a dedupe key that the events table holds once per project.
 *
 * - `subscription.created`: the subscription started (trialing, active, ... but not incomplete,
 *   whose first payment never came).
 * - `invoice.paid`: an invoice with a positive subtotal became paid (a $0 invoice is no payment).
 * - `payment.failed`: an unpaid invoice has a new failed attempt (its attempt count grew).
 * - `subscription.updated`: the shown state (status, or pending cancellation), the price or the
 *   quantity (seats) changed, on a subscription that was already started and is not ending now. A renewal alone is not one.
 * - `subscription.canceled`: it ended (canceled), having started.
 * Order: creation; an update that changed the price (it causes the proration invoice); invoice
 * events in invoice order; then any other update (a payment's status change) or the cancellation.
 */
export interface InvoiceState {
  readonly id: string;
  readonly status: InvoiceStatus;
  readonly subtotal: number;
  readonly attemptCount: number;
}

export interface DerivedEvent {
  readonly type: BillingEventType;
  /** Unique per project in the events table; null for events that cannot be derived twice. */
  readonly dedupeKey: string | null;
  /** The invoice the event is about (invoice.paid, payment.failed). */
  readonly invoiceId: string | null;
}

const NOT_STARTED: readonly SubscriptionStatus[] = ['incomplete', 'incomplete_expired'];
const started = (s: Pick<Subscription, 'status'> | null): boolean => s !== null && !NOT_STARTED.includes(s.status);

export type SubscriptionFacts = Pick<Subscription, 'id' | 'status' | 'cancelAtPeriodEnd' | 'price' | 'canceledAt' | 'createdAt'>;

export function billingEventsOf(change: {
  before: SubscriptionFacts | null;
  after: SubscriptionFacts;
  invoicesBefore: ReadonlyMap<string, InvoiceState>;
  /** The invoices now reported, oldest first. */
  invoicesAfter: readonly InvoiceState[];
}): DerivedEvent[] {
  const { before, after } = change;
  const subId = after.id;
  const wasStarted = started(before);
  const createdNow = !wasStarted && !NOT_STARTED.includes(after.status);
  const head: DerivedEvent[] = [];
  const tail: DerivedEvent[] = [];
  if (createdNow) head.push({ type: 'subscription.created', dedupeKey: `subscription.created:${subId}`, invoiceId: null });

  const endedNow = after.status === 'canceled' && before?.status !== 'canceled';
  if (endedNow && (wasStarted || createdNow)) {
    tail.push({ type: 'subscription.canceled', dedupeKey: `subscription.canceled:${subId}`, invoiceId: null });
  } else if (wasStarted && before !== null && after.status !== 'canceled') {
    const priceChanged = before.price.id !== after.price.id || (before.price.quantity ?? 1) !== (after.price.quantity ?? 1);
    if (priceChanged || subscriptionState(before) !== subscriptionState(after)) {
      // A plan change causes its proration invoice: the update comes first. A payment that
      // changes the status (a recovery from past due) comes before the update it causes.
      (priceChanged ? head : tail).push({ type: 'subscription.updated', dedupeKey: null, invoiceId: null });
    }
  }

  const invoices: DerivedEvent[] = [];
  for (const invoice of change.invoicesAfter) {
    const prior = change.invoicesBefore.get(invoice.id);
    if (invoice.status === 'paid' && invoice.subtotal > 0 && prior?.status !== 'paid') {
      invoices.push({ type: 'invoice.paid', dedupeKey: `invoice.paid:${invoice.id}`, invoiceId: invoice.id });
    } else if (invoice.status !== 'paid' && invoice.attemptCount > (prior?.attemptCount ?? 0)) {
      invoices.push({ type: 'payment.failed', dedupeKey: `payment.failed:${invoice.id}:${invoice.attemptCount}`, invoiceId: invoice.id });
    }
  }
  const events = [...head, ...invoices, ...tail];
  return events;
}
