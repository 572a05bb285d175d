/**
 * Receiving Tollgate's webhooks (SDK: `import { verifyWebhook } from 'tollgate/sdk'`).
 *
 * Every delivery carries `x-service-timestamp` (Unix time in milliseconds) and
 * `x-service-signature: v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the endpoint's
 * signing secret>`, plus `webhook-id` (the event id, the same on every retry of it). A receiver
 * refuses a missing signature or timestamp and an event older than 5 minutes (answer 400) and a
 * signature that does not match (answer 401), compares in constant time, and only then trusts the
 * body. Uses Web Crypto only (Node 20+, Deno, Bun, browsers' workers, edge runtimes): no server
 * code, no Node built-ins.
 */

export const WEBHOOK_SIGNATURE_HEADER = 'x-service-signature';
export const WEBHOOK_TIMESTAMP_HEADER = 'x-service-timestamp';
export const WEBHOOK_ID_HEADER = 'webhook-id';
/** The spec's receiver rule: events older than 5 minutes are refused. */
export const WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000;

/** Why a delivery was refused, and the status a receiver answers for it. */
export type WebhookRefusal =
  | { reason: 'missing_signature' | 'missing_timestamp' | 'invalid_timestamp' | 'timestamp_out_of_tolerance'; status: 400 }
  | { reason: 'invalid_signature'; status: 401 }
  | { reason: 'invalid_payload'; status: 400 };

export class WebhookVerificationError extends Error {
  readonly reason: WebhookRefusal['reason'];
  /** What the receiver answers: 400 (headers, age, body) or 401 (signature). */
  readonly status: 400 | 401;
  constructor(refusal: WebhookRefusal) {
    super(`Webhook refused: ${refusal.reason.replace(/_/g, ' ')}`);
    this.name = 'WebhookVerificationError';
    this.reason = refusal.reason;
    this.status = refusal.status;
  }
}

/** An event as Tollgate sends it (the spec's fields at the top level). */
export interface WebhookEvent {
  id: string;
  type:
    | 'subscription.created'
    | 'subscription.updated'
    | 'subscription.canceled'
    | 'invoice.paid'
    | 'payment.failed'
    | 'invoice.refunded'
    | 'organization.created'
    | 'organization.updated'
    | 'organization.deleted'
    | 'organization.member.added'
    | 'organization.member.updated'
    | 'organization.member.removed'
    | 'organization.invitation.created'
    | 'organization.invitation.accepted'
    | 'organization.invitation.revoked'
    | 'usage.threshold'
    | 'credits.low'
    | 'credits.expired'
    | 'test';
  created: string;
  projectId: string;
  userId?: string | null;
  subscriptionId?: string | null;
  /** The organization of an organization.* event. */
  organizationId?: string;
  amount?: number;
  currency?: string;
  data: Record<string, unknown> | null;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

const encoder = new TextEncoder();

function toBytes(payload: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof payload === 'string') return encoder.encode(payload);
  return payload instanceof Uint8Array ? payload : new Uint8Array(payload);
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The signature header's value for `timestamp` and `payload`: `v1=<hex>`. */
export async function signWebhook(secret: string, timestamp: number | string, payload: string | Uint8Array | ArrayBuffer): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const prefix = encoder.encode(`${timestamp}.`);
  const body = toBytes(payload);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  return `v1=${hex(await crypto.subtle.sign('HMAC', key, signed))}`;
}

/** Equal strings in time that depends on their length only. */
function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  const n = Math.max(x.length, y.length);
  let diff = x.length ^ y.length;
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/**
 * Checks a delivery and answers its event; throws `WebhookVerificationError` (with the status to
 * answer) otherwise. `payload` must be the raw request body, byte for byte (not re-serialized JSON).
 * A signature header may carry several space-separated `v1=` values (during a secret roll); one
 * match is enough.
 */
export async function verifyWebhook(options: {
  payload: string | Uint8Array | ArrayBuffer;
  headers: HeaderBag;
  secret: string;
  toleranceMs?: number;
  /** The receiver's time in milliseconds (tests); `Date.now()` by default. */
  now?: number;
}): Promise<WebhookEvent> {
  const signature = header(options.headers, WEBHOOK_SIGNATURE_HEADER)?.trim();
  const timestamp = header(options.headers, WEBHOOK_TIMESTAMP_HEADER)?.trim();
  if (!signature) throw new WebhookVerificationError({ reason: 'missing_signature', status: 400 });
  if (!timestamp) throw new WebhookVerificationError({ reason: 'missing_timestamp', status: 400 });
  if (!/^\d{1,16}$/.test(timestamp)) throw new WebhookVerificationError({ reason: 'invalid_timestamp', status: 400 });
  const tolerance = options.toleranceMs ?? WEBHOOK_TOLERANCE_MS;
  const age = (options.now ?? Date.now()) - Number(timestamp);
  if (Math.abs(age) > tolerance) throw new WebhookVerificationError({ reason: 'timestamp_out_of_tolerance', status: 400 });

  const expected = await signWebhook(options.secret, timestamp, options.payload);
  const candidates = signature.split(/\s+/).filter((s) => s.startsWith('v1='));
  let matched = false;
  for (const candidate of candidates) matched = constantTimeEqual(candidate, expected) || matched;
  if (!matched) throw new WebhookVerificationError({ reason: 'invalid_signature', status: 401 });

  const text = typeof options.payload === 'string' ? options.payload : new TextDecoder().decode(toBytes(options.payload));
  try {
    const event = JSON.parse(text) as WebhookEvent;
    if (event === null || typeof event !== 'object' || typeof event.type !== 'string') throw new Error('not an event');
    return event;
  } catch {
    throw new WebhookVerificationError({ reason: 'invalid_payload', status: 400 });
  }
}
