import type { AuditAction } from '../../domain/audit';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { Result } from '../../domain/result';
import type { BillingErrorCode } from './errors';
import type { BillingActor } from './requests';
import type { UserUseCases } from './use-cases';
import type { SubscriptionView } from './views';

type Audited = 'subscribe' | 'changeSubscription' | 'cancelSubscription' | 'pauseSubscription' | 'resumeSubscription' | 'setSeats';

const ACTIONS: Record<Audited, { done: AuditAction; failed: AuditAction }> = {
  subscribe: { done: 'billing.subscribe', failed: 'billing.subscribe.failed' },
  changeSubscription: { done: 'billing.change', failed: 'billing.change.failed' },
  cancelSubscription: { done: 'billing.cancel', failed: 'billing.cancel.failed' },
  pauseSubscription: { done: 'billing.pause', failed: 'billing.pause.failed' },
  resumeSubscription: { done: 'billing.resume', failed: 'billing.resume.failed' },
  setSeats: { done: 'billing.seats', failed: 'billing.seats.failed' },
};

/**
 * The end user's billing actions (subscribe, change, cancel, pause, resume, buying seats) recorded in the audit
 * log as they end: the subscription, its status and price, or the refusal's code. The use cases
 * themselves are unchanged; this wraps them where the composition root assembles them.
 */
export function auditBillingActions<U extends UserUseCases>(useCases: U, deps: { audit: AuditLog; clock: Clock }): U {
  const wrap =
    <I, E extends BillingErrorCode>(name: Audited, run: (actor: BillingActor, input: I) => Promise<Result<SubscriptionView, E>>) =>
    async (actor: BillingActor, input: I): Promise<Result<SubscriptionView, E>> => {
      const outcome = await run(actor, input);
      const facts = { actor: userActor(actor.user.id), origin: actor.origin ?? SYSTEM_ORIGIN };
      deps.audit.record(
        outcome.ok
          ? auditEntry(deps.clock.now(), actor.project.id, ACTIONS[name].done, {
              ...facts,
              target: { kind: 'subscription', id: outcome.value.id },
              details: {
                status: outcome.value.status,
                price_id: outcome.value.price.id,
                plan: outcome.value.plan.name,
                ...(name === 'setSeats' || outcome.value.quantity !== 1 ? { quantity: outcome.value.quantity } : {}),
                ...(outcome.value.organizationId !== null ? { organization_id: outcome.value.organizationId } : {}),
              },
            })
          : auditEntry(deps.clock.now(), actor.project.id, ACTIONS[name].failed, {
              ...facts,
              reason: outcome.error,
              ...(typeof actor.organizationId === 'string' ? { details: { organization_id: actor.organizationId } } : {}),
            }),
      );
      return outcome;
    };
  return {
    ...useCases,
    subscribe: wrap('subscribe', useCases.subscribe),
    changeSubscription: wrap('changeSubscription', useCases.changeSubscription),
    cancelSubscription: wrap('cancelSubscription', useCases.cancelSubscription),
    pauseSubscription: wrap('pauseSubscription', useCases.pauseSubscription),
    resumeSubscription: wrap('resumeSubscription', useCases.resumeSubscription),
    setSeats: Object.assign(wrap('setSeats', useCases.setSeats), { forSubject: useCases.setSeats.forSubject }),
  };
}
