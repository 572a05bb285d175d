import { previewChange as domainPreviewChange } from '../../domain/billing/subscription';
import type { SubscriptionError } from '../../domain/billing/subscription';
import type { BillingSubscription } from './billing.store';
import type { BillingDeps } from './deps';
import { connectedProcessor } from './connected-processor';
import { withUserLock } from './billing-lease';
import { type BillingErrorCode, type BillingOutcome, refuse, refuseFailure } from './errors';
import { processorPriceId, sellablePrice } from './price-lookup';
import { buildEvent, makeRecordSnapshot } from './record-snapshot';
import type { BillingActor } from './use-cases';
import { catalogNames, type ChangePreviewView, invoiceLineView, subscriptionView, type SubscriptionView } from './views';

/** The refusals the domain's subscription rules give for the actions users can take. */
export function subscriptionRefusal(error: SubscriptionError): BillingErrorCode {
  switch (error) {
    case 'payment_required':
    case 'incomplete_not_expired':
    case 'period_not_ended':
    case 'trial_not_ended':
    case 'grace_period_not_over':
    case 'subscription_not_incomplete':
    case 'subscription_not_past_due':
    case 'subscription_not_trialing':
    case 'cancellation_not_scheduled':
    case 'subscription_not_paused':
    case 'outside_current_period':
      throw new Error(`unexpected subscription refusal for a user action: ${error}`);
    default:
      return error;
  }
}

type Checked = BillingOutcome<{
  subscription: BillingSubscription;
  processorPriceId: string;
  processor: import('./payment-processor').PaymentProcessor;
  newPriceId: string;
}>;

/** The live subscription and the new price, checked by the domain's change rules. */
async function checkChange(deps: BillingDeps, actor: BillingActor, newPriceId: string): Promise<Checked> {
  const subscription = await deps.subscriptions.findLive(actor.project.id, actor.user.id);
  if (subscription === null) return refuse('subscription_not_found');
  const chosen = await sellablePrice(deps, actor.project.id, newPriceId);
  if (!chosen.ok) return chosen;
  const { price, plan } = chosen.value;
  // Only whether the change is allowed is asked here; the processor prorates at its own time. The
  // record's period is the processor's, so Tollgate's clock may lie outside it (just before a
  // renewal the processor already made, or after a period whose renewal has not arrived yet):
  // then the rules are asked at the period's start.
  const now = deps.clock.now();
  const inPeriod = now >= subscription.currentPeriodStart && now < subscription.currentPeriodEnd;
  const allowed = domainPreviewChange(subscription, price, inPeriod ? now : subscription.currentPeriodStart);
  if (!allowed.ok) return refuse(subscriptionRefusal(allowed.error));
  const connected = await connectedProcessor(deps, actor.project.id);
  if (!connected.ok) return connected;
  const { processor } = connected.value;
  if (processor.kind !== subscription.processor) return refuse('billing_not_connected', 'The subscription is billed by another processor than the one now connected');
  const priceAtProcessor = await processorPriceId(deps, processor, plan, price);
  if (!priceAtProcessor.ok) return priceAtProcessor;
  return { ok: true, value: { subscription, processorPriceId: priceAtProcessor.value, processor, newPriceId: price.id } };
}

/** POST billing/subscription/change/preview: what a change would charge now (proration), without changing anything. */
export function makePreviewChange(deps: BillingDeps) {
  return async function previewChange(actor: BillingActor, newPriceId: string): Promise<BillingOutcome<ChangePreviewView>> {
    const checked = await checkChange(deps, actor, newPriceId);
    if (!checked.ok) return checked;
    const { processor, subscription } = checked.value;
    const preview = await processor.previewChange(subscription.processorSubscriptionId, checked.value.processorPriceId);
    if (!preview.ok) return refuseFailure(preview.failure);
    const prices = await deps.catalog.listPrices(actor.project.id);
    const local = new Map(prices.filter((p) => p.processorPriceId !== null).map((p) => [p.processorPriceId!, p.id]));
    const p = preview.value;
    return {
      ok: true,
      value: {
        amountDue: p.amountDue,
        currency: p.currency,
        subtotal: p.subtotal,
        lines: p.lines.map((l) => invoiceLineView({ ...l, priceId: l.priceId === null ? null : (local.get(l.priceId) ?? null) })),
        periodStart: p.periodStart,
        periodEnd: p.periodEnd,
      },
    };
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
  ): Promise<BillingOutcome<SubscriptionView>> {
    return withUserLock(deps, actor.project.id, actor.user.id, async () => {
      const checked = await checkChange(deps, actor, input.newPriceId);
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
              userId: actor.user.id,
              subscriptionId: subscription.id,
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
      if (!recorded.ok) return refuse('processor_rejected', `The change could not be recorded (${recorded.reason})`);
      return { ok: true, value: subscriptionView(recorded.subscription, await catalogNames(deps.catalog, actor.project.id)) };
    });
  };
}
