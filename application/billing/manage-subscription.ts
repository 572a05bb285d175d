import { type SubscriptionError, cancelAtPeriodEnd, cancelNow, pause, resume } from '../../domain/billing/subscription';
import { type Result, err, ok } from '../../domain/result';
import type { BillingSubject } from '../../domain/billing/subject';
import { withSubjectLock } from './billing-lease';
import { payerOf, type SubjectError } from './billing-subject';
import type { BillingSubscription } from './billing.store';
import { type LiveRefusal, OTHER_PROCESSOR, subscriptionRefusal } from './change-subscription';
import { type ConnectedError, connectedProcessor } from './connected-processor';
import type { BillingDeps } from './deps';
import { type FailureCode, refuseFailure } from './errors';
import type { PaymentProcessor, ProcessorFailure, ProcessorResult, ProcessorSnapshot, RequestFailure } from './payment-processor';
import { makeRecordSnapshot } from './record-snapshot';
import { makeReportUsage } from './report-usage';
import type { BillingActor } from './requests';
import { catalogNames, subscriptionView, type SubscriptionView } from './views';

type Rule<E extends SubscriptionError> = (subscription: BillingSubscription, at: Date) => Result<unknown, E>;
type Call<F extends ProcessorFailure> = (
  processor: PaymentProcessor,
  subscription: BillingSubscription,
  key: string,
) => Promise<ProcessorResult<ProcessorSnapshot, F>>;

/**
 * What a user action on the live subscription can answer besides the subscription: none live, the
 * user's lease taken, the refusals `E` of the domain's rule, no usable processor, and the failures
 * `F` of the processor's call (a charge's decline only for a call that charges).
 */
export type SubscriptionActionError<E extends SubscriptionError, F extends ProcessorFailure = RequestFailure> =
  | 'subscription_not_found'
  | 'subscription_busy'
  | LiveRefusal<E>
  | ConnectedError
  | FailureCode<F>
  | 'processor_rejected';

/** Cancelling a subject's subscription, whoever asks. */
export type CancelError = SubscriptionActionError<'subscription_paused' | 'cancellation_scheduled'>;
/** What a user's request can answer besides: acting for an organization it may not manage. */
export type CancelSubscriptionError = CancelError | SubjectError;
export type PauseSubscriptionError =
  | SubscriptionActionError<'subscription_paused' | 'subscription_past_due' | 'subscription_trialing' | 'cancellation_scheduled'>
  | SubjectError;
export type ResumeSubscriptionError = SubscriptionActionError<'subscription_not_resumable', ProcessorFailure> | SubjectError;

/**
 * One user action on the live subscription: the domain's rule decides whether it is allowed (a
 * clear 409 otherwise, before the processor is called), the processor does it, and the record and
 * its events follow the processor's answer.
 */
function subscriptionAction<E extends SubscriptionError, F extends ProcessorFailure>(deps: BillingDeps, name: string, rule: Rule<E>, call: Call<F>) {
  const recordSnapshot = makeRecordSnapshot(deps);
  /** The action on a subject's live subscription, for whoever may act (the subject's own request, the project). */
  const forSubject = (projectId: string, subject: BillingSubject, requestKey: string): Promise<Result<SubscriptionView, SubscriptionActionError<E, F>>> =>
    withSubjectLock(deps, projectId, subject.id, async (): Promise<Result<SubscriptionView, SubscriptionActionError<E, F>>> => {
      const subscription = await deps.subscriptions.findLive(projectId, subject);
      if (subscription === null) return err('subscription_not_found');
      const allowed = rule(subscription, deps.clock.now());
      if (!allowed.ok) return err(subscriptionRefusal(allowed.error));
      const connected = await connectedProcessor(deps, projectId);
      if (!connected.ok) return connected;
      const { processor } = connected.value;
      if (processor.kind !== subscription.processor) return err('billing_not_connected', OTHER_PROCESSOR);
      const done = await call(processor, subscription, `tollgate-${name}-${subscription.id}-${requestKey}`);
      if (!done.ok) return refuseFailure(done.failure);
      const recorded = await recordSnapshot({ projectId, processor: processor.kind, snapshot: done.value });
      if (!recorded.ok) return err('processor_rejected', `The ${name} could not be recorded (${recorded.reason})`);
      return ok(subscriptionView(recorded.subscription, await catalogNames(deps.catalog, projectId)));
    });
  const forActor = async (actor: BillingActor, requestKey: string): Promise<Result<SubscriptionView, SubscriptionActionError<E, F> | SubjectError>> => {
    const payer = await payerOf(deps, actor, 'manage');
    if (!payer.ok) return payer;
    return forSubject(actor.project.id, payer.value.subject, requestKey);
  };
  return Object.assign(forActor, { forSubject });
}

