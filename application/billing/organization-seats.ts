import { type Price, seatSnapshotOf } from '../../domain/billing/catalog';
import { previewPriceChange } from '../../domain/billing/proration';
import { DEFAULT_SEAT_POLICY, type QuantityError, type SeatPolicy, type SeatPricing } from '../../domain/billing/seat-terms';
import { automaticQuantity, checkQuantity, seatCapacity, seatSteps, seatsInUse } from '../../domain/billing/seats';
import { type BillingSubject, organizationSubject } from '../../domain/billing/subject';
import { currentPeriod } from '../../domain/billing/subscription';
import { type Result, err, ok } from '../../domain/result';
import type { SeatCapacity } from '../organizations/seats';
import { underSubjectLock, withSubjectLock } from './billing-lease';
import { payerOf, type SubjectError } from './billing-subject';
import type { BillingSubscription, StoredPlan, StoredPrice } from './billing.store';
import { OTHER_PROCESSOR } from './change-subscription';
import { type ConnectedError, connectedProcessor } from './connected-processor';
import type { BillingDeps } from './deps';
import { type FailureCode, refuseFailure } from './errors';
import type { PaymentProcessor } from './payment-processor';
import { makeRecordSnapshot } from './record-snapshot';
import type { BillingActor } from './requests';
import { catalogNames, type ChangePreviewView, invoiceLineView, subscriptionView, type SubscriptionView } from './views';

/**
 * Seats (docs/billing.md, "Seats"): an organization's subscription on a per-seat price is billed for
 * a quantity of seats. On a plan whose seats are automatic the quantity follows the seats in use
 * (members, and pending invitations when the plan counts them), moved by the ORGANIZATION_SEATS_TOPIC
 * handler after every change of members or invitations; on a plan whose seats are bought an admin
 * sets it (POST billing/subscription/seats), and members plus pending invitations are held within it
 * (`seats_exhausted`, application/organizations/seats.ts).
 *
 * A quantity moves as domain/billing/seats.ts `seatSteps` says: added seats are charged now,
 * prorated, except those already paid for in the period (a seat freed and taken again within a
 * period is paid once); a freed seat is billed no more from the next renewal (or credited at once,
 * when the plan says so). The seats paid for in the period and a change counter are kept beside the
 * subscription (`SeatLedger`); the counter names the processor's idempotency keys, so a retried
 * change is the same change there and is never charged twice. Every change runs under the subject's
 * billing lease, so concurrent changes (20 invitations accepted at once) apply one after the other,
 * each from the quantity the previous one left.
 */

type SeatsDeps = BillingDeps;

/** A per-seat subscription's terms: its price, the price's seat terms and its plan's seat policy. */
interface SeatTerms {
  price: StoredPrice;
  pricing: SeatPricing;
  policy: SeatPolicy;
}

async function termsOf(deps: Pick<SeatsDeps, 'catalog'>, subscription: BillingSubscription): Promise<SeatTerms | null> {
  if (subscription.price.quantity === undefined) return null;
  const price = await deps.catalog.getPrice(subscription.projectId, subscription.price.id);
  if (price === null || price.seats === null) return null;
  const plan = await deps.catalog.getPlan(subscription.projectId, price.planId);
  return { price, pricing: price.seats, policy: plan?.seatPolicy ?? DEFAULT_SEAT_POLICY };
}

/**
 * The seats an organization holds: members, and pending invitations when automatic seats count
 * them; bought seats always count pending invitations (an invitation holds its seat until it is
 * accepted, declined, revoked or expires).
 */
async function seatsHeld(deps: Pick<SeatsDeps, 'organizations' | 'clock'>, organizationId: string, policy: SeatPolicy): Promise<number> {
  return seatsHeldOf(policy, await deps.organizations.store.countSeats(organizationId, deps.clock.now()));
}

/** The seats held, of the members and pending invitations counted (GET billing/entitlements reads them with the subscription). */
export const seatsHeldOf = (policy: SeatPolicy, counts: { members: number; pendingInvitations: number }): number =>
  policy.mode === 'bought' ? counts.members + counts.pendingInvitations : seatsInUse(policy, counts);

/** What an organization's subscription lets it hold (application/organizations/seats.ts). */
export function makeSeatCapacity(deps: Pick<SeatsDeps, 'subscriptions' | 'catalog'>): SeatCapacity {
  return {
    async capacity(projectId, organizationId) {
      const live = await deps.subscriptions.findLive(projectId, organizationSubject(organizationId));
      if (live === null) return null;
      const terms = await termsOf(deps, live);
      return terms === null ? null : seatCapacity(terms.policy, terms.pricing, live.price.quantity ?? 1);
    },
  };
}

