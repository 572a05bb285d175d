import { TEST_EVENT_TYPE } from '../../domain/webhooks/endpoint';
import type { WebhookDeps } from './deps';
import { attemptRecord, sendSigned } from './sign-delivery';
import { err, ok, type Result } from '../../domain/result';
import type { EndpointNotFound } from './errors';
import { findEndpoint } from './manage-endpoints';

export interface TestResult {
  /** The receiver answered 200 (the spec's Test action). */
  ok: boolean;
  /** Its status, or null when nothing answered (refused address, timeout, network error). */
  status: number | null;
  durationMs: number;
  error?: string;
  /** The test delivery, as the delivery log shows it. */
  deliveryId: string;
  eventId: string;
}

/**
 * The Test action: a signed `{"type":"test", id, created, projectId, data:{}}` sent to one
 * endpoint now (a disabled one too: checking it before enabling it again is the point), answered
 * with what the receiver said. It goes through the same guard and signature as every delivery and
 * is recorded in the endpoint's delivery log; it is not retried and does not count toward the
 * endpoint's failing streak.
 */
export function makeSendTest(deps: Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'projects' | 'signer' | 'transport' | 'clock' | 'crypto' | 'settings'>) {
  return async (projectId: string, endpointId: string): Promise<Result<TestResult, EndpointNotFound>> => {
    const found = await findEndpoint(deps, projectId, endpointId);
    if (!found.ok) return found;
    const endpoint = found.value;
    const now = deps.clock.now();
    const secrets = await deps.endpoints.secrets(endpoint.id, now);
    if (secrets === null) return err('webhook_endpoint_not_found');
    const eventId = deps.crypto.uuid();
    const payload = { id: eventId, type: TEST_EVENT_TYPE, created: now.toISOString(), projectId, data: {} };
    const deliveryId = deps.crypto.uuid();
    await deps.deliveries.insert({
      id: deliveryId,
      projectId,
      endpointId: endpoint.id,
      eventId: null,
      eventType: TEST_EVENT_TYPE,
      payload,
      status: 'pending',
      attemptCount: 0,
      lastStatusCode: null,
      createdAt: now,
      completedAt: null,
      nextAttemptAt: null,
    });
    const attempt = await deps.deliveries.startAttempt(deliveryId, now, null);
    const response = await sendSigned(deps, { url: endpoint.url, eventId, payload, secrets });
    const record = attemptRecord(response);
    const status = response.kind === 'answered' ? response.status : null;
    const succeeded = status !== null && status >= 200 && status < 300;
    await deps.deliveries.finishAttempts([
      { result: { deliveryId, attempt, ...record, status: succeeded ? 'succeeded' : 'failed', completedAt: deps.clock.now(), nextAttemptAt: null } },
    ]);
    return ok({
      ok: status === 200,
      status,
      durationMs: record.durationMs,
      ...(record.error !== null ? { error: record.error } : {}),
      deliveryId,
      eventId,
    });
  };
}
