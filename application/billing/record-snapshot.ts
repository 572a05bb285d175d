import { seatSnapshotOf } from '../../domain/billing/catalog';
import { type InvoiceState, billingEventsOf } from '../../domain/billing/sync';
import { type BillingSubject, organizationIdOf, organizationSubject, userIdOf, userSubject } from '../../domain/billing/subject';
import { isUuid } from '../../domain/ids';
import { ORGANIZATION_SEATS_TOPIC } from '../organizations/seats';
import type { BillingEvent, BillingInvoice, BillingSubscription } from './billing.store';
import type { BillingDeps } from './deps';
import { catalogNames, invoiceView, subscriptionView, toJson } from './views';
import type { ProcessorInvoice, ProcessorKind, ProcessorMetadata, ProcessorSnapshot } from './payment-processor';

export type RecordSnapshotDeps = Pick<
  BillingDeps,
  'uow' | 'subscriptions' | 'invoices' | 'catalog' | 'customers' | 'events' | 'outbox' | 'clock' | 'crypto' | 'logger'
>;

export interface RecordInput {
  projectId: string;
  processor: ProcessorKind;
  snapshot: ProcessorSnapshot;
  /** The subject (user or organization), when the caller knows it; otherwise from the customer record or the metadata. */
  subject?: BillingSubject;
  /** Tollgate's id for a subscription it is creating (also in the processor's metadata). */
  subscriptionId?: string;
  /**
   * A duplicate Tollgate canceled (duplicate-subscription.ts): recorded with its invoice events
   * only, since it was never the subject's subscription.
   */
  duplicate?: boolean;
}

export type RecordOutcome =
  | { ok: true; subscription: BillingSubscription; events: BillingEvent[] }
  | { ok: false; reason: 'unknown_owner' | 'unknown_price' | 'live_conflict' };

/**
 * Brings Tollgate's record of one subscription in step with what its processor reports, and
 * records the project events the difference causes (domain/billing/sync.ts), all in one
 * transaction. Every path that learns something from a processor ends here: the answer to a
 * subscribe, change, cancel, pause or resume; a Stripe webhook (after re-reading the object); a
 * sandbox renewal; a completed checkout. The record is locked while it is compared and written, so
 * two paths reporting the same change record its events once.
 */
