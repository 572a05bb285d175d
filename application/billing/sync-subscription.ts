import { type BillingDeps, underUserLock } from './deps';
import type { PaymentProcessor, ProcessorResult, ProcessorSnapshot } from './payment-processor';
import { type RecordOutcome, makeRecordSnapshot, ownerOf } from './record-snapshot';

/**
 * Re-reads one subscription from the processor and records the difference. This is how Tollgate
 * trusts nothing in a webhook's copy of an object: duplicates and events delivered out of order
 * all end in the processor's current state, and events come from the difference only.
 *
 * The processor is read, and the difference recorded, while holding the user's billing lease (the
 * one the user's own actions hold from their processor call to their record): a state read here is
 * recorded before anyone changes the subscription again, so a webhook handled late never writes
 * back a state older than one already recorded (a pause's webhook re-read just before the resume,
 * recorded just after it, would turn the subscription back to paused). The owner comes from
 * Tollgate's record; a subscription seen for the first time is read once to find it, then again
 * under the lease. A lease held elsewhere for longer than the wait answers `unavailable`, so
 * Stripe delivers the webhook again.
 *
 * One live subscription per user holds at the processor too: a subscription that would be the
 * user's second live one (two checkouts both completed) is canceled there at once.
 */
export function makeSyncSubscription(deps: BillingDeps) {
  const recordSnapshot = makeRecordSnapshot(deps);
  return async function syncSubscription(
    projectId: string,
    processor: PaymentProcessor,
    processorSubscriptionId: string,
  ): Promise<ProcessorResult<RecordOutcome | null>> {
    const recordRead = (snapshot: ProcessorSnapshot) => recordSnapshot({ projectId, processor: processor.kind, snapshot });
    const known = await deps.subscriptions.findByProcessorId(processor.kind, processorSubscriptionId);
    let userId = known !== null && known.projectId === projectId ? known.userId : null;
    if (userId === null) {
      const first = await processor.getSubscription(processorSubscriptionId);
      if (!first.ok || first.value === null) return first.ok ? { ok: true, value: null } : first;
      userId = await ownerOf(deps, projectId, processor.kind, first.value.subscription.customerId, first.value.subscription.metadata.userId);
      // No owner to lock for: recording refuses it (unknown_owner) and nothing is written.
      if (userId === null) return { ok: true, value: await recordRead(first.value) };
    }
    const locked = await underUserLock(deps, projectId, userId, async (): Promise<ProcessorResult<RecordOutcome | null>> => {
      const snapshot = await processor.getSubscription(processorSubscriptionId);
      if (!snapshot.ok || snapshot.value === null) return snapshot.ok ? { ok: true, value: null } : snapshot;
      return { ok: true, value: await recordRead(snapshot.value) };
    });
    if (locked === null) {
      return { ok: false, failure: { kind: 'unavailable', message: 'Another change to this subscription is in progress: retry in a moment' } };
    }
    if (!locked.value.ok || locked.value.value === null) return locked.value;
    const recorded = locked.value.value;
    if (!recorded.ok) {
      deps.logger.warn({ projectId, subscription: processorSubscriptionId, reason: recorded.reason }, 'billing: processor subscription not recorded');
      if (recorded.reason === 'live_conflict') {
        // A second live subscription for a user who already has one (two checkouts both paid):
        // it is canceled at once so it never renews; its first charge stays for the operator to refund.
        const canceled = await processor.cancelSubscription(processorSubscriptionId, {
          atPeriodEnd: false,
          idempotencyKey: `tollgate-duplicate-${processorSubscriptionId}`,
        });
        deps.logger.warn(
          { projectId, subscription: processorSubscriptionId, canceled: canceled.ok },
          'billing: a second live subscription of one user was canceled at the processor; refund its first invoice if it was charged',
        );
      }
    }
    return { ok: true, value: recorded };
  };
}
