import { isUuid } from '../../domain/ids';
import { TEST_EVENT_TYPE } from '../../domain/webhooks/endpoint';
import type { WebhookDeps } from './deps';
import { deliveryView, type DeliveryView } from './views';
import { err, ok, type Result } from '../../domain/result';
import type { EndpointNotFound, UnsendableDelivery } from './errors';
import { findEndpoint } from './manage-endpoints';
import { WEBHOOK_DELIVERY_TOPIC } from './ports';
import type { WebhookDelivery } from './webhook.store';

export const DELIVERY_LIST_MAX = 500;
/** A replay resends at most this many deliveries at once (run it again for the rest). */
export const REPLAY_MAX = 1000;

/** An endpoint's deliveries, newest first, each with every attempt (time, status, duration, answer or error). */
export function makeListDeliveries(deps: Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'projects'>) {
  return async (projectId: string, endpointId: string, filter: { limit?: number } = {}): Promise<Result<DeliveryView[], EndpointNotFound>> => {
    const found = await findEndpoint(deps, projectId, endpointId);
    if (!found.ok) return found;
    const limit = Math.min(Math.max(Math.trunc(filter.limit ?? 20), 1), DELIVERY_LIST_MAX);
    return ok((await deps.deliveries.listForEndpoint(projectId, endpointId, { limit })).map(deliveryView));
  };
}

export interface ResendResult {
  deliveryId: string;
  /** False when the delivery was still being retried: its pending attempt stands for the resend. */
  queued: boolean;
}

type ResendDeps = Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'projects' | 'outbox' | 'uow' | 'clock'>;

/**
 * Sends a delivery again: pending once more, with a new outbox message (a fresh retry schedule),
 * the same event id and payload. A delivery still being retried keeps its message (the dedupe key
 * is the delivery id). Not for test deliveries (send a new test) nor disabled endpoints.
 */
async function reopen(deps: ResendDeps, delivery: WebhookDelivery): Promise<boolean> {
  return deps.uow.transaction(async () => {
    const wasPending = delivery.status === 'pending';
    if (!(await deps.deliveries.reopen(delivery.projectId, delivery.id, deps.clock.now()))) return false;
    await deps.outbox.enqueue(WEBHOOK_DELIVERY_TOPIC, { deliveryId: delivery.id }, { subject: delivery.endpointId, dedupeKey: delivery.id });
    return !wasPending;
  });
}

/** A delivery of an event (not a test) to an enabled endpoint of the project, for a resend or a retry. */
async function sendableDelivery(
  deps: Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'projects'>,
  projectId: string,
  deliveryId: string,
): Promise<Result<WebhookDelivery, UnsendableDelivery>> {
  const project = isUuid(projectId) ? await deps.projects.findById(projectId) : null;
  if (project === null) return err('project_not_found');
  const delivery = isUuid(deliveryId) ? await deps.deliveries.get(projectId, deliveryId) : null;
  if (delivery === null || delivery.eventType === TEST_EVENT_TYPE) return err('webhook_delivery_not_found');
  const endpoint = await deps.endpoints.get(projectId, delivery.endpointId);
  if (endpoint === null) return err('webhook_delivery_not_found');
  if (!endpoint.enabled) return err('webhook_endpoint_disabled');
  return ok(delivery);
}

export function makeResendDelivery(deps: ResendDeps) {
  return async (projectId: string, deliveryId: string): Promise<Result<ResendResult, UnsendableDelivery>> => {
    const found = await sendableDelivery(deps, projectId, deliveryId);
    if (!found.ok) return found;
    const queued = await reopen(deps, found.value);
    return ok({ deliveryId, queued });
  };
}

export type RetryNowError = UnsendableDelivery | 'webhook_delivery_not_waiting';

export interface RetryNowResult {
  deliveryId: string;
  /** When its next attempt was due before this. */
  wasDueAt: Date;
}

/**
 * "Retry now": a delivery waiting for its next attempt (the last one failed) gets that attempt
 * now instead of at its time on the schedule; the schedule goes on from there. Refused for a
 * delivery that is not waiting (being sent, succeeded or failed: resend that one instead).
 */
export function makeRetryDeliveryNow(deps: Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'projects' | 'outbox'>) {
  return async (projectId: string, deliveryId: string): Promise<Result<RetryNowResult, RetryNowError>> => {
    const found = await sendableDelivery(deps, projectId, deliveryId);
    if (!found.ok) return found;
    if (found.value.status !== 'pending') return err('webhook_delivery_not_waiting');
    const wasDueAt = await deps.outbox.runNow(WEBHOOK_DELIVERY_TOPIC, deliveryId);
    if (wasDueAt === null) return err('webhook_delivery_not_waiting');
    return ok({ deliveryId, wasDueAt });
  };
}

export interface ReplayResult {
  resent: number;
  /** The deliveries queued again, oldest first. */
  deliveryIds: string[];
}

export type ReplayError = 'invalid_replay_since' | EndpointNotFound | 'webhook_endpoint_disabled';

/** Resends every failed delivery of an endpoint created since `since` (at most 1000 per call), oldest first. */
export function makeReplayFailed(deps: ResendDeps) {
  return async (projectId: string, endpointId: string, since: Date): Promise<Result<ReplayResult, ReplayError>> => {
    if (!(since instanceof Date) || Number.isNaN(since.getTime()) || since.getTime() > deps.clock.now().getTime()) return err('invalid_replay_since');
    const found = await findEndpoint(deps, projectId, endpointId);
    if (!found.ok) return found;
    if (!found.value.enabled) return err('webhook_endpoint_disabled');
    const failed = (await deps.deliveries.listFailed(projectId, endpointId, since, REPLAY_MAX)).filter((d) => d.eventType !== TEST_EVENT_TYPE);
    const deliveryIds: string[] = [];
    for (const delivery of failed) if (await reopen(deps, delivery)) deliveryIds.push(delivery.id);
    return ok({ resent: deliveryIds.length, deliveryIds });
  };
}
