import { isUuid } from '../../domain/ids';
import { type Result, err, ok } from '../../domain/result';
import type { BillingDeps } from './deps';
import { type RequestFailureCode, refuseFailure } from './errors';
import type { PaymentProcessor, ProcessorEvent, ProcessorKind, ProcessorResult } from './payment-processor';
import type { InboundHeaders } from './processors';
import { makeFulfilPackCheckout } from './credit-packs';
import { makeSyncSubscription } from './sync-subscription';

/** An inbound webhook as its route received it. */
export interface ProcessorWebhook {
  /** The processor the route receives for (its path names it): its inbound webhooks are found by this name. */
  processor: ProcessorKind;
  /** The body, byte for byte as the processor signed it. */
  rawBody: Uint8Array;
  /** The request's headers: the processor's inbound webhooks read its signature from them. */
  headers: InboundHeaders;
  /** The project the path names, or null (then found from the payload). */
  projectId: string | null;
}

/** What a webhook can answer besides `received`: a bad signature, no project connected to the processor, the processor out of reach. */
export type ReceiveWebhookError = 'invalid_webhook_signature' | 'webhook_project_unknown' | RequestFailureCode;

/** At most this many of a customer's subscriptions are re-read for a customer-level event. */
const CUSTOMER_SUBSCRIPTIONS_SYNCED = 3;

/**
 * A payment processor's webhook (POST /api/webhooks/stripe[/<projectId>] for Stripe), whichever the
 * processor: its inbound webhooks are found by its name (`ProcessorDirectory.inboundWebhooks`), and
 * they read the signature, take an untrusted look at the payload and verify the event into the
 * port's neutral shape. Nothing in the body is trusted before its signature is checked with the
 * project's webhook signing secret: the project comes from the path, or else from the payload's
 * metadata or customer (a hint used only to pick the secret), and its connection must be to that
 * processor. Each event id is applied once per processor (a unique row keyed by the processor's
 * name; a duplicate answers 200 and does nothing). Applying an event means re-reading the
 * subscription it is about from the processor and recording the difference, so the order of
 * delivery does not matter. If the processor cannot be reached the claim is released and the answer
 * is 502, so the processor retries. Unknown event types answer 200 and are ignored.
 */
export function makeReceiveProcessorWebhook(deps: BillingDeps) {
  const syncSubscription = makeSyncSubscription(deps);
  const fulfilPackCheckout = makeFulfilPackCheckout(deps);

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
        if (id === null) {
          // No subscription: a one-off checkout, a credit pack's when its metadata names one.
          const granted = await fulfilPackCheckout(projectId, processor, subject.checkoutId);
          return granted.ok ? { ok: true, value: undefined } : granted;
        }
        return sync(id);
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

  return async function receiveProcessorWebhook(input: ProcessorWebhook): Promise<Result<{ received: true; duplicate: boolean }, ReceiveWebhookError>> {
    const webhooks = deps.processors.inboundWebhooks(input.processor);
    if (webhooks === null) throw new Error(`no inbound webhooks are registered for the processor ${input.processor}`);
    const processorName = webhooks.processor;
    let projectId = input.projectId;
    if (projectId === null) {
      const hints = webhooks.hints(input.rawBody);
      if (hints === null) return err('invalid_webhook_signature');
      projectId = hints.projectId;
      if ((projectId === null || !isUuid(projectId)) && hints.customerId !== null) {
        projectId = (await deps.customers.findByProcessorId(processorName, hints.customerId))?.projectId ?? null;
      }
    }
    if (projectId === null || !isUuid(projectId)) return err('webhook_project_unknown');
    const connection = await deps.connections.get(projectId);
    if (connection === null || connection.processor !== processorName || connection.webhookSecret === null) return err('webhook_project_unknown');

    const verified = webhooks.verify(input.rawBody, webhooks.signature(input.headers), connection.webhookSecret, deps.clock.now());
    if (!verified.ok) return err('invalid_webhook_signature');
    const event = verified.value;
    if (event.projectId !== null && event.projectId !== projectId && event.subject.kind !== 'ignored') {
      // Signed by this project's secret but naming another project: apply it to neither.
      deps.logger.warn({ projectId, eventProject: event.projectId, eventId: event.id }, 'billing: webhook names another project');
      return ok({ received: true, duplicate: false });
    }
    const receivedAt = deps.clock.now();
    const claimed = await deps.processorEvents.claim({ processor: processorName, eventId: event.id, projectId, type: event.type, receivedAt });
    if (!claimed) return ok({ received: true, duplicate: true });
    const processor = deps.processors.forConnection(connection);
    let applied: ProcessorResult<void>;
    try {
      applied = await apply(projectId, processor, event);
    } catch (e) {
      await deps.processorEvents.unclaim(processorName, event.id);
      throw e;
    }
    if (!applied.ok) {
      await deps.processorEvents.unclaim(processorName, event.id);
      return refuseFailure(applied.failure);
    }
    return ok({ received: true, duplicate: false });
  };
}
