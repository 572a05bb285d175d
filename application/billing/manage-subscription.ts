import { cancelAtPeriodEnd, cancelNow, pause, resume } from '../../domain/billing/subscription';
import type { BillingSubscription } from './billing.store';
import { subscriptionRefusal } from './change-subscription';
import type { BillingDeps } from './deps';
import { connectedProcessor } from './connected-processor';
import { withUserLock } from './billing-lease';
import { type BillingOutcome, refuse, refuseFailure } from './errors';
import type { PaymentProcessor, ProcessorResult, ProcessorSnapshot } from './payment-processor';
import { makeRecordSnapshot } from './record-snapshot';
import type { BillingActor } from './use-cases';
import { catalogNames, subscriptionView, type SubscriptionView } from './views';

type Rule = (subscription: BillingSubscription, at: Date) => { ok: boolean; error?: Parameters<typeof subscriptionRefusal>[0] };
type Call = (processor: PaymentProcessor, subscription: BillingSubscription, key: string) => Promise<ProcessorResult<ProcessorSnapshot>>;

/**
 * One user action on the live subscription: the domain's rule decides whether it is allowed (a
 * clear 409 otherwise, before the processor is called), the processor does it, and the record and
 * its events follow the processor's answer.
 */
function subscriptionAction(deps: BillingDeps, name: string, rule: Rule, call: Call) {
  const recordSnapshot = makeRecordSnapshot(deps);
  return async (actor: BillingActor, requestKey: string): Promise<BillingOutcome<SubscriptionView>> =>
    withUserLock(deps, actor.project.id, actor.user.id, async () => {
      const subscription = await deps.subscriptions.findLive(actor.project.id, actor.user.id);
      if (subscription === null) return refuse('subscription_not_found');
      const allowed = rule(subscription, deps.clock.now());
      if (!allowed.ok) return refuse(subscriptionRefusal(allowed.error!));
      const connected = await connectedProcessor(deps, actor.project.id);
      if (!connected.ok) return connected;
      const { processor } = connected.value;
      if (processor.kind !== subscription.processor) return refuse('billing_not_connected', 'The subscription is billed by another processor than the one now connected');
      const done = await call(processor, subscription, `tollgate-${name}-${subscription.id}-${requestKey}`);
      if (!done.ok) return refuseFailure(done.failure);
      const recorded = await recordSnapshot({ projectId: actor.project.id, processor: processor.kind, snapshot: done.value });
      if (!recorded.ok) return refuse('processor_rejected', `The ${name} could not be recorded (${recorded.reason})`);
      return { ok: true, value: subscriptionView(recorded.subscription, await catalogNames(deps.catalog, actor.project.id)) };
    });
}

/**
 * POST billing/subscription/cancel {at_period_end = true}: at period end -> pending cancellation
 * (entitled until the period ends, then canceled: subscription.updated now, subscription.canceled
 * then); now -> canceled at once (subscription.canceled), without a refund of the unused time.
 */
export function makeCancelSubscription(deps: BillingDeps) {
  const atEnd = subscriptionAction(deps, 'cancel', cancelAtPeriodEnd, (p, s, key) =>
    p.cancelSubscription(s.processorSubscriptionId, { atPeriodEnd: true, idempotencyKey: key }),
  );
  const now = subscriptionAction(deps, 'cancel-now', cancelNow, (p, s, key) =>
    p.cancelSubscription(s.processorSubscriptionId, { atPeriodEnd: false, idempotencyKey: key }),
  );
  return (actor: BillingActor, input: { atPeriodEnd: boolean; requestKey: string }) =>
    input.atPeriodEnd ? atEnd(actor, input.requestKey) : now(actor, input.requestKey);
}

/** POST billing/subscription/pause: active -> paused (no access, no renewals charged). subscription.updated. */
export function makePauseSubscription(deps: BillingDeps) {
  const action = subscriptionAction(deps, 'pause', pause, (p, s, key) => p.pauseSubscription(s.processorSubscriptionId, key));
  return (actor: BillingActor, input: { requestKey: string }) => action(actor, input.requestKey);
}

/**
 * POST billing/subscription/resume: paused -> active, or pending cancellation -> renewing again.
 * subscription.updated. A resume once a period began while paused starts a new period and charges
 * it (invoice.paid); a declined charge answers 402 and leaves it paused. (The rule is asked as if
 * paid: only the processor's charge can decline.)
 */
export function makeResumeSubscription(deps: BillingDeps) {
  const action = subscriptionAction(deps, 'resume', (s, at) => resume(s, at, 'paid'), (p, s, key) => p.resumeSubscription(s.processorSubscriptionId, key));
  return (actor: BillingActor, input: { requestKey: string }) => action(actor, input.requestKey);
}
