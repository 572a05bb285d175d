import { type ChangeError, type EndedError, type SubscriptionError, previewChange as domainPreviewChange } from '../../domain/billing/subscription';
import { type Result, err, ok } from '../../domain/result';
import { withSubjectLock } from './billing-lease';
import { payerOf, type SubjectError } from './billing-subject';
import type { BillingSubject } from '../../domain/billing/subject';
import type { BillingSubscription } from './billing.store';
import { type ConnectedError, connectedProcessor } from './connected-processor';
import type { BillingDeps } from './deps';
import { type FailureCode, type RequestFailureCode, refuseFailure } from './errors';
import type { PaymentProcessor } from './payment-processor';
import { type SellableError, processorPriceId, sellablePrice } from './price-lookup';
import { buildEvent, makeRecordSnapshot } from './record-snapshot';
import type { BillingActor } from './requests';
import { catalogNames, type ChangePreviewView, invoiceLineView, subscriptionView, type SubscriptionView } from './views';

/**
 * The refusals a domain rule cannot give about the live subscription a user acts on: it has started
 * and not ended (`findLive` reads live ones only), the user's actions are asked as paid, and a change
 * is asked at a time within the current period.
 */
type NotForLive = EndedError | 'payment_required' | 'outside_current_period';
const NOT_FOR_LIVE: ReadonlySet<SubscriptionError> = new Set<NotForLive>([
  'subscription_canceled',
  'subscription_incomplete',
  'payment_required',
  'outside_current_period',
]);

/** The refusals `E` of a domain rule that a user's action on their live subscription can meet. */
export type LiveRefusal<E extends SubscriptionError> = Exclude<E, NotForLive>;

/** The refusal a domain rule gives for a user's action on their live subscription; one it cannot give is a fault. */
export function subscriptionRefusal<E extends SubscriptionError>(error: E): LiveRefusal<E> {
  if (NOT_FOR_LIVE.has(error)) throw new Error(`unexpected subscription refusal for a user action: ${error}`);
  return error as LiveRefusal<E>;
}

/** The detail of `billing_not_connected` for a subscription the connected processor does not bill. */
export const OTHER_PROCESSOR = 'The subscription is billed by another processor than the one now connected';

/** What checking a change answers besides the subscription and the new price at the processor. */
type CheckChangeError = 'subscription_not_found' | SellableError | LiveRefusal<ChangeError> | ConnectedError | RequestFailureCode;

/** What POST billing/subscription/change/preview can answer besides the preview (any member may preview an organization's). */
export type PreviewChangeError = CheckChangeError | SubjectError<'read'>;
/** What POST billing/subscription/change can answer besides the subscription: the proration's charge can be declined. */
export type ChangeSubscriptionError = CheckChangeError | 'subscription_busy' | FailureCode | SubjectError;

type Checked = Result<{ subscription: BillingSubscription; processorPriceId: string; processor: PaymentProcessor; newPriceId: string }, CheckChangeError>;

/** The live subscription and the new price, checked by the domain's change rules. */
async function checkChange(deps: BillingDeps, actor: BillingActor, subject: BillingSubject, newPriceId: string): Promise<Checked> {
  const subscription = await deps.subscriptions.findLive(actor.project.id, subject);
  if (subscription === null) return err('subscription_not_found');
  const chosen = await sellablePrice(deps, actor.project.id, newPriceId, subject.kind);
  if (!chosen.ok) return chosen;
  const { price, plan } = chosen.value;
  // Only whether the change is allowed is asked here; the processor prorates at its own time. The
  // record's period is the processor's, so Tollgate's clock may lie outside it (just before a
  // renewal the processor already made, or after a period whose renewal has not arrived yet):
  // then the rules are asked at the period's start.
  const now = deps.clock.now();
  const inPeriod = now >= subscription.currentPeriodStart && now < subscription.currentPeriodEnd;
  const allowed = domainPreviewChange(subscription, price, inPeriod ? now : subscription.currentPeriodStart);
  if (!allowed.ok) return err(subscriptionRefusal(allowed.error));
  const connected = await connectedProcessor(deps, actor.project.id);
  if (!connected.ok) return connected;
  const { processor } = connected.value;
  if (processor.kind !== subscription.processor) return err('billing_not_connected', OTHER_PROCESSOR);
  const priceAtProcessor = await processorPriceId(deps, processor, plan, price);
  if (!priceAtProcessor.ok) return priceAtProcessor;
  return ok({ subscription, processorPriceId: priceAtProcessor.value, processor, newPriceId: price.id });
}

