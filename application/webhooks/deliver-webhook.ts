import { answerOutcome, DISABLED_FAILING, DISABLED_GONE, failingTooLong, nextAttemptDelaySeconds } from '../../domain/webhooks/delivery';
import type { DeliveryContext } from '../ports/outbox';
import { attemptRecord, sendSigned, type WebhookDeps } from './deps';
import type { WebhookDeliveryMessage } from './ports';

/** A failed attempt: thrown so that the job layer schedules the next one on the webhook schedule. */
export class DeliveryAttemptFailed extends Error {}

type DeliverDeps = Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'signer' | 'transport' | 'clock' | 'logger' | 'settings'>;

/**
 * One attempt of a delivery, as the outbox's `webhooks.deliver` handler. The job layer gives each
 * scheduled attempt to one worker of one process; the attempt is recorded before it is sent, keyed
 * by (message, attempt), so the same attempt is never sent twice.
 *
 * - The delivery or its endpoint is gone (deleted), or the delivery is no longer pending: nothing.
 * - The endpoint is disabled: not sent; the delivery fails (a resend or replay after enabling it
 *   sends it).
 * - Otherwise the body is signed now and POSTed (timestamp and signature fresh on every attempt,
 *   `webhook-id` the event's id on all of them). 2xx: succeeded, the endpoint's failing streak
 *   ends. 410: the endpoint is disabled and the delivery fails for good. Anything else (another
 *   status, a timeout, a reset, a refused address) throws, and the outbox retries on the schedule;
 *   after the last attempt the delivery is failed. An endpoint failing for 5 days without a success
 *   is disabled.
 *
 * Two statements per attempt: one records its start and reads the delivery, the endpoint and its
 * secrets; one records its end with the endpoint's streak.
 *
 * Delivery is at least once: a worker that dies after the receiver answered and before the answer
 * was recorded leaves the attempt open, and the next attempt sends the event again.
 */
export function makeDeliverWebhook(deps: DeliverDeps) {
  return async function deliverWebhook(message: WebhookDeliveryMessage, context: DeliveryContext): Promise<void> {
    const startedAt = deps.clock.now();
    const opened = await deps.deliveries.beginAttempt(message.deliveryId, startedAt, { messageId: context.messageId, messageAttempt: context.attempt });
    if (opened === null) return;
    const { delivery, endpoint, attempt, secrets } = opened;

    const finish = (
      result: ReturnType<typeof attemptRecord>,
      status: 'pending' | 'succeeded' | 'failed',
      nextAttemptAt: Date | null,
      streak?: 'succeeded' | 'failed',
      now: Date = deps.clock.now(),
    ) =>
      deps.deliveries.finishAttempt(
        { deliveryId: delivery.id, attempt, ...result, status, completedAt: status === 'pending' ? null : now, nextAttemptAt },
        streak ? { endpointId: endpoint.id, outcome: streak, at: now } : undefined,
      );

    if (secrets === null) {
      const why = endpoint.disabledReason ? `: ${endpoint.disabledReason}` : '';
      await finish({ statusCode: null, responseExcerpt: null, error: `not sent: the endpoint is disabled${why}`, durationMs: 0 }, 'failed', null);
      return;
    }

    const eventId = delivery.eventId ?? String(delivery.payload.id ?? delivery.id);
    const response = await sendSigned(deps, { url: endpoint.url, eventId, payload: delivery.payload, secrets, signal: context.signal });
    const record = attemptRecord(response);

    if (response.kind === 'answered' && answerOutcome(response.status) === 'succeeded') {
      await finish(record, 'succeeded', null, 'succeeded');
      return;
    }
    if (response.kind === 'answered' && answerOutcome(response.status) === 'gone') {
      await finish(record, 'failed', null);
      if (await deps.endpoints.disable(endpoint.id, DISABLED_GONE, deps.clock.now())) {
        deps.logger.warn({ projectId: endpoint.projectId, endpointId: endpoint.id, url: endpoint.url }, 'webhook endpoint disabled: it answered 410 Gone');
      }
      return;
    }

    const now = deps.clock.now();
    const delay = nextAttemptDelaySeconds(context.attempt);
    const { failingSince } = await finish(record, delay === null ? 'failed' : 'pending', delay === null ? null : new Date(now.getTime() + delay * 1000), 'failed', now);
    if (failingTooLong(failingSince, now) && (await deps.endpoints.disable(endpoint.id, DISABLED_FAILING, now))) {
      deps.logger.warn(
        { projectId: endpoint.projectId, endpointId: endpoint.id, url: endpoint.url, failingSince },
        'webhook endpoint disabled: failing for 5 days without a successful delivery',
      );
    }
    throw new DeliveryAttemptFailed(record.error ?? `answered ${record.statusCode}`);
  };
}