export function makeRecordSnapshot(deps: RecordSnapshotDeps) {
  return async function recordSnapshot(input: RecordInput): Promise<RecordOutcome> {
    const { projectId, processor, snapshot } = input;
    const ps = snapshot.subscription;
    const prices = await deps.catalog.listPrices(projectId);
    const byProcessorId = new Map(prices.filter((p) => p.processorPriceId !== null).map((p) => [p.processorPriceId!, p]));

    return deps.uow.transaction(async (): Promise<RecordOutcome> => {
      const before = await deps.subscriptions.findByProcessorIdForUpdate(processor, ps.id);
      if (before !== null && before.projectId !== projectId) return { ok: false, reason: 'unknown_owner' };

      const subject = before?.subject ?? input.subject ?? (await ownerOf(deps, projectId, processor, ps.customerId, ps.metadata));
      if (subject === null) return { ok: false, reason: 'unknown_owner' };

      const price = byProcessorId.get(ps.priceId) ?? (ps.metadata.priceId ? prices.find((p) => p.id === ps.metadata.priceId) : undefined);
      // A per-seat price's snapshot holds the amount for the item's quantity.
      const priceSnapshot = price ? seatSnapshotOf(price, ps.quantity) : before?.price;
      if (!priceSnapshot) return { ok: false, reason: 'unknown_price' };

      const now = deps.clock.now();
      const id = before?.id ?? (await freshId(deps, projectId, ps.id, pickId(input.subscriptionId, ps.metadata.subscriptionId)));
      const after: BillingSubscription = {
        id,
        projectId,
        subject,
        processor,
        processorSubscriptionId: ps.id,
        customerId: ps.customerId,
        status: ps.status,
        price: priceSnapshot,
        currentPeriodStart: ps.currentPeriodStart,
        currentPeriodEnd: ps.currentPeriodEnd,
        billingCycleAnchor: ps.billingCycleAnchor,
        cancelAtPeriodEnd: ps.cancelAtPeriodEnd,
        canceledAt: ps.canceledAt,
        endedAt: ps.endedAt,
        trialStart: ps.trialStart,
        trialEnd: ps.trialEnd,
        pausedAt: ps.pausedAt,
        // The processor may not say when the delinquency began (Stripe does not): keep the first
        // failure Tollgate saw, or take now.
        pastDueAt: ps.status === 'past_due' ? (ps.pastDueAt ?? before?.pastDueAt ?? now) : null,
        paymentMethod: ps.paymentMethod ?? before?.paymentMethod ?? null,
        createdAt: before?.createdAt ?? ps.createdAt,
        updatedAt: now,
      };

      const saved = await deps.subscriptions.save(after);
      if (saved === 'live_conflict') return { ok: false, reason: 'live_conflict' };
      // One trial per subject and project, however the trialing subscription came to be: subscribe,
      // a Stripe Checkout reported by webhook, the sandbox's checkout page, Stripe's dashboard.
      if (after.trialStart !== null && (before === null || before.trialStart === null)) {
        await deps.customers.markTrialUsed(projectId, subject, processor);
      }

      const known = await deps.invoices.findByProcessorIds(
        processor,
        snapshot.invoices.map((i) => i.id),
      );
      const knownById = new Map(known.map((i) => [i.processorInvoiceId, i]));
      const invoicesBefore = new Map<string, InvoiceState>(
        known.map((i) => [i.processorInvoiceId, { id: i.processorInvoiceId, status: i.status, subtotal: i.subtotal, attemptCount: i.attemptCount }]),
      );
      const recorded = new Map<string, BillingInvoice>();
      for (const pi of snapshot.invoices) {
        const invoice = toInvoice(pi, knownById.get(pi.id) ?? null, deps.crypto.uuid(), after, byProcessorId, now);
        await deps.invoices.save(invoice);
        recorded.set(pi.id, invoice);
      }

      const derived = billingEventsOf({
        before,
        after,
        invoicesBefore,
        invoicesAfter: snapshot.invoices.map((i) => ({ id: i.id, status: i.status, subtotal: i.subtotal, attemptCount: i.attemptCount })),
      }).filter((d) => !input.duplicate || d.invoiceId !== null);
      const names = derived.length > 0 ? await catalogNames(deps.catalog, projectId) : null;
      const events: BillingEvent[] = [];
      for (const d of derived) {
        const invoice = d.invoiceId ? (recorded.get(d.invoiceId) ?? null) : null;
        const event = buildEvent(deps, {
          projectId,
          type: d.type,
          subject,
          subscriptionId: id,
          quantity: after.price.quantity ?? 1,
          dedupeKey: d.dedupeKey,
          amount: invoice ? (d.type === 'invoice.paid' ? invoice.amountPaid : invoice.amountDue) : null,
          currency: invoice?.currency ?? null,
          data: invoice ? toJson(invoiceView(invoice)) : toJson(subscriptionView(after, names!)),
        });
        if (await deps.events.publish(event)) events.push(event);
      }
      // Seats stay as they are while a payment is retried or the subscription is paused: once it is
      // active again, the organization's seats are brought in step with its members.
      if (subject.kind === 'organization' && after.price.quantity !== undefined && before !== null && after.status === 'active') {
        if (before.status === 'past_due' || before.status === 'paused') {
          await deps.outbox.enqueue(ORGANIZATION_SEATS_TOPIC, { projectId, organizationId: subject.id });
        }
      }
      return { ok: true, subscription: after, events };
    });
  };
}

const pickId = (...ids: Array<string | undefined>): string | undefined => ids.find((id) => id !== undefined && isUuid(id));