/** What moving seats at the processor can answer besides the subscription. */
type MoveError = FailureCode | 'processor_rejected';

/**
 * Moves the subscription's quantity to `target` at the processor, step by step (`seatSteps`), and
 * records the result and the seats paid for. Runs under the subject's lease.
 */
async function moveSeats(
  deps: SeatsDeps,
  processor: PaymentProcessor,
  subscription: BillingSubscription,
  target: number,
  removal: SeatPolicy['removal'],
): Promise<Result<BillingSubscription, MoveError>> {
  const recordSnapshot = makeRecordSnapshot(deps);
  const { projectId } = subscription;
  const ledger = await deps.subscriptions.seatLedger(projectId, subscription.id);
  const current = subscription.price.quantity ?? 1;
  const samePeriod = ledger.periodStart !== null && ledger.periodStart.getTime() === subscription.currentPeriodStart.getTime();
  const plan = seatSteps({ current, target, paid: samePeriod && ledger.paid !== null ? ledger.paid : current, removal });
  if (plan.steps.length === 0) return ok(subscription);
  let recorded = subscription;
  for (const step of plan.steps) {
    const key = `tollgate-seats-${subscription.id}-${ledger.changes}-${step.quantity}-${step.prorate ? 'p' : 'n'}`;
    const done = await processor.updateQuantity(subscription.processorSubscriptionId, step.quantity, { prorate: step.prorate, idempotencyKey: key });
    if (!done.ok) return refuseFailure(done.failure);
    const saved = await recordSnapshot({ projectId, processor: processor.kind, snapshot: done.value });
    if (!saved.ok) return err('processor_rejected', `The seats could not be recorded (${saved.reason})`);
    recorded = saved.subscription;
  }
  await deps.subscriptions.saveSeatLedger(projectId, subscription.id, {
    paid: plan.paid,
    periodStart: recorded.currentPeriodStart,
    changes: ledger.changes + 1,
  });
  return ok(recorded);
}

/**
 * Tollgate's record read again from the processor first: a change that reached the processor but
 * was not recorded (the process died between the two) is taken into account before the next one.
 */
async function refreshed(deps: SeatsDeps, processor: PaymentProcessor, subscription: BillingSubscription): Promise<BillingSubscription> {
  const current = await processor.getSubscription(subscription.processorSubscriptionId);
  if (!current.ok || current.value === null) return subscription;
  const saved = await makeRecordSnapshot(deps)({ projectId: subscription.projectId, processor: processor.kind, snapshot: current.value });
  return saved.ok ? saved.subscription : subscription;
}

/**
 * The ORGANIZATION_SEATS_TOPIC handler: an automatic per-seat subscription's quantity brought to the
 * seats in use. Nothing moves while the subscription is paused or past due (seats stay as they are
 * while a payment is retried; members keep their access); the next change after it recovers moves
 * them. Throws (the job is retried) when the lease stays taken or the processor does not answer; a
 * declined charge is logged and left: the members stay, and the next change tries again.
 */
export function makeSyncSeats(deps: SeatsDeps) {
  return async function syncSeats(projectId: string, organizationId: string): Promise<void> {
    const subject = organizationSubject(organizationId);
    const done = await underSubjectLock(deps, projectId, subject.id, async () => {
      const live = await deps.subscriptions.findLive(projectId, subject);
      if (live === null || live.status === 'paused' || live.status === 'past_due') return;
      const terms = await termsOf(deps, live);
      if (terms === null || terms.policy.mode !== 'automatic') return;
      const connected = await connectedProcessor(deps, projectId);
      if (!connected.ok || connected.value.processor.kind !== live.processor) return;
      const { processor } = connected.value;
      const subscription = await refreshed(deps, processor, live);
      const target = automaticQuantity(terms.pricing, await seatsHeld(deps, organizationId, terms.policy));
      const moved = await moveSeats(deps, processor, subscription, target, terms.policy.removal);
      if (moved.ok) return;
      if (moved.error === 'processor_unavailable') throw new Error(`billing: the seats of ${organizationId} could not reach the processor; retried`);
      deps.logger.warn({ projectId, organizationId, code: moved.error }, 'billing: the seats could not follow the members');
    });
    if (done === null) throw new Error(`billing: the billing lease of ${organizationId} stayed taken; retried`);
  };
}

