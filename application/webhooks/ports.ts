import { defineTopic, retrySchedule } from '../ports/outbox';
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../domain/webhooks/delivery';

/** HMAC-SHA256 of the signed content (domain/webhooks/signature.ts), hex. */
export interface WebhookSigner {
  hmacHex(secret: string, content: string): string;
}

export type DestinationRefusal = 'invalid_webhook_url' | 'webhook_url_not_https' | 'webhook_url_private' | 'webhook_url_unresolvable';

/** Whether a URL may be delivered to: every address its host resolves to is checked. */
export type DestinationCheck =
  | { ok: true; addresses: string[] }
  | { ok: false; error: DestinationRefusal /** For people: which address and why. */; detail: string };

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
  /**
   * The W3C `traceparent` of what caused the delivery (the request that published the event): the
   * request sent carries a child of it, in the same trace; without it, a new trace.
   */
  traceparent?: string;
}

/** How one attempt ended: an answer (any status), a refused destination, or a network failure. */
export type WebhookResponse =
  | { kind: 'answered'; status: number; excerpt: string; durationMs: number }
  | { kind: 'refused'; error: DestinationRefusal; detail: string; durationMs: number }
  | { kind: 'failed'; error: string; durationMs: number };

/**
 * The HTTP transport with the address guard: it resolves the host, refuses private addresses
 * unless allowed, and connects to the address it checked (no second lookup an attacker's DNS could
 * answer differently). Redirects are not followed.
 */
export interface WebhookTransport {
  check(url: string, allowPrivate: boolean): Promise<DestinationCheck>;
  send(request: WebhookRequest): Promise<WebhookResponse>;
}

export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: private addresses and http allowed (development, tests). */
  allowPrivateUrls: boolean;
  /** WEBHOOK_TIMEOUT_MS: one attempt's limit, connection to the answer's first 1 KB. */
  timeoutMs: number;
}

/** What the outbox carries for one attempt series of a delivery: its id (the payload is in webhook_deliveries). */
export interface WebhookDeliveryMessage {
  deliveryId: string;
  /** The W3C `traceparent` of the request that published the event, when a request did. */
  traceparent?: string;
}

export const WEBHOOKS_QUEUE = 'webhooks';

/** One message per delivery (and per resend), subject = endpoint id, retried on the webhook schedule. */
export const WEBHOOK_DELIVERY_TOPIC = defineTopic<WebhookDeliveryMessage>({
  name: 'webhooks.deliver',
  queue: WEBHOOKS_QUEUE,
  retry: retrySchedule(WEBHOOK_RETRY_DELAYS_SECONDS),
});