/**
 * The id of a subscription Tollgate records for the first time: the one its request chose (also in
 * the processor's metadata), unless a record of another processor subscription already has it (an
 * Idempotency-Key used again once the processor had forgotten it, metadata copied by hand): then a
 * new one, so no record is ever overwritten by another subscription.
 */
async function freshId(
  deps: Pick<RecordSnapshotDeps, 'subscriptions' | 'crypto'>,
  projectId: string,
  processorSubscriptionId: string,
  chosen: string | undefined,
): Promise<string> {
  if (chosen === undefined) return deps.crypto.uuid();
  const taken = await deps.subscriptions.findById(projectId, chosen);
  return taken === null || taken.processorSubscriptionId === processorSubscriptionId ? chosen : deps.crypto.uuid();
}

/** Whose a processor subscription is: its customer's subject, else the user or organization its metadata names. */
export async function ownerOf(
  deps: Pick<RecordSnapshotDeps, 'customers'>,
  projectId: string,
  processor: ProcessorKind,
  customerId: string,
  metadata: Partial<Pick<ProcessorMetadata, 'userId' | 'organizationId'>>,
): Promise<BillingSubject | null> {
  const customer = await deps.customers.findByProcessorId(processor, customerId);
  if (customer !== null && customer.projectId === projectId) return customer.subject;
  if (metadata.userId !== undefined && isUuid(metadata.userId)) return userSubject(metadata.userId);
  if (metadata.organizationId !== undefined && isUuid(metadata.organizationId)) return organizationSubject(metadata.organizationId);
  return null;
}

function toInvoice(
  pi: ProcessorInvoice,
  known: BillingInvoice | null,
  freshId: string,
  subscription: BillingSubscription,
  prices: ReadonlyMap<string, { id: string }>,
  now: Date,
): BillingInvoice {
  const { id: processorInvoiceId, subscriptionId: _processorSubscription, customerId: _customer, ...invoice } = pi;
  return {
    ...invoice,
    id: known?.id ?? freshId,
    // Refunds are Tollgate's own record (it made them): the processor's copy does not carry them.
    amountRefunded: known?.amountRefunded ?? 0,
    refundedAt: known?.refundedAt ?? null,
    projectId: subscription.projectId,
    subject: subscription.subject,
    subscriptionId: subscription.id,
    processor: subscription.processor,
    processorInvoiceId,
    // Lines name Tollgate's price ids.
    lines: pi.lines.map((l) => ({ ...l, priceId: l.priceId === null ? null : (prices.get(l.priceId)?.id ?? null) })),
    updatedAt: now,
  };
}

/**
 * A project event: the spec's fields (type, subscriptionId, amount, currency) plus id, created, and
 * whose it is (userId for a user's subscription, organizationId for an organization's; the other
 * null) and the object.
 */
export function buildEvent(
  deps: Pick<BillingDeps, 'clock' | 'crypto'>,
  e: {
    projectId: string;
    type: BillingEvent['type'];
    subject: BillingSubject | null;
    subscriptionId: string | null;
    /** The seats the subscription is billed for (1 on a flat price); absent on events of no subscription. */
    quantity?: number;
    dedupeKey: string | null;
    amount: number | null;
    currency: string | null;
    data: Record<string, unknown> | null;
  },
): BillingEvent {
  const id = deps.crypto.uuid();
  const createdAt = deps.clock.now();
  const userId = e.subject === null ? null : userIdOf(e.subject);
  const organizationId = e.subject === null ? null : organizationIdOf(e.subject);
  const payload: Record<string, unknown> = {
    id,
    type: e.type,
    created: createdAt.toISOString(),
    projectId: e.projectId,
    organizationId,
    userId,
    subscriptionId: e.subscriptionId,
  };
  if (e.quantity !== undefined) payload.quantity = e.quantity;
  if (e.amount !== null) payload.amount = e.amount;
  if (e.currency !== null) payload.currency = e.currency;
  payload.data = e.data;
  return { id, projectId: e.projectId, type: e.type, userId, organizationId, subscriptionId: e.subscriptionId, dedupeKey: e.dedupeKey, payload, createdAt };
}