/** What buying seats can answer besides the subscription. */
export type SeatsError =
  | 'subscription_not_found'
  | 'subscription_busy'
  | 'not_per_seat'
  | 'seats_managed_automatically'
  | 'same_quantity'
  | 'quantity_below_seats_in_use'
  | QuantityError
  | 'subscription_paused'
  | 'subscription_past_due'
  | ConnectedError
  | MoveError;

/** The checks of a quantity an admin asks for, on the subject's live subscription. */
async function checkSeats(
  deps: SeatsDeps,
  projectId: string,
  subject: BillingSubject,
  quantity: unknown,
): Promise<
  Result<
    { subscription: BillingSubscription; terms: SeatTerms; quantity: number; processor: PaymentProcessor },
    Exclude<SeatsError, 'subscription_busy' | MoveError>
  >
> {
  const subscription = await deps.subscriptions.findLive(projectId, subject);
  if (subscription === null) return err('subscription_not_found');
  const terms = subject.kind === 'organization' ? await termsOf(deps, subscription) : null;
  if (terms === null) return err('not_per_seat');
  if (terms.policy.mode === 'automatic') return err('seats_managed_automatically');
  const checked = checkQuantity(terms.price, quantity);
  if (!checked.ok) return checked;
  if (subscription.status === 'paused') return err('subscription_paused');
  if (subscription.status === 'past_due') return err('subscription_past_due');
  if (checked.value === subscription.price.quantity) return err('same_quantity');
  const held = await seatsHeld(deps, subject.id, terms.policy);
  if (checked.value < held) return err('quantity_below_seats_in_use', `${held} seats are held by members and pending invitations`);
  const connected = await connectedProcessor(deps, projectId);
  if (!connected.ok) return connected;
  if (connected.value.processor.kind !== subscription.processor) return err('billing_not_connected', OTHER_PROCESSOR);
  return ok({ subscription, terms, quantity: checked.value, processor: connected.value.processor });
}

/**
 * POST billing/subscription/seats (?for=organization, org:billing:manage) and the project server's
 * POST /api/v1/organizations/:orgId/billing/subscription/seats: the seats bought on a plan whose
 * seats are bought. More seats are charged now, prorated; fewer are released as the plan says.
 */
export function makeSetSeats(deps: SeatsDeps) {
  const forSubject = (projectId: string, subject: BillingSubject, quantity: unknown): Promise<Result<SubscriptionView, SeatsError>> =>
    withSubjectLock(deps, projectId, subject.id, async (): Promise<Result<SubscriptionView, SeatsError>> => {
      const checked = await checkSeats(deps, projectId, subject, quantity);
      if (!checked.ok) return checked;
      const { terms, processor } = checked.value;
      const subscription = await refreshed(deps, processor, checked.value.subscription);
      const moved = await moveSeats(deps, processor, subscription, checked.value.quantity, terms.policy.removal);
      if (!moved.ok) return moved;
      return ok(subscriptionView(moved.value, await catalogNames(deps.catalog, projectId)));
    });
  const forActor = async (actor: BillingActor, quantity: unknown): Promise<Result<SubscriptionView, SeatsError | SubjectError>> => {
    const payer = await payerOf(deps, actor, 'manage');
    if (!payer.ok) return payer;
    return forSubject(actor.project.id, payer.value.subject, quantity);
  };
  return Object.assign(forActor, { forSubject });
}

/**
 * POST billing/subscription/seats/preview: what setting that quantity would charge now. Seats
 * already paid for in the period cost nothing again; released seats credit only on a plan that
 * credits them at once.
 */