/**
 * POST billing/subscription/cancel {at_period_end = true}: at period end -> pending cancellation
 * (entitled until the period ends, then canceled: subscription.updated now, subscription.canceled
 * then); now -> canceled at once (subscription.canceled), without a refund of the unused time.
 */
export function makeCancelSubscription(deps: BillingDeps) {
  return makeCancelActions(deps).forActor;
}

/** The cancellation for the subject's own request (`forActor`) and for the project's (`forSubject`: its server, an organization's deletion). */
export function makeCancelActions(deps: BillingDeps) {
  const atEnd = subscriptionAction(deps, 'cancel', cancelAtPeriodEnd, (p, s, key) =>
    p.cancelSubscription(s.processorSubscriptionId, { atPeriodEnd: true, idempotencyKey: key }),
  );
  const reportUsage = makeReportUsage(deps);
  const now = subscriptionAction(deps, 'cancel-now', cancelNow, async (p, s, key) => {
    // The overage not reported yet reaches the processor first, so the final invoice bills it (docs/usage.md, "Money").
    await reportUsage.forSubject(s.projectId, s.subject);
    return p.cancelSubscription(s.processorSubscriptionId, { atPeriodEnd: false, idempotencyKey: key });
  });
  return {
    forActor: (actor: BillingActor, input: { atPeriodEnd: boolean; requestKey: string }): Promise<Result<SubscriptionView, CancelSubscriptionError>> =>
      input.atPeriodEnd ? atEnd(actor, input.requestKey) : now(actor, input.requestKey),
    forSubject: (
      projectId: string,
      subject: BillingSubject,
      input: { atPeriodEnd: boolean; requestKey: string },
    ): Promise<Result<SubscriptionView, CancelError>> =>
      input.atPeriodEnd ? atEnd.forSubject(projectId, subject, input.requestKey) : now.forSubject(projectId, subject, input.requestKey),
  };
}

/** POST billing/subscription/pause: active -> paused (no access, no renewals charged). subscription.updated. */
export function makePauseSubscription(deps: BillingDeps) {
  const action = subscriptionAction(deps, 'pause', pause, (p, s, key) => p.pauseSubscription(s.processorSubscriptionId, key));
  return (actor: BillingActor, input: { requestKey: string }): Promise<Result<SubscriptionView, PauseSubscriptionError>> => action(actor, input.requestKey);
}

/**
 * POST billing/subscription/resume: paused -> active, or pending cancellation -> renewing again.
 * subscription.updated. A resume once a period began while paused starts a new period and charges
 * it (invoice.paid); a declined charge answers 402 and leaves it paused. (The rule is asked as if
 * paid: only the processor's charge can decline.)
 */
export function makeResumeSubscription(deps: BillingDeps) {
  const action = subscriptionAction(
    deps,
    'resume',
    (s, at) => resume(s, at, 'paid'),
    (p, s, key) => p.resumeSubscription(s.processorSubscriptionId, key),
  );
  return (actor: BillingActor, input: { requestKey: string }): Promise<Result<SubscriptionView, ResumeSubscriptionError>> => action(actor, input.requestKey);
}
