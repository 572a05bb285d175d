import { TEST_EVENT_TYPE } from '../../domain/webhooks/endpoint';
import { deliveryHeaders, eventBody, signatureValue, signedContent } from '../../domain/webhooks/signature';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Logger } from '../ports/logger';
import type { Outbox, OutboxRetryNow } from '../ports/outbox';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../projects/project.store';
import type { NotifyEndpointDisabled } from './endpoint-disabled-mail';
import type { SigningSecrets, WebhookAttempt, WebhookDelivery, WebhookDeliveryStore, WebhookEndpoint, WebhookEndpointStore } from './webhook.store';
import type { WebhookResponse, WebhookSettings, WebhookSigner, WebhookTransport } from './ports';

/** Everything the webhook use cases may ask for; each takes the part it needs (`Pick`). */
export interface WebhookDeps {
  endpoints: WebhookEndpointStore;
  deliveries: WebhookDeliveryStore;
  outbox: Outbox & OutboxRetryNow;
  transport: WebhookTransport;
  signer: WebhookSigner;
  projects: Pick<ProjectStore, 'findById'>;
  uow: UnitOfWork;
  clock: Clock;
  crypto: Pick<TokenCrypto, 'uuid' | 'randomToken'>;
  logger: Logger;
  settings: WebhookSettings;
  /** Mails the project's owners when an endpoint is disabled; null where no mail can be sent. */
  notifyDisabled: NotifyEndpointDisabled | null;
}

/** An endpoint as operators see it (never its secret). */
export interface EndpointView {
  id: string;
  projectId: string;
  url: string;
  /** The selected types; empty: every type. */
  eventTypes: string[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  secretPrefix: string;
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

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

/** How long the secret before a roll keeps signing, beside the new one: receivers switch within a day. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3600 * 1000;

/** A new signing secret: `whsec_` and 32 random bytes, base64url (256 bits). */
export const newSecret = (deps: Pick<WebhookDeps, 'crypto'>): string => `whsec_${deps.crypto.randomToken(32)}`;

/**
 * One attempt on the wire: the body, signed now with every live secret (one `v1=` each, separated
 * by a space), to the endpoint's URL through the guarded transport.
 */
export async function sendSigned(
  deps: Pick<WebhookDeps, 'signer' | 'transport' | 'clock' | 'settings'>,
  input: { url: string; eventId: string; payload: Record<string, unknown>; secrets: SigningSecrets; signal?: AbortSignal },
): Promise<WebhookResponse> {
  const body = eventBody(input.payload);
  const timestampMs = deps.clock.now().getTime();
  const content = signedContent(timestampMs, body);
  const signature = [input.secrets.current, ...(input.secrets.previous ? [input.secrets.previous] : [])]
    .map((secret) => signatureValue(deps.signer.hmacHex(secret, content)))
    .join(' ');
  return deps.transport.send({
    url: input.url,
    body,
    headers: deliveryHeaders({ eventId: input.eventId, timestampMs, signature }),
    timeoutMs: deps.settings.timeoutMs,
    allowPrivate: deps.settings.allowPrivateUrls,
    ...(input.signal ? { signal: input.signal } : {}),
  });
}

/** What the delivery log records of a response. */
export function attemptRecord(response: WebhookResponse): { statusCode: number | null; responseExcerpt: string | null; error: string | null; durationMs: number } {
  switch (response.kind) {
    case 'answered':
      return { statusCode: response.status, responseExcerpt: response.excerpt, error: null, durationMs: response.durationMs };
    case 'refused':
      return { statusCode: null, responseExcerpt: null, error: `not sent: ${response.detail}`, durationMs: response.durationMs };
    case 'failed':
      return { statusCode: null, responseExcerpt: null, error: response.error, durationMs: response.durationMs };
  }
}
