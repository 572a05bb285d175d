import { TEST_EVENT_TYPE } from '../../domain/webhooks/endpoint';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './webhook.store';

/** What the webhook use cases answer about endpoints and deliveries, and how each is made from the stored record. */

/** An endpoint as operators see it: the stored record, which holds no secret, with its types as strings. */
export type EndpointView = Omit<WebhookEndpoint, 'eventTypes'> & {
  /** The selected types; empty: every type. */
  eventTypes: string[];
};

export const endpointView = (e: WebhookEndpoint): EndpointView => ({
  id: e.id,
  projectId: e.projectId,
  url: e.url,
  eventTypes: [...e.eventTypes],
  description: e.description,
  enabled: e.enabled,
  disabledReason: e.disabledReason,
  secretPrefix: e.secretPrefix,
  failingSince: e.failingSince,
  lastSuccessAt: e.lastSuccessAt,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
});

export interface DeliveryView {
  id: string;
  endpointId: string;
  eventId: string | null;
  eventType: string;
  status: WebhookDelivery['status'];
  attemptCount: number;
  lastStatusCode: number | null;
  createdAt: Date;
  completedAt: Date | null;
  nextAttemptAt: Date | null;
  payload: Record<string, unknown>;
  attempts: WebhookAttempt[];
}

export const deliveryView = (d: WebhookDelivery & { attempts: WebhookAttempt[] }): DeliveryView => ({
  id: d.id,
  endpointId: d.endpointId,
  // A test delivery has no billing event; its payload carries the id it was sent with (the Test action reports it).
  eventId: d.eventId ?? (d.eventType === TEST_EVENT_TYPE && typeof d.payload.id === 'string' ? d.payload.id : null),
  eventType: d.eventType,
  status: d.status,
  attemptCount: d.attemptCount,
  lastStatusCode: d.lastStatusCode,
  createdAt: d.createdAt,
  completedAt: d.completedAt,
  nextAttemptAt: d.nextAttemptAt,
  payload: d.payload,
  attempts: d.attempts,
});
