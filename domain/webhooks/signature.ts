/**
 * The signature of a webhook delivery (spec, Authentication): `x-service-signature: v1=<hex
 * HMAC-SHA256 of "<timestamp>.<raw body>">`, keyed with the endpoint's signing secret (the whole
 * `whsec_...` string, as UTF-8 bytes), and `x-service-timestamp: <Unix time in milliseconds>`.
 * The HMAC itself is computed by an adapter (the domain has no crypto); the recipe lives here.
 */

export const SIGNATURE_HEADER = 'x-service-signature';
export const TIMESTAMP_HEADER = 'x-service-timestamp';
/** The event id, the same on every attempt and resend of one event: receivers de-duplicate on it. */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_USER_AGENT = 'Tollgate-Webhooks/1';
export const SIGNATURE_SCHEME = 'v1';

/** What is signed: `<timestamp ms>.<raw body>`. */
export const signedContent = (timestampMs: number, body: string): string => `${timestampMs}.${body}`;

/** The header value for a hex HMAC: `v1=<hex>`. */
export const signatureValue = (hexMac: string): string => `${SIGNATURE_SCHEME}=${hexMac}`;

/** Every header of one attempt, signed afresh with the attempt's own timestamp. */
export function deliveryHeaders(input: { eventId: string; timestampMs: number; signature: string }): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    [WEBHOOK_ID_HEADER]: input.eventId,
    [TIMESTAMP_HEADER]: String(input.timestampMs),
    [SIGNATURE_HEADER]: input.signature,
  };
}

/** The secret's readable prefix. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** What lists show of a secret: its prefix and first 4 characters after it (`whsec_Ab3d`). */
export const secretDisplayPrefix = (secret: string): string => secret.slice(0, WEBHOOK_SECRET_PREFIX.length + 4);

/** The top-level fields of an event body, in the order they are sent. */
const FIELD_ORDER = ['id', 'type', 'created', 'projectId', 'organizationId', 'userId', 'subscriptionId', 'quantity', 'amount', 'currency', 'data'];

/**
 * The body of a delivery: the event's fields in their documented order (a stored payload may come
 * back from the database with its keys in another order), then any other field.
 */
export function eventBody(payload: Record<string, unknown>): string {
  const ordered: Record<string, unknown> = {};
  for (const key of FIELD_ORDER) if (key in payload) ordered[key] = payload[key];
  for (const [key, value] of Object.entries(payload)) if (!(key in ordered)) ordered[key] = value;
  return JSON.stringify(ordered);
}
