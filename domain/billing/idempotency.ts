/**
 * `Idempotency-Key` on billing POSTs (issue: "the same key and body return the stored answer for 24
 * hours; the same key with another body answers 422"), as Stripe's idempotent requests work
 * (https://docs.stripe.com/api/idempotent_requests): "Idempotency keys can be up to 255 characters
 * long"; keys are removed "after they're at least 24 hours old, and a new request is generated if a
 * key is reused after the original has been pruned"; "The idempotency layer compares incoming
 * parameters to those of the original request and errors unless they're the same"; a request that
 * "conflicted with another that was executing concurrently" is refused without storing anything.
 *
 * Two requests are "the same" when their fingerprints are equal: the method, the path and the body
 * in canonical JSON (RFC 8785 style: object members sorted by key in UTF-16 code unit order, no
 * whitespace, undefined members dropped), so key order and spacing in the client's JSON do not
 * matter but every value does. The application hashes the fingerprint with its crypto port and keys
 * the stored answer by (project, caller, key).
 */

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue | undefined };

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** 1 to 255 printable ASCII characters, no spaces (a UUID fits; so does Stripe's own key format). */
export const isIdempotencyKey = (key: string): boolean => /^[\x21-\x7e]{1,255}$/.test(key);

/**
 * Canonical JSON: sorted object keys at every depth, arrays in order, strings and numbers as
 * `JSON.stringify` writes them (so 1.0 and 1 are equal, -0 is 0). Non-finite numbers, which JSON
 * cannot carry, are refused rather than silently written as null.
 */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError('JSON cannot carry a non-finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${(value as readonly JsonValue[]).map(canonicalJson).join(',')}]`;
  const object = value as { readonly [key: string]: JsonValue | undefined };
  const members = Object.keys(object)
    .filter((key) => object[key] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key] as JsonValue)}`);
  return `{${members.join(',')}}`;
}

/** What identifies a request for idempotency: method (upper-cased), path and canonical body. */
export function requestFingerprint(request: { method: string; path: string; body: JsonValue | undefined }): string {
  return canonicalJson({ method: request.method.toUpperCase(), path: request.path, body: request.body ?? null });
}

export interface StoredIdempotentRequest {
  fingerprint: string;
  createdAt: Date;
  /** Null while the first request is still running. */
  completedAt: Date | null;
}

export type IdempotencyDecision = 'new' | 'replay' | 'mismatch' | 'in_progress';

/**
 * What to do with a request carrying a key: `new` (nothing stored, or stored 24 hours ago or more:
 * run it), `replay` (same request, answered within 24 hours: return the stored answer), `mismatch`
 * (same key, another request: 422), or `in_progress` (same request still running: 409, retry later).
 */
export function idempotencyDecision(
  stored: StoredIdempotentRequest | null,
  fingerprint: string,
  now: Date,
): IdempotencyDecision {
  if (stored === null || now.getTime() - stored.createdAt.getTime() >= IDEMPOTENCY_TTL_SECONDS * 1000) return 'new';
  if (stored.fingerprint !== fingerprint) return 'mismatch';
  return stored.completedAt === null ? 'in_progress' : 'replay';
}