/** POST billing/subscription/change/preview: what a change would charge now (proration), without changing anything. */
export function makePreviewChange(deps: BillingDeps) {
  return async function previewChange(actor: BillingActor, newPriceId: string): Promise<Result<ChangePreviewView, PreviewChangeError>> {
    const payer = await payerOf(deps, actor, 'read');
    if (!payer.ok) return payer;
    const checked = await checkChange(deps, actor, payer.value.subject, newPriceId);
    if (!checked.ok) return checked;
    const { processor, subscription } = checked.value;
    const preview = await processor.previewChange(subscription.processorSubscriptionId, checked.value.processorPriceId);
    if (!preview.ok) return refuseFailure(preview.failure);
    const prices = await deps.catalog.listPrices(actor.project.id);
    const local = new Map(prices.filter((p) => p.processorPriceId !== null).map((p) => [p.processorPriceId!, p.id]));
    const p = preview.value;
    return ok({
      amountDue: p.amountDue,
      currency: p.currency,
      subtotal: p.subtotal,
      lines: p.lines.map((l) => invoiceLineView({ ...l, priceId: l.priceId === null ? null : (local.get(l.priceId) ?? null) })),
      periodStart: p.periodStart,
      periodEnd: p.periodEnd,
    });
  };
}

/**
 * POST billing/subscription/change {new_price_id}: the same subscription on the new price, the
 * proration invoiced and charged now (spec: "prorated invoice for the difference; event
 * subscription.updated"). A declined charge changes nothing: 402 and payment.failed.
 */
export function makeChangeSubscription(deps: BillingDeps) {
  const recordSnapshot = makeRecordSnapshot(deps);
  return async function changeSubscription(
    actor: BillingActor,
    input: { newPriceId: string; requestKey: string },
  ): Promise<Result<SubscriptionView, ChangeSubscriptionError>> {
    const payer = await payerOf(deps, actor, 'manage');
    if (!payer.ok) return payer;
    const { subject } = payer.value;
    return withSubjectLock(deps, actor.project.id, subject.id, async () => {
      const checked = await checkChange(deps, actor, subject, input.newPriceId);
      if (!checked.ok) return checked;
      const { processor, subscription } = checked.value;
      const changed = await processor.changeSubscription(
        subscription.processorSubscriptionId,
        checked.value.processorPriceId,
        `tollgate-change-${subscription.id}-${input.requestKey}`,
      );
      if (!changed.ok) {
        if (changed.failure.kind === 'card_declined') {
          await deps.events.publish(
            buildEvent(deps, {
              projectId: actor.project.id,
              type: 'payment.failed',
              subject,
              subscriptionId: subscription.id,
              quantity: subscription.price.quantity ?? 1,
              dedupeKey: null,
              amount: null,
              currency: subscription.price.currency,
              data: { reason: changed.failure.message, declineCode: changed.failure.declineCode, newPriceId: checked.value.newPriceId },
            }),
          );
        }
        return refuseFailure(changed.failure);
      }
      const recorded = await recordSnapshot({ projectId: actor.project.id, processor: processor.kind, snapshot: changed.value });
      if (!recorded.ok) return err('processor_rejected', `The change could not be recorded (${recorded.reason})`);
      return ok(subscriptionView(recorded.subscription, await catalogNames(deps.catalog, actor.project.id)));
    });
  };
}
