import { resolveTrialDays } from '../../domain/billing/catalog';
import { type Result, err, ok } from '../../domain/result';
import { withSubjectLock } from './billing-lease';
import { payerOf, type SubjectError } from './billing-subject';
import { type ConnectedError, connectedProcessor } from './connected-processor';
import type { BillingDeps } from './deps';
import { makeSettleDuplicate } from './duplicate-subscription';
import { ensureCustomer, subjectMetadata } from './ensure-customer';
import { type FailureCode, refuseFailure } from './errors';
import { type SellableError, processorPriceId, sellablePrice } from './price-lookup';
import { buildEvent, makeRecordSnapshot } from './record-snapshot';
import { type StartingQuantityError, startingQuantity } from './organization-seats';
import { requestScopedId } from './request-scoped-id';
import type { BillingActor } from './requests';
import { catalogNames, subscriptionView, type SubscriptionView } from './views';

/** What POST billing/subscribe can answer besides the subscription: a charge can be declined. */
export type SubscribeError = SellableError | ConnectedError | 'subscription_exists' | 'subscription_busy' | FailureCode | StartingQuantityError | SubjectError;

/**
 * POST billing/subscribe (spec: none -> active; "card charged; subscription returned; event
 * subscription.created; card kept for renewals"). One live subscription per user: a second
 * subscribe answers 409 subscription_exists, and concurrent ones are refused by the user's lease
 * (409 subscription_busy) before anything reaches the processor, so 20 at once make one charge.
 * A plan with trials enabled and a default trial starts trialing, once per user and project.
 * A declined card answers 402, records payment.failed and leaves nothing live.
 */
export function makeSubscribe(deps: BillingDeps) {
  const recordSnapshot = makeRecordSnapshot(deps);
  const settleDuplicate = makeSettleDuplicate(deps);
  return async function subscribe(
    actor: BillingActor,
    input: { priceId: string; paymentMethodId: string; quantity?: unknown; requestKey: string },
  ): Promise<Result<SubscriptionView, SubscribeError>> {
    const { project, user } = actor;
    const payer = await payerOf(deps, actor, 'manage');
    if (!payer.ok) return payer;
    const { subject, key } = payer.value;
    const chosen = await sellablePrice(deps, project.id, input.priceId, subject.kind);
    if (!chosen.ok) return chosen;
    const { price, plan } = chosen.value;
    const quantity = await startingQuantity(deps, subject, plan, price, input.quantity);
    if (!quantity.ok) return quantity;
    const connected = await connectedProcessor(deps, project.id);
    if (!connected.ok) return connected;
    const { connection, processor } = connected.value;
    const subscriptionId = requestScopedId(deps, 'subscribe', project.id, key, input.requestKey);
    // A live subscription refuses a subscribe, unless it is this request's own: a retry with the
    // Idempotency-Key of a run that died after the processor made it (recorded since from the
    // processor's webhook) answers it, as that run would have.
    const live = async (): Promise<Result<SubscriptionView, 'subscription_exists'> | null> => {
      const found = await deps.subscriptions.findLive(project.id, subject);
      if (found === null) return null;
      if (found.id !== subscriptionId) return err('subscription_exists');
      return ok(subscriptionView(found, await catalogNames(deps.catalog, project.id)));
    };
    const before = await live();
    if (before !== null) return before;

    return withSubjectLock(deps, project.id, subject.id, async () => {
      const found = await live();
      if (found !== null) return found;
      const customer = await ensureCustomer(deps, connection, processor, subject, user);
      if (!customer.ok) return refuseFailure(customer.failure);
      const trial = resolveTrialDays(plan, null);
      const trialDays = trial.ok && !customer.value.trialUsed ? trial.value : null;
      const priceAtProcessor = await processorPriceId(deps, processor, plan, price);
      if (!priceAtProcessor.ok) return priceAtProcessor;
      const created = await processor.createSubscription({
        customerId: customer.value.customerId,
        priceId: priceAtProcessor.value,
        paymentMethodId: input.paymentMethodId,
        trialDays,
        ...(price.seats === null ? {} : { quantity: quantity.value }),
        metadata: { ...subjectMetadata(project.id, subject), subscriptionId, priceId: price.id },
        idempotencyKey: `tollgate-subscribe-${project.id}-${key}-${input.requestKey}`,
      });
      if (!created.ok) {
        if (created.failure.kind === 'card_declined') {
          await deps.events.publish(
            buildEvent(deps, {
              projectId: project.id,
              type: 'payment.failed',
              subject,
              subscriptionId: null,
              dedupeKey: null,
              amount: price.amount,
              currency: price.currency,
              data: { reason: created.failure.message, declineCode: created.failure.declineCode, priceId: price.id },
            }),
          );
        }
        return refuseFailure(created.failure);
      }
      const recorded = await recordSnapshot({
        projectId: project.id,
        processor: processor.kind,
        snapshot: created.value,
        subject,
        subscriptionId,
      });
      if (!recorded.ok) {
        deps.logger.error({ projectId: project.id, reason: recorded.reason }, 'billing: a new subscription could not be recorded');
        if (recorded.reason !== 'live_conflict') return err('processor_rejected');
        // Another subscription was recorded meanwhile (its webhook, while this request ran without
        // the key of the first): this one is a duplicate, refunded and canceled now.
        const settled = await settleDuplicate(project.id, processor, created.value, subject);
        if (!settled.ok)
          deps.logger.error({ projectId: project.id, failure: settled.failure.kind }, 'billing: a duplicate subscription could not be settled yet');
        return err('subscription_exists');
      }
      if (recorded.subscription.trialStart !== null) await deps.customers.markTrialUsed(project.id, subject, processor.kind);
      return ok(subscriptionView(recorded.subscription, await catalogNames(deps.catalog, project.id)));
    });
  };
}
