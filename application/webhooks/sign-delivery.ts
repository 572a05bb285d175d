import { deliveryHeaders, eventBody, signatureValue, signedContent } from '../../domain/webhooks/signature';
import type { WebhookDeps } from './deps';
import type { WebhookResponse } from './ports';
import type { SigningSecrets } from './webhook.store';

/**
 * How Tollgate signs what it sends: the endpoint's signing secrets (a new one, how long the one
 * before a roll keeps signing) and one signed attempt on the wire, with what the log records of it.
 */

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
  input: { url: string; eventId: string; payload: Record<string, unknown>; secrets: SigningSecrets; signal?: AbortSignal; traceparent?: string },
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
    ...(input.traceparent ? { traceparent: input.traceparent } : {}),
  });
}

/** What the delivery log records of a response. */
export function attemptRecord(response: WebhookResponse): {
  statusCode: number | null;
  responseExcerpt: string | null;
  error: string | null;
  durationMs: number;
} {
  switch (response.kind) {
    case 'answered':
      return { statusCode: response.status, responseExcerpt: response.excerpt, error: null, durationMs: response.durationMs };
    case 'refused':
      return { statusCode: null, responseExcerpt: null, error: `not sent: ${response.detail}`, durationMs: response.durationMs };
    case 'failed':
      return { statusCode: null, responseExcerpt: null, error: response.error, durationMs: response.durationMs };
  }
}
