import type { BillingDeps } from './deps';
import type { PaymentProcessor, ProcessorResult } from './payment-processor';
import { type RecordOutcome, makeRecordSnapshot } from './record-snapshot';

/**
 * Re-reads one subscription from the processor and records the difference. This is how Tollgate
 * trusts nothing in a webhook's copy of an object: duplicates and events delivered out of order
 * all end in the processor's current state, and events come from the difference only.
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
    }
    return { ok: true, value: recorded };
  };
}
