import { isUuid } from '../../domain/ids';
import type { BillingDeps } from './deps';
import { type BillingOutcome, refuse, refuseFailure } from './errors';
import type { PaymentProcessor, ProcessorEvent, ProcessorResult } from './payment-processor';
import { makeSyncSubscription } from './sync-subscription';

/** At most this many of a customer's subscriptions are re-read for a customer-level event. */
const CUSTOMER_SUBSCRIPTIONS_SYNCED = 3;

/**
 * POST /api/webhooks/stripe[/<projectId>]. Nothing in the body is trusted before its signature is
 * checked with the project's webhook signing secret: the project comes from the path, or else from
 * the payload's metadata or customer (a hint used only to pick the secret). Each event id is
 * applied once (a unique row; a duplicate answers 200 and does nothing). Applying an event means
 * re-reading the subscription it is about from Stripe and recording the difference, so the order
 * of delivery does not matter. If Stripe cannot be reached the claim is released and the answer is
 * 502, so Stripe retries. Unknown event types answer 200 and are ignored.
 */
export function makeReceiveStripeWebhook(deps: BillingDeps) {
  const syncSubscription = makeSyncSubscription(deps);

  async function apply(projectId: string, processor: PaymentProcessor, event: ProcessorEvent): Promise<ProcessorResult<void>> {
    const subject = event.subject;
    const sync = async (id: string): Promise<ProcessorResult<void>> => {
      const done = await syncSubscription(projectId, processor, id);
      return done.ok ? { ok: true, value: undefined } : done;
    };
    switch (subject.kind) {
      case 'ignored':
        return { ok: true, value: undefined };
      case 'subscription':
        return sync(subject.subscriptionId);
      case 'checkout_completed': {
        let id = subject.subscriptionId;
        if (id === null) {
          const found = await processor.checkoutSubscriptionId(subject.checkoutId);
          if (!found.ok) return found;
          id = found.value;
        }
        return id === null ? { ok: true, value: undefined } : sync(id);
      }
      case 'customer': {
        const customer = await deps.customers.findByProcessorId(processor.kind, subject.customerId);
        if (customer === null || customer.projectId !== projectId) return { ok: true, value: undefined };
        const ids = await processor.listSubscriptionIds(subject.customerId);
        if (!ids.ok) return ids;
        for (const id of ids.value.slice(0, CUSTOMER_SUBSCRIPTIONS_SYNCED)) {
          const done = await sync(id);
          if (!done.ok) return done;
        }
        return { ok: true, value: undefined };
      }
    }
  }

  return async function receiveStripeWebhook(input: {
    rawBody: Buffer;
    signature: string | undefined;
    projectId: string | null;
  }): Promise<BillingOutcome<{ received: true; duplicate: boolean }>> {
    let projectId = input.projectId;
    if (projectId === null) {
      const hints = deps.webhooks.hints(input.rawBody);
      if (hints === null) return refuse('invalid_webhook_signature');
      projectId = hints.projectId;
      if ((projectId === null || !isUuid(projectId)) && hints.customerId !== null) {
        projectId = (await deps.customers.findByProcessorId('stripe', hints.customerId))?.projectId ?? null;
      }
    }
    if (projectId === null || !isUuid(projectId)) return refuse('webhook_project_unknown');
    const connection = await deps.connections.get(projectId);
    if (connection === null || connection.processor !== 'stripe' || connection.webhookSecret === null) return refuse('webhook_project_unknown');

    const verified = deps.webhooks.verify(input.rawBody, input.signature, connection.webhookSecret, deps.clock.now());
    if (!verified.ok) return refuse('invalid_webhook_signature');
    const event = verified.value;
    if (event.projectId !== null && event.projectId !== projectId && event.subject.kind !== 'ignored') {
      // Signed by this project's secret but naming another project: apply it to neither.
      deps.logger.warn({ projectId, eventProject: event.projectId, eventId: event.id }, 'billing: webhook names another project');
      return { ok: true, value: { received: true, duplicate: false } };
    }
    const claimed = await deps.processorEvents.claim({ processor: 'stripe', eventId: event.id, projectId, type: event.type, receivedAt: deps.clock.now() });
    if (!claimed) return { ok: true, value: { received: true, duplicate: true } };
    const processor = deps.processors.forConnection(connection);
    let applied: ProcessorResult<void>;
    try {
      applied = await apply(projectId, processor, event);
    } catch (e) {
      await deps.processorEvents.unclaim('stripe', event.id);
      throw e;
    }
    if (!applied.ok) {
      await deps.processorEvents.unclaim('stripe', event.id);
      return refuseFailure(applied.failure);
    }
    return { ok: true, value: { received: true, duplicate: false } };
  };
}
