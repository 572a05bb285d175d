import { selects } from '../../domain/webhooks/endpoint';
import type { BillingEvent, EventPublisher } from '../billing/billing.store';
import type { WebhookDeps } from './deps';
import { WEBHOOK_DELIVERY_TOPIC } from './ports';

/**
 * Billing's event publisher with the fan-out to project endpoints: when the event is new (not a
 * duplicate of one recorded before), one delivery per enabled endpoint of the project that selects
 * its type, and one outbox message per delivery. All of it in the caller's transaction, with the
 * state change that caused the event: an event is never recorded without its deliveries, nor
 * delivered for a change that rolled back.
 */
export class WebhookFanOut implements EventPublisher {
  constructor(
    private readonly inner: EventPublisher,
    private readonly deps: Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'outbox' | 'uow' | 'crypto' | 'traceparent'>,
  ) {}

  publish(event: BillingEvent): Promise<boolean> {
    return this.deps.uow.transaction(async () => {
      if (!(await this.inner.publish(event))) return false;
      const endpoints = await this.deps.endpoints.subscribedTo(event.projectId, event.type);
      for (const endpoint of endpoints) await this.fanOut(event, endpoint.id);
      return true;
    });
  }

  private async fanOut(event: BillingEvent, endpointId: string): Promise<void> {
    const id = this.deps.crypto.uuid();
    await this.deps.deliveries.insert({
      id,
      projectId: event.projectId,
      endpointId,
      eventId: event.id,
      eventType: event.type,
      payload: event.payload,
      status: 'pending',
      attemptCount: 0,
      lastStatusCode: null,
      createdAt: event.createdAt,
      completedAt: null,
      nextAttemptAt: event.createdAt,
    });
    const traceparent = this.deps.traceparent?.() ?? null;
    await this.deps.outbox.enqueue(WEBHOOK_DELIVERY_TOPIC, traceparent ? { deliveryId: id, traceparent } : { deliveryId: id }, {
      subject: endpointId,
      dedupeKey: id,
    });
  }
}

/** Whether an endpoint's selection takes an event type (re-exported for the store's tests). */
export { selects };