export function makePreviewSeats(deps: SeatsDeps) {
  return async function previewSeats(
    actor: BillingActor,
    quantity: unknown,
  ): Promise<Result<ChangePreviewView, Exclude<SeatsError, 'subscription_busy' | 'card_declined' | 'invalid_payment_method'> | SubjectError<'read'>>> {
    const payer = await payerOf(deps, actor, 'read');
    if (!payer.ok) return payer;
    const checked = await checkSeats(deps, actor.project.id, payer.value.subject, quantity);
    if (!checked.ok) return checked;
    const { subscription, terms, processor } = checked.value;
    const ledger = await deps.subscriptions.seatLedger(actor.project.id, subscription.id);
    const current = subscription.price.quantity ?? 1;
    const samePeriod = ledger.periodStart !== null && ledger.periodStart.getTime() === subscription.currentPeriodStart.getTime();
    const paid = samePeriod && ledger.paid !== null ? Math.max(ledger.paid, current) : current;
    const { steps } = seatSteps({ current, target: checked.value.quantity, paid, removal: terms.policy.removal });
    const prorated = steps.find((s) => s.prorate);
    const period = currentPeriod(subscription);
    const nothing: ChangePreviewView = {
      amountDue: 0,
      currency: subscription.price.currency,
      subtotal: 0,
      lines: [],
      periodStart: period.start,
      periodEnd: period.end,
    };
    if (prorated === undefined || subscription.status === 'trialing') return ok(nothing);
    if (steps.length === 1) {
      // One prorated step from the current quantity: the processor's own preview (with the customer's credit).
      const preview = await processor.previewQuantity(subscription.processorSubscriptionId, prorated.quantity);
      if (!preview.ok) return refuseFailure(preview.failure);
      const p = preview.value;
      return ok({
        amountDue: p.amountDue,
        currency: p.currency,
        subtotal: p.subtotal,
        lines: p.lines.map((l) => invoiceLineView({ ...l, priceId: terms.price.id })),
        periodStart: p.periodStart,
        periodEnd: p.periodEnd,
      });
    }
    // Back to the seats paid for without a charge, then the rest: prorated from the seats paid for.
    return ok(domainPreview(terms.price, subscription, steps[0]!.quantity, prorated.quantity, deps.clock.now()) ?? nothing);
  };
}

/** The proration from `from` to `to` seats as the domain computes it (the customer's credit not counted). */
function domainPreview(price: Price, subscription: BillingSubscription, from: number, to: number, at: Date): ChangePreviewView | null {
  const preview = previewPriceChange({
    period: currentPeriod(subscription),
    anchor: subscription.billingCycleAnchor,
    from: seatSnapshotOf(price, from),
    to: seatSnapshotOf(price, to),
    at,
    creditBalance: 0,
  });
  if (preview === null) return null;
  const describe = (kind: string, quantity: number | undefined) =>
    `${kind === 'unused_time' ? 'Unused' : 'Remaining'} time on ${quantity ?? 1} × ${price.name}`;
  return {
    amountDue: preview.invoice.amountDue,
    currency: preview.invoice.currency,
    subtotal: preview.invoice.subtotal,
    lines: preview.invoice.lines.map((l) => ({
      description: describe(l.kind, l.quantity),
      amount: l.amount,
      proration: l.kind !== 'subscription',
      priceId: price.id,
      quantity: l.quantity ?? null,
      periodStart: l.period.start,
      periodEnd: l.period.end,
    })),
    periodStart: preview.period.start,
    periodEnd: preview.period.end,
  };
}

/** Why a new subscription's quantity is refused. */
export type StartingQuantityError = QuantityError | 'quantity_below_seats_in_use' | 'seats_managed_automatically';

/**
 * The quantity a new subscription starts with (subscribe, checkout): a flat price 1; a per-seat
 * price for an organization the seats it holds (automatic: any `requested` is refused, the seats
 * follow the members; bought: `requested`, at least the seats held, by default those), within the
 * price's minimum and maximum; for a user, 1 seat (at least the minimum).
 */
export async function startingQuantity(
  deps: Pick<SeatsDeps, 'organizations' | 'clock'>,
  subject: BillingSubject,
  plan: Pick<StoredPlan, 'seatPolicy'>,
  price: Pick<StoredPrice, 'amount' | 'seats'>,
  requested: unknown,
): Promise<Result<number, StartingQuantityError>> {
  if (price.seats === null) return requested === undefined ? ok(1) : checkQuantity(price, requested);
  if (subject.kind === 'user') return checkQuantity(price, requested ?? Math.max(1, price.seats.minimum));
  const held = await seatsHeld(deps, subject.id, plan.seatPolicy);
  if (plan.seatPolicy.mode === 'automatic') {
    if (requested !== undefined) return err('seats_managed_automatically');
    const quantity = automaticQuantity(price.seats, held);
    if (quantity < held) return err('quantity_above_maximum', `${held} seats are held: this price sells at most ${price.seats.maximum}`);
    return ok(quantity);
  }
  const checked = checkQuantity(price, requested ?? Math.max(held, price.seats.minimum));
  if (!checked.ok) return checked;
  if (checked.value < held) return err('quantity_below_seats_in_use', `${held} seats are held by members and pending invitations`);
  return ok(checked.value);
}
