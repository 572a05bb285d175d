import type { BillingSubject } from '../../domain/billing/subject';
import type { BillingDeps } from './deps';
import { underSubjectLock } from './billing-lease';
import { makeSettleDuplicate } from './duplicate-subscription';
import { trialUsed } from './ensure-customer';
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
 * Two rules hold here, at the moment a subscription is first recorded, whatever created it (a
 * checkout opened long before, Stripe's dashboard):
 * - one trial per user and project: a new subscription in a trial the user was no longer eligible
 *   for (two checkouts with a trial opened up front, the first one used) has its trial ended at
 *   once at the processor, so it starts active and its first period is charged now;
 * - one live subscription per subject: a subscription that would be the subject's second live one (two
 *   checkouts both completed) is refunded and canceled at once (duplicate-subscription.ts).
 */
export function makeSyncSubscription(deps: BillingDeps) {
  const recordSnapshot = makeRecordSnapshot(deps);
  const settleDuplicate = makeSettleDuplicate(deps);

  /** A subscription not yet recorded, trialing, of a subject with no live one who already had its trial. */
  async function isRepeatTrial(projectId: string, processor: PaymentProcessor, subject: BillingSubject, snapshot: ProcessorSnapshot): Promise<boolean> {
    if (snapshot.subscription.status !== 'trialing') return false;
    if ((await deps.subscriptions.findByProcessorId(processor.kind, snapshot.subscription.id)) !== null) return false;
    if ((await deps.subscriptions.findLive(projectId, subject)) !== null) return false;
    return trialUsed(deps, projectId, subject, processor.kind);
  }

  return async function syncSubscription(
    projectId: string,
    processor: PaymentProcessor,
    processorSubscriptionId: string,
  ): Promise<ProcessorResult<RecordOutcome | null>> {
    const recordRead = (snapshot: ProcessorSnapshot) => recordSnapshot({ projectId, processor: processor.kind, snapshot });
    const known = await deps.subscriptions.findByProcessorId(processor.kind, processorSubscriptionId);
    let subject = known !== null && known.projectId === projectId ? known.subject : null;
    if (subject === null) {
      const first = await processor.getSubscription(processorSubscriptionId);
      if (!first.ok || first.value === null) return first.ok ? { ok: true, value: null } : first;
      subject = await ownerOf(deps, projectId, processor.kind, first.value.subscription.customerId, first.value.subscription.metadata);
      // No owner to lock for: recording refuses it (unknown_owner) and nothing is written.
      if (subject === null) return { ok: true, value: await recordRead(first.value) };
    }
    const owner = subject;
    const locked = await underSubjectLock(deps, projectId, owner.id, async (): Promise<ProcessorResult<RecordOutcome | null>> => {
      const read = await processor.getSubscription(processorSubscriptionId);
      if (!read.ok || read.value === null) return read.ok ? { ok: true, value: null } : read;
      let snapshot = read.value;
      if (await isRepeatTrial(projectId, processor, owner, snapshot)) {
        const ended = await processor.endTrial(processorSubscriptionId, `tollgate-trial-used-${processorSubscriptionId}`);
        if (!ended.ok) return ended;
        deps.logger.info({ projectId, subscription: processorSubscriptionId }, 'billing: a second trial was ended at once; the first period is charged');
        snapshot = ended.value;
      }
      const recorded = await recordRead(snapshot);
      if (!recorded.ok && recorded.reason === 'live_conflict') return settleDuplicate(projectId, processor, snapshot, owner);
      return { ok: true, value: recorded };
    });
    if (locked === null) {
      return { ok: false, failure: { kind: 'unavailable', message: 'Another change to this subscription is in progress: retry in a moment' } };
    }
    if (!locked.value.ok || locked.value.value === null) return locked.value;
    const recorded = locked.value.value;
    if (!recorded.ok) {
      deps.logger.warn({ projectId, subscription: processorSubscriptionId, reason: recorded.reason }, 'billing: processor subscription not recorded');
    }
    return { ok: true, value: recorded };
  };
}
