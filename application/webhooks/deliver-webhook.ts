import { answerOutcome, DISABLED_FAILING, DISABLED_GONE, failingTooLong, nextAttemptDelaySeconds } from '../../domain/webhooks/delivery';
import type { BatchItem, BatchOutcome } from '../ports/outbox';
import type { WebhookDeps } from './deps';
import { attemptRecord, sendSigned } from './sign-delivery';
import type { WebhookDeliveryMessage } from './ports';
import type { FinishedAttempt, OpenedAttempt } from './webhook.store';

/** A failed attempt: thrown so that the job layer schedules the next one on the webhook schedule. */
export class DeliveryAttemptFailed extends Error {}

type DeliverDeps = Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'signer' | 'transport' | 'clock' | 'logger' | 'settings' | 'notifyDisabled'>;

/** How one attempt ended, before it is recorded. */
interface Ended {
  finished: FinishedAttempt | null;
  opened: OpenedAttempt | null;
  /** The endpoint answered 410 Gone: it is disabled once the attempt is recorded. */
  gone: boolean;
  /** The attempt failed and the outbox schedules the next one (or gives up after the last). */
  error: DeliveryAttemptFailed | null;
}

/**
 * The attempts of the deliveries the job layer fetched together, as the outbox's `webhooks.deliver`
 * batch handler. The job layer gives each scheduled attempt to one worker of one process; each
 * attempt is recorded before it is sent, keyed by (message, attempt), so the same attempt is never
 * sent twice. Each succeeds or fails on its own:
 *
 * - The delivery or its endpoint is gone (deleted), or the delivery is no longer pending: nothing.
 * - The endpoint is disabled: not sent; the delivery fails (a resend or replay after enabling it
 *   sends it).
 * - Otherwise the body is signed now and POSTed (timestamp and signature fresh on every attempt,
 *   `webhook-id` the event's id on all of them). 2xx: succeeded, the endpoint's failing streak
 *   ends. 410: the endpoint is disabled and the delivery fails for good. Anything else (another
 *   status, a timeout, a reset, a refused address) fails the attempt, and the outbox retries on
 *   the schedule; after the last attempt the delivery is failed. An endpoint failing for 5 days
 *   without a success is disabled. Whoever disables an endpoint mails the project's owners.
 *
 * Two statements for the whole batch: one records the start of every attempt and reads the
 * deliveries, their endpoints and secrets; the requests go out side by side; one records every end
 * with the endpoints' streaks.
 *
 * Delivery is at least once: a worker that dies after the receiver answered and before the answer
 * was recorded leaves the attempt open, and the next attempt sends the event again.
 */
export function makeDeliverWebhooks(deps: DeliverDeps) {
  return async function deliverWebhooks(items: Array<BatchItem<WebhookDeliveryMessage>>): Promise<BatchOutcome[]> {
    const startedAt = deps.clock.now();
    const opened = await deps.deliveries.beginAttempts(
      items.map(({ payload, context }) => ({ deliveryId: payload.deliveryId, source: { messageId: context.messageId, messageAttempt: context.attempt } })),
      startedAt,
    );
    const ended = await Promise.all(items.map((item, i) => attempt(deps, item, opened[i] ?? null)));
    const failingSince = await deps.deliveries.finishAttempts(ended.flatMap((e) => (e.finished ? [e.finished] : [])));

    const now = deps.clock.now();
    const disabled = new Set<string>();
    for (const { opened, gone, finished } of ended) {
      if (!opened || !finished || disabled.has(opened.endpoint.id)) continue;
      const { endpoint } = opened;
      if (gone) {
        disabled.add(endpoint.id);
        if (await deps.endpoints.disable(endpoint.id, DISABLED_GONE, now)) {
          deps.logger.warn({ projectId: endpoint.projectId, endpointId: endpoint.id, url: endpoint.url }, 'webhook endpoint disabled: it answered 410 Gone');
          await deps.notifyDisabled?.(endpoint, DISABLED_GONE, now);
        }
        continue;
      }
      const since = failingSince.get(endpoint.id) ?? null;
      if (finished.streak?.outcome === 'failed' && failingTooLong(since, now)) {
        disabled.add(endpoint.id);
        if (await deps.endpoints.disable(endpoint.id, DISABLED_FAILING, now)) {
          deps.logger.warn(
            { projectId: endpoint.projectId, endpointId: endpoint.id, url: endpoint.url, failingSince: since },
            'webhook endpoint disabled: failing for 5 days without a successful delivery',
          );
          await deps.notifyDisabled?.(endpoint, DISABLED_FAILING, now);
        }
      }
    }
    return ended.map((e) => e.error);
  };
}

/** One attempt on the wire (or not, for a disabled endpoint), and how to record it. */
async function attempt(deps: DeliverDeps, item: BatchItem<WebhookDeliveryMessage>, opened: OpenedAttempt | null): Promise<Ended> {
  if (opened === null) return { finished: null, opened, gone: false, error: null };
  const { delivery, endpoint, secrets } = opened;
  const finish = (
    result: ReturnType<typeof attemptRecord>,
    status: 'pending' | 'succeeded' | 'failed',
    nextAttemptAt: Date | null,
    streak: 'succeeded' | 'failed' | null,
    now: Date,
  ): FinishedAttempt => ({
    result: { deliveryId: delivery.id, attempt: opened.attempt, ...result, status, completedAt: status === 'pending' ? null : now, nextAttemptAt },
    ...(streak ? { streak: { endpointId: endpoint.id, outcome: streak, at: now } } : {}),
  });

  if (secrets === null) {
    const why = endpoint.disabledReason ? `: ${endpoint.disabledReason}` : '';
    const record = { statusCode: null, responseExcerpt: null, error: `not sent: the endpoint is disabled${why}`, durationMs: 0 };
    return { finished: finish(record, 'failed', null, null, deps.clock.now()), opened, gone: false, error: null };
  }

  const eventId = delivery.eventId ?? String(delivery.payload.id ?? delivery.id);
  const response = await sendSigned(deps, {
    url: endpoint.url,
    eventId,
    payload: delivery.payload,
    secrets,
    signal: item.context.signal,
    ...(item.payload.traceparent ? { traceparent: item.payload.traceparent } : {}),
  });
  // This endpoint's attempt is over, whatever the rest of the batch still waits for.
  item.context.ended?.();
  const record = attemptRecord(response);
  const now = deps.clock.now();
  const outcome = response.kind === 'answered' ? answerOutcome(response.status) : 'failed';
  if (outcome === 'succeeded') return { finished: finish(record, 'succeeded', null, 'succeeded', now), opened, gone: false, error: null };
  if (outcome === 'gone') return { finished: finish(record, 'failed', null, null, now), opened, gone: true, error: null };
  const delay = nextAttemptDelaySeconds(item.context.attempt);
  return {
    finished: finish(record, delay === null ? 'failed' : 'pending', delay === null ? null : new Date(now.getTime() + delay * 1000), 'failed', now),
    opened,
    gone: false,
    error: new DeliveryAttemptFailed(record.error ?? `answered ${record.statusCode}`),
  };
}
