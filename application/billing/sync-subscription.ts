import type { BillingDeps } from './deps';
import type { PaymentProcessor, ProcessorResult } from './payment-processor';
import { type RecordOutcome, makeRecordSnapshot } from './record-snapshot';

/**
 * Re-reads one subscription from the processor and records the difference. This is how Tollgate
 * trusts nothing in a webhook's copy of an object: duplicates and events delivered out of order
 * all end in the processor's current state, and events come from the difference only.
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
    const snapshot = await processor.getSubscription(processorSubscriptionId);
    if (!snapshot.ok) return snapshot;
    if (snapshot.value === null) return { ok: true, value: null };
    const recorded = await recordSnapshot({ projectId, processor: processor.kind, snapshot: snapshot.value });
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
